// Findings of vulnscan's own exposure checks, shaped like CVE findings so that they share the results store's
// lifecycle (new, fixed, reopened), filters, decisions and CSV: the check's `VULNSCAN-…` id stands where a CVE
// id stands, the severity is the check's own (no CVSS), `reason` says why that severity, `rule` what was checked,
// `evidence` what the server answered, and `remediation` what to do about it.
import { checkById } from '../scanner/checks/catalogue'
import type { PortExposure, ServiceInfo, TemplateHit } from '../domain/services'
import { confidenceFor } from '../domain/confidence'
import type { Verdict } from './service'
import { templateFindingId } from '../templates/index'

const TEMPLATE_SEVERITY: Record<TemplateHit['severity'], Verdict['severity']> = { critical: 'critical', high: 'high', medium: 'medium', low: 'low', info: 'none', unknown: 'unknown' }

/** The finding of a template that matched: `rule` is the template's id, its CVE ids are named in the criterion. */
export function templateVerdict (hit: TemplateHit, service: ServiceInfo | undefined): Verdict {
  const cves = hit.cveIds.length > 0 ? ` (${hit.cveIds.join(', ')})` : ''
  const evidence = [...hit.matched.map((m) => `matched ${m}`), ...hit.extracted.map((x) => `extracted ${x}`)].join('; ')
  return {
    cveId: templateFindingId(hit.id),
    severity: TEMPLATE_SEVERITY[hit.severity],
    cvss: null,
    cvssVersion: null,
    cvssVector: null,
    kev: null,
    epss: null,
    description: `${hit.name}${cves}${hit.description !== '' ? `: ${hit.description}` : ''}`.slice(0, 2000),
    product: service?.product ?? service?.service ?? 'unknown',
    version: service?.version ?? null,
    matchedCpe: service?.cpe[0] ?? '',
    criterion: `template ${hit.id}${cves}${evidence !== '' ? `: ${evidence}` : ''}`.slice(0, 1000),
    reason: `the template's severity (${hit.severity})`,
    source: 'template',
    rule: hit.id,
    observed: 'open',
    distribution: null,
    ...confidenceFor('template'),
    confidenceNote: hit.tags.length > 0 ? `template tags: ${hit.tags.join(', ')}` : null,
    evidence: hit.evidence,
    requiresPlatform: [],
    ...(hit.remediation !== undefined ? { remediation: hit.remediation } : {})
  }
}

/** The finding of one proved exposure on a port whose service detection named `service`. */
export function exposureVerdict (exposure: PortExposure, service: ServiceInfo | undefined): Verdict {
  if (exposure.template !== undefined) return templateVerdict(exposure.template, service)
  const def = checkById(exposure.check)
  return {
    cveId: def.id,
    severity: def.severity,
    cvss: null,
    cvssVersion: null,
    cvssVector: null,
    kev: null,
    epss: null,
    description: def.title,
    product: service?.product ?? service?.service ?? 'unknown',
    version: service?.version ?? null,
    matchedCpe: service?.cpe[0] ?? '',
    criterion: def.evidence,
    reason: def.severityReason,
    source: 'vulnscan',
    rule: `vulnscan: ${def.id}: ${def.evidence}`,
    // Seen on the wire, not inferred from a version: an open finding of high confidence.
    observed: 'open',
    distribution: null,
    ...confidenceFor('exposure'),
    confidenceNote: def.reads ? 'Proved by a read-only exchange that logs in or reads data (names or statistics only).' : null,
    evidence: exposure.evidence,
    requiresPlatform: [],
    remediation: def.remediation
  }
}
