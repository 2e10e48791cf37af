// From what detection saw on a port and what the NVD index matched, the findings a user reads.
import { parseCpe, unescapeCpeValue } from '../cpe/name'
import type { PortResult, ServiceInfo } from '../scanner/types'
import type { CpeCriterion, CveMatch } from '../nvd/types'
import type { Confidence, NewFinding } from '../store/results-types'

const EVIDENCE_MAX = 300

/** `cpe:… >= 6.2.0, < 6.2.9`: the criterion with its bounds, as a user can check it. */
export function describeCriterion (c: CpeCriterion): string {
  const bounds = [
    c.versionStartIncluding !== undefined ? `>= ${c.versionStartIncluding}` : null,
    c.versionStartExcluding !== undefined ? `> ${c.versionStartExcluding}` : null,
    c.versionEndIncluding !== undefined ? `<= ${c.versionEndIncluding}` : null,
    c.versionEndExcluding !== undefined ? `< ${c.versionEndExcluding}` : null
  ].filter((b) => b !== null)
  return bounds.length > 0 ? `${c.criteria} ${bounds.join(', ')}` : c.criteria
}

/**
 * The confidence tier: low when the banner gave no version (the product has had this CVE in some
 * version), medium when a distribution package may carry a backported fix or the CVE needs a
 * platform the scan cannot see, high for an exact upstream version.
 */
export function confidenceOf (service: ServiceInfo, match: CveMatch): { confidence: Confidence, note: string | null } {
  if (match.productOnly === true || service.version === undefined) {
    return { confidence: 'low', note: 'The banner shows the product but no version: this CVE affects some versions of it. Check the installed version.' }
  }
  if (service.distro !== undefined) {
    const pkg = service.extraInfo !== undefined ? ` (${service.extraInfo})` : ''
    return { confidence: 'medium', note: `The banner shows a ${service.distro} distribution package${pkg}: the distribution may have backported the fix without changing the upstream version. Check its security tracker.` }
  }
  if (match.confidence === 'platform') {
    return { confidence: 'medium', note: `Applies only when running on ${(match.requiresPlatform ?? []).join(' or ') || 'a specific platform'}, which a network scan cannot confirm.` }
  }
  return { confidence: 'high', note: null }
}

function evidenceOf (service: ServiceInfo): string {
  const text = service.banner ?? [service.product, service.version].filter(Boolean).join(' ')
  return text.length > EVIDENCE_MAX ? text.slice(0, EVIDENCE_MAX) + '…' : text
}

/** The vendor:product pairs a port's CPE names refer to. */
export function productsOf (service: ServiceInfo): { vendor: string, product: string }[] {
  const out: { vendor: string, product: string }[] = []
  for (const cpe of service.cpe) {
    const p = parseCpe(cpe)
    if (p) out.push({ vendor: unescapeCpeValue(p.vendor), product: unescapeCpeValue(p.product) })
  }
  return out
}

/** One finding per CVE for a port: several CPE names for one product (vmware and broadcom RabbitMQ) match once. */
export function findingsForPort (address: string, port: PortResult, matchesByCpe: Map<string, CveMatch[]>): NewFinding[] {
  const service = port.service
  if (!service) return []
  const byCve = new Map<string, NewFinding>()
  for (const [cpe, matches] of matchesByCpe) {
    for (const m of matches) {
      if (m.cve.rejected || byCve.has(m.cve.id)) continue
      const { confidence, note } = confidenceOf(service, m)
      byCve.set(m.cve.id, {
        address,
        port: port.port,
        cveId: m.cve.id,
        severity: m.cve.severity ?? 'unknown',
        cvss: m.cve.cvss,
        cvssVersion: m.cve.cvssVersion,
        cvssVector: m.cve.cvssVector,
        kev: m.cve.kev,
        description: m.cve.description,
        product: service.product ?? service.service,
        version: service.version ?? null,
        matchedCpe: cpe,
        criterion: describeCriterion(m.criterion),
        reason: m.reason,
        confidence,
        confidenceNote: note,
        evidence: evidenceOf(service),
        requiresPlatform: m.requiresPlatform ?? []
      })
    }
  }
  return [...byCve.values()]
}
