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
//
// A scan's report, a host's findings and a filtered finding list are the same documents (VexInput): the components
// are the hosts and services the input saw, or, for a finding list, the hosts and services its findings are on.
import { randomUUID } from 'node:crypto'
import type { FindingRecord } from '../domain/findings'
import type { HostRecord } from '../domain/hosts'
import { VERSION } from '../version'
import { nvdUrl, remediation, reportFindings, reportHosts, serviceUri, type ReportSource } from './gather'

/** What a CycloneDX or OpenVEX document is made of; each iterable may be read more than once. */
export interface VexInput {
  generatedAt: string
  /** What the document covers, as CycloneDX metadata properties (`vulnscan:scan-id`, `vulnscan:host`, …). */
  subject: Array<{ name: string, value: string }>
  /** What OpenVEX `tooling` says the document covers: `scan s-1`, `host 192.0.2.1`, `finding list`. */
  describedAs: string
  /** The hosts whose open ports become components; absent: the hosts and services the findings are on. */
  hosts?: () => AsyncIterable<HostRecord>
  findings: () => AsyncIterable<FindingRecord>
}

/** The input of a scan's report. */
export function vexFromScan (src: ReportSource): VexInput {
  return {
    generatedAt: src.generatedAt,
    subject: [{ name: 'vulnscan:scan-id', value: src.scan.id }, { name: 'vulnscan:scan-status', value: src.scan.status }],
    describedAs: `scan ${src.scan.id}`,
    hosts: () => reportHosts(src),
    findings: () => reportFindings(src)
  }
}

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
async function packageComponents (input: VexInput): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>()
  for await (const f of input.findings()) {
    const purl = packageUrl(f)
    if (purl === null || f.package === undefined || out.has(purl)) continue
    out.set(purl, { type: 'library', 'bom-ref': purl, name: f.package.name, version: f.package.installed, purl, properties: [{ name: 'vulnscan:host', value: f.address }, { name: 'vulnscan:source-package', value: f.package.source }] })
  }
  return out
}

function serviceComponent (address: string, port: number, protocol: 'tcp' | 'udp', name: string, version: string | null | undefined, cpe: string | undefined, service: string | null | undefined): Record<string, unknown> {
  return {
    type: 'application',
    'bom-ref': serviceRef(address, port, protocol),
    name,
    ...(version !== undefined && version !== null && version !== '' ? { version } : {}),
    ...(cpe !== undefined && cpe !== '' ? { cpe } : {}),
    properties: [{ name: 'vulnscan:location', value: serviceUri(address, port, protocol) }, ...(service !== undefined && service !== null ? [{ name: 'vulnscan:service', value: service }] : [])]
  }
}

/** The components of the hosts and their open ports. */
async function * hostComponents (hosts: AsyncIterable<HostRecord>): AsyncGenerator<Record<string, unknown>> {
  for await (const h of hosts) {
    yield { type: 'device', 'bom-ref': `host:${h.address}`, name: h.address, ...(h.hostnames.length > 0 ? { description: h.hostnames.join(', ') } : {}) }
    for (const p of h.ports.filter((x) => x.state === 'open')) {
      yield serviceComponent(h.address, p.port, p.protocol ?? 'tcp', p.product ?? p.service ?? `port ${p.port}`, p.version, (p.cpe ?? [])[0], p.service)
    }
  }
}

/** A finding list's components: each host and service its findings are on, once, as the findings name them. */
async function * findingComponents (findings: AsyncIterable<FindingRecord>): AsyncGenerator<Record<string, unknown>> {
  const seen = new Set<string>()
  for await (const f of findings) {
    if (!seen.has(`host:${f.address}`)) {
      seen.add(`host:${f.address}`)
      yield { type: 'device', 'bom-ref': `host:${f.address}`, name: f.address }
    }
    const protocol = f.protocol ?? 'tcp'
    if (f.port === 0 || seen.has(serviceRef(f.address, f.port, protocol))) continue
    seen.add(serviceRef(f.address, f.port, protocol))
    yield serviceComponent(f.address, f.port, protocol, f.product !== '' ? f.product : `port ${f.port}`, f.version, f.matchedCpe !== '' ? f.matchedCpe : undefined, null)
  }
}

/** A CycloneDX 1.6 JSON BOM of the input. */
export async function * cyclonedxDocument (input: VexInput): AsyncGenerator<string> {
  const metadata = {
    timestamp: input.generatedAt,
    tools: { components: [{ type: 'application', name: 'vulnscan', version: VERSION }] },
    properties: input.subject
  }
  yield `{"bomFormat":"CycloneDX","specVersion":"1.6","serialNumber":"urn:uuid:${randomUUID()}","version":1,"metadata":${JSON.stringify(metadata)},"components":[`
  let first = true
  const item = (o: unknown): string => { const s = (first ? '' : ',') + JSON.stringify(o); first = false; return s }
  const components = input.hosts !== undefined ? hostComponents(input.hosts()) : findingComponents(input.findings())
  for await (const c of components) yield item(c)
  for (const c of (await packageComponents(input)).values()) yield item(c)
  yield '],"vulnerabilities":['
  first = true
  for await (const f of input.findings()) yield item(cdxVulnerability(f))
  yield ']}\n'
}

/** A CycloneDX 1.6 JSON BOM of the scan. */
export function cyclonedxReport (src: ReportSource): AsyncGenerator<string> {
  return cyclonedxDocument(vexFromScan(src))
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

/** Whether the input has a finding at all: an OpenVEX document needs at least one statement. */
export async function hasStatements (input: VexInput): Promise<boolean> {
  for await (const _f of input.findings()) return true
  return false
}

/** Whether the scan's report has a finding at all. */
export async function hasFindings (src: ReportSource): Promise<boolean> {
  return await hasStatements(vexFromScan(src))
}

/** An OpenVEX 0.2 document of the input's findings (callers check hasStatements first). */
export async function * openvexDocument (input: VexInput): AsyncGenerator<string> {
  const head = {
    '@context': 'https://openvex.dev/ns/v0.2.0',
    '@id': `urn:uuid:${randomUUID()}`,
    author: 'vulnscan',
    role: 'scanner',
    timestamp: input.generatedAt,
    version: 1,
    tooling: `vulnscan ${VERSION} (${input.describedAs})`
  }
  yield JSON.stringify(head).slice(0, -1) + ',"statements":['
  let first = true
  for await (const f of input.findings()) {
    yield (first ? '' : ',') + JSON.stringify(vexStatement(f, input.generatedAt))
    first = false
  }
  yield ']}\n'
}

/** An OpenVEX 0.2 document of the scan's findings (callers check hasFindings first). */
export function openvexReport (src: ReportSource): AsyncGenerator<string> {
  return openvexDocument(vexFromScan(src))
}

/** The two documents' media types (what Accept names), Content-Type and file extension. */
export const VEX_FORMATS = {
  cyclonedx: { media: 'application/vnd.cyclonedx+json', contentType: 'application/vnd.cyclonedx+json; version=1.6; charset=utf-8', ext: 'cdx.json' },
  openvex: { media: 'application/openvex+json', contentType: 'application/openvex+json; charset=utf-8', ext: 'openvex.json' }
} as const
export type VexFormat = keyof typeof VEX_FORMATS

/** The document of `input` in `format`, or null when it is OpenVEX and there is no finding to make a statement of. */
export async function vexDocument (format: VexFormat, input: VexInput): Promise<AsyncGenerator<string> | null> {
  if (format === 'cyclonedx') return cyclonedxDocument(input)
  return await hasStatements(input) ? openvexDocument(input) : null
}

/** The 200 answer of a route that sends one of the two documents, for its response schema. */
export const VEX_RESPONSE = {
  description: 'The document, as an attachment',
  content: {
    [VEX_FORMATS.cyclonedx.media]: { schema: { type: 'object', description: 'A CycloneDX 1.6 JSON BOM (bomFormat, specVersion, components, vulnerabilities)' } },
    [VEX_FORMATS.openvex.media]: { schema: { type: 'object', description: 'An OpenVEX 0.2 document (@context, author, timestamp, statements)' } }
  }
}

/**
 * The format asked for: `format` when given, else the one the Accept header prefers (`accepts` picks among media
 * types; CycloneDX when it allows anything); null when the header allows neither.
 */
export function vexFormatOf (asked: VexFormat | undefined, accepts: (types: string[]) => string | false): VexFormat | null {
  if (asked !== undefined) return asked
  const media = accepts([VEX_FORMATS.cyclonedx.media, VEX_FORMATS.openvex.media])
  if (media === false) return null
  return media === VEX_FORMATS.openvex.media ? 'openvex' : 'cyclonedx'
}

/** The headers of a document sent as an attachment named `<name>.<ext>`. */
export function vexHeaders (format: VexFormat, name: string): Record<string, string> {
  return {
    'content-type': VEX_FORMATS[format].contentType,
    'content-disposition': `attachment; filename="${name.replace(/[^A-Za-z0-9._-]/g, '_')}.${VEX_FORMATS[format].ext}"`,
    'cache-control': 'no-store'
  }
}
