// Machine-readable vulnerability statements of a scan: CycloneDX 1.6 (a BOM of the hosts, services and installed
// packages the scan saw, with each finding as a vulnerability whose analysis state follows its status) and OpenVEX
// 0.2 (one statement per finding). Streamed as the other reports are: the findings are read page by page.
//
// Status mapping (the same in both documents):
//   open, reopened          CycloneDX in_triage          OpenVEX affected (with the remediation as action)
//   accepted (risk)         exploitable, will_not_fix    affected (the decision's comment as action)
//   false_positive          false_positive               not_affected, vulnerable_code_not_present
//   fixed                   resolved                     fixed
//   fixed_by_distribution   resolved (update)            fixed (the distribution's backported fix)
//   potential               in_triage                    under_investigation
import { randomUUID } from 'node:crypto'
import type { FindingRecord } from '../domain/findings'
import { VERSION } from '../version'
import { nvdUrl, remediation, reportFindings, reportHosts, serviceUri, type ReportSource } from './gather'

const CDX_SEVERITIES = new Set(['critical', 'high', 'medium', 'low', 'none', 'unknown'])

/** The package URL of a credentialed finding's installed package (purl spec: type, namespace, name, version, qualifiers). */
export function packageUrl (f: FindingRecord): string | null {
  if (f.package === undefined) return null
  const family = f.distribution?.family ?? ''
  const [type, namespace] = family === 'debian' || family === 'ubuntu' ? ['deb', family]
    : family === 'alpine' ? ['apk', 'alpine']
      : family === 'rhel' ? ['rpm', 'redhat'] : [null, null]
  if (type === null || namespace === null) return null
  const release = f.distribution?.release ?? null
  const qualifier = release !== null ? `?distro=${encodeURIComponent(`${family}-${release}`)}` : ''
  return `pkg:${type}/${namespace}/${encodeURIComponent(f.package.name)}@${encodeURIComponent(f.package.installed)}${qualifier}`
}

function serviceRef (address: string, port: number, protocol: string): string {
  return `service:${address}:${port}/${protocol}`
}

/** What a finding is about: its installed package (credentialed), else the service on its port. */
function affectedRef (f: FindingRecord): string {
  const purl = packageUrl(f)
  if (purl !== null) return purl
  return f.port === 0 ? `host:${f.address}` : serviceRef(f.address, f.port, f.protocol)
}

function cvssMethod (version: string | null): string {
  switch (version) {
    case '4.0': return 'CVSSv4'
    case '3.1': return 'CVSSv31'
    case '3.0': return 'CVSSv3'
    case '2.0': return 'CVSSv2'
    default: return 'other'
  }
}

function sourceOf (f: FindingRecord): { name: string, url?: string } {
  const url = nvdUrl(f.cveId)
  switch (f.source) {
    case 'nvd': return { name: 'NVD', ...(url !== null ? { url } : {}) }
    case 'cna': return { name: 'CVE.org (CNA)', url: `https://www.cve.org/CVERecord?id=${f.cveId}` }
    case 'adp': return { name: 'CISA ADP (Vulnrichment)', url: `https://www.cve.org/CVERecord?id=${f.cveId}` }
    case 'distribution': return { name: `${f.distribution?.family ?? 'distribution'} security tracker` }
    default: return { name: 'vulnscan' }
  }
}

function analysisOf (f: FindingRecord): Record<string, unknown> {
  const detail = f.comment !== null && f.comment !== '' ? { detail: f.comment } : {}
  switch (f.status) {
    case 'accepted': return { state: 'exploitable', response: ['will_not_fix'], ...detail }
    case 'false_positive': return { state: 'false_positive', ...detail }
    case 'fixed': return { state: 'resolved', ...detail }
    case 'fixed_by_distribution': return { state: 'resolved', response: ['update'], detail: f.reason }
    case 'potential': return { state: 'in_triage', detail: f.confidenceNote ?? 'the product was seen without a version' }
    default: return { state: 'in_triage', ...detail }
  }
}

function cdxVulnerability (f: FindingRecord): Record<string, unknown> {
  return {
    'bom-ref': `finding:${f.id}`,
    id: f.cveId,
    source: sourceOf(f),
    ratings: f.cvss !== null
      ? [{ source: sourceOf(f), score: f.cvss, severity: CDX_SEVERITIES.has(f.severity) ? f.severity : 'unknown', method: cvssMethod(f.cvssVersion), ...(f.cvssVector !== null ? { vector: f.cvssVector } : {}) }]
      : [{ severity: CDX_SEVERITIES.has(f.severity) ? f.severity : 'unknown', method: 'other' }],
    ...(f.description !== '' ? { description: f.description } : {}),
    recommendation: remediation(f),
    analysis: analysisOf(f),
    affects: [{ ref: affectedRef(f) }],
    properties: [
      { name: 'vulnscan:finding-id', value: f.id },
      { name: 'vulnscan:status', value: f.status },
      { name: 'vulnscan:rule', value: f.rule },
      { name: 'vulnscan:confidence', value: String(f.confidenceScore) },
      { name: 'vulnscan:location', value: f.port === 0 ? `host ${f.address}` : serviceUri(f.address, f.port, f.protocol) }
    ]
  }
}

/** The packages the findings name (credentialed scans), once each: components of their own. */
async function packageComponents (src: ReportSource): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>()
  for await (const f of reportFindings(src)) {
    const purl = packageUrl(f)
    if (purl === null || f.package === undefined || out.has(purl)) continue
    out.set(purl, { type: 'library', 'bom-ref': purl, name: f.package.name, version: f.package.installed, purl, properties: [{ name: 'vulnscan:host', value: f.address }, { name: 'vulnscan:source-package', value: f.package.source }] })
  }
  return out
}

/** A CycloneDX 1.6 JSON BOM of the scan. */
export async function * cyclonedxReport (src: ReportSource): AsyncGenerator<string> {
  const metadata = {
    timestamp: src.generatedAt,
    tools: { components: [{ type: 'application', name: 'vulnscan', version: VERSION }] },
    properties: [{ name: 'vulnscan:scan-id', value: src.scan.id }, { name: 'vulnscan:scan-status', value: src.scan.status }]
  }
  yield `{"bomFormat":"CycloneDX","specVersion":"1.6","serialNumber":"urn:uuid:${randomUUID()}","version":1,"metadata":${JSON.stringify(metadata)},"components":[`
  let first = true
  const item = (o: unknown): string => { const s = (first ? '' : ',') + JSON.stringify(o); first = false; return s }
  for await (const h of reportHosts(src)) {
    yield item({ type: 'device', 'bom-ref': `host:${h.address}`, name: h.address, ...(h.hostnames.length > 0 ? { description: h.hostnames.join(', ') } : {}) })
    for (const p of h.ports.filter((x) => x.state === 'open')) {
      const name = p.product ?? p.service ?? `port ${p.port}`
      yield item({
        type: 'application',
        'bom-ref': serviceRef(h.address, p.port, p.protocol ?? 'tcp'),
        name,
        ...(p.version !== undefined && p.version !== null ? { version: p.version } : {}),
        ...((p.cpe ?? []).length > 0 ? { cpe: (p.cpe ?? [])[0] } : {}),
        properties: [{ name: 'vulnscan:location', value: serviceUri(h.address, p.port, p.protocol ?? 'tcp') }, ...(p.service !== undefined && p.service !== null ? [{ name: 'vulnscan:service', value: p.service }] : [])]
      })
    }
  }
  for (const c of (await packageComponents(src)).values()) yield item(c)
  yield '],"vulnerabilities":['
  first = true
  for await (const f of reportFindings(src)) yield item(cdxVulnerability(f))
  yield ']}\n'
}

function vexStatement (f: FindingRecord, at: string): Record<string, unknown> {
  const purl = packageUrl(f)
  const product = purl !== null ? { identifiers: { purl } } : f.matchedCpe !== '' ? { identifiers: { '@cpe23': f.matchedCpe } } : {}
  const url = nvdUrl(f.cveId)
  const base = {
    vulnerability: { name: f.cveId, ...(url !== null ? { '@id': url } : {}) },
    timestamp: at,
    products: [product],
    status_notes: `${f.port === 0 ? `host ${f.address}` : serviceUri(f.address, f.port, f.protocol)}; vulnscan ${f.source} rule: ${f.rule}`
  }
  switch (f.status) {
    case 'false_positive':
      return { ...base, status: 'not_affected', justification: 'vulnerable_code_not_present', ...(f.comment !== null && f.comment !== '' ? { status_notes: `${base.status_notes}; ${f.comment}` } : {}) }
    case 'fixed':
    case 'fixed_by_distribution':
      return { ...base, status: 'fixed' }
    case 'potential':
      return { ...base, status: 'under_investigation' }
    case 'accepted':
      return { ...base, status: 'affected', action_statement: `Risk accepted${f.comment !== null && f.comment !== '' ? `: ${f.comment}` : ''}. ${remediation(f)}` }
    default:
      return { ...base, status: 'affected', action_statement: remediation(f) }
  }
}

/** Whether the report has a finding at all: an OpenVEX document needs at least one statement. */
export async function hasFindings (src: ReportSource): Promise<boolean> {
  for await (const _f of reportFindings(src)) return true
  return false
}

/** An OpenVEX 0.2 document of the scan's findings (callers check hasFindings first). */
export async function * openvexReport (src: ReportSource): AsyncGenerator<string> {
  const head = {
    '@context': 'https://openvex.dev/ns/v0.2.0',
    '@id': `urn:uuid:${randomUUID()}`,
    author: 'vulnscan',
    role: 'scanner',
    timestamp: src.generatedAt,
    version: 1,
    tooling: `vulnscan ${VERSION} (scan ${src.scan.id})`
  }
  yield JSON.stringify(head).slice(0, -1) + ',"statements":['
  let first = true
  for await (const f of reportFindings(src)) {
    yield (first ? '' : ',') + JSON.stringify(vexStatement(f, src.generatedAt))
    first = false
  }
  yield ']}\n'
}
