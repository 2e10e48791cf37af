// What a scan report covers, read once for every format: the scan, the hosts it saw, the findings it observed
// and the data it was matched against. Hosts and findings come as async iterables, read page by page from the
// results store, so a report of millions of findings never sits in memory.
import type { FindingSeverity, Severity } from '../domain/severity'
import type { DataSources } from '../sources/registry'
import type { FindingRecord } from '../domain/findings'
import type { ResultsStore } from '../store/results-types'
import type { HostRecord } from '../domain/hosts'
import type { ScanRecord } from '../store/types'
import type { FindingSource, FindingStatus, KevCatalogue } from '../vocabulary'
import { CLI_FINDING_SORT, GATE_STATUSES } from '../vocabulary'
import { VERSION } from '../version'
import { turn } from '../event-loop'
import { kevCataloguesOfFinding } from '../store/results-merge'

export const REPORT_FORMATS = ['json', 'csv', 'sarif', 'html', 'cyclonedx', 'openvex'] as const
export type ReportFormat = typeof REPORT_FORMATS[number]

/** The severities `minSeverity` takes, least severe first. */
export const REPORT_SEVERITIES = ['none', 'low', 'medium', 'high', 'critical'] as const
/** The order reports list severities in, most severe first. */
export const SEVERITY_ORDER: readonly FindingSeverity[] = ['critical', 'high', 'medium', 'low', 'none', 'unknown']

export interface ReportFilters {
  /** Only hosts carrying this tag, and the findings on them. */
  tag?: string
  /** Only findings at least this severe; findings without a score (unknown) are left out by any threshold. */
  minSeverity?: Severity
  /** Only findings decided by this source (`distribution`: a credentialed scan's package findings among them). */
  source?: FindingSource
  /** Only findings whose confidenceScore is at least this. */
  minConfidence?: number
}

export interface ReportSource {
  scan: ScanRecord
  results: ResultsStore
  filters: ReportFilters
  /** The reading key's scope: hosts outside it, and their findings, are left out (absent: none are). */
  scope?: readonly string[]
  generatedAt: string
}

/** Per-severity counts, in SEVERITY_ORDER. */
export type SeverityCounts = Record<FindingSeverity, number>

export function emptyCounts (): SeverityCounts {
  return { critical: 0, high: 0, medium: 0, low: 0, none: 0, unknown: 0 }
}

/** Scans still queued or running have no report yet (409): their hosts and findings are still being written. */
export function reportable (scan: ScanRecord): boolean {
  return scan.status === 'completed' || scan.status === 'failed' || scan.status === 'cancelled'
}

/** A failed or cancelled scan's report covers what it wrote before it ended, and says so. */
export function partialReason (scan: ScanRecord): string | null {
  if (scan.status === 'completed') return null
  return `This scan ${scan.status === 'failed' ? 'failed' : 'was cancelled'}${scan.reason !== undefined ? ` (${scan.reason})` : ''}: ` +
    'the report covers only the hosts and findings written before it ended.'
}

export function dataSourcesOf (scan: ScanRecord): DataSources | null {
  return scan.summary?.dataSources ?? null
}

const HOST_PAGE = 500
/** Hosts or findings a report reads between two turns of the event loop, so that ten reports at once do not hold /health up. */
const ITEMS_PER_TURN = 25

/** Every host the scan saw (up or down), in address order. */
export async function * reportHosts (src: ReportSource): AsyncGenerator<HostRecord> {
  for (let offset = 0; ; offset += HOST_PAGE) {
    const page = await src.results.listHosts({
      scanId: src.scan.id,
      ...(src.filters.tag !== undefined ? { tag: src.filters.tag } : {}),
      ...(src.scope !== undefined ? { scope: src.scope } : {}),
      sort: 'address',
      order: 'asc',
      limit: HOST_PAGE,
      offset
    })
    for (const [i, h] of page.items.entries()) {
      if (i > 0 && i % ITEMS_PER_TURN === 0) await turn()
      yield h
    }
    if (page.items.length < HOST_PAGE || offset + HOST_PAGE >= page.total) return
  }
}

const RANK: Record<FindingSeverity, number> = { unknown: -1, none: 0, low: 1, medium: 2, high: 3, critical: 4 }

export function atLeast (severity: FindingSeverity, min: Severity | undefined): boolean {
  return min === undefined || (severity !== 'unknown' && RANK[severity] >= RANK[min])
}

/**
 * Every finding the scan observed, as `GET /vulnerability?scanId=` lists them (fixed_by_distribution and
 * potential left out), the most severe first (severity, then KEV, EPSS, CVSS), with the report's filters applied.
 */
export async function * reportFindings (src: ReportSource): AsyncGenerator<FindingRecord> {
  const { tag, minSeverity, source, minConfidence } = src.filters
  const scope = src.scope !== undefined ? { scope: src.scope } : {}
  let n = 0
  for await (const f of src.results.streamFindings({ scanId: src.scan.id, ...(tag !== undefined ? { tag } : {}), ...(source !== undefined ? { source } : {}), ...(minConfidence !== undefined ? { minConfidence } : {}), ...scope, sort: CLI_FINDING_SORT, order: 'desc' })) {
    // A store that has every finding at hand (the embedded one) would otherwise hand them all over in one turn.
    if (++n % ITEMS_PER_TURN === 0) await turn()
    if (atLeast(f.severity, minSeverity)) yield f
  }
}

/** Whether a finding counts in severity totals (open or reopened), as the API's totals and CI gates count. */
export function standing (status: FindingStatus): boolean {
  return GATE_STATUSES.includes(status)
}

/** What every format says about where the report came from. */
export interface ReportMeta {
  generator: string
  generatedAt: string
  partial: string | null
  filters: ReportFilters
}

export function reportMeta (src: ReportSource): ReportMeta {
  return { generator: `vulnscan ${VERSION}`, generatedAt: src.generatedAt, partial: partialReason(src.scan), filters: src.filters }
}

/** `tcp://192.0.2.1:22`, `tcp://[2001:db8::1]:443`, `udp://192.0.2.1:53`: a finding's host, port and transport as one URI. */
export function serviceUri (address: string, port: number, protocol: 'tcp' | 'udp' = 'tcp'): string {
  // Port 0 is the host itself (a credentialed scan's package findings), not a service.
  if (port === 0) return `host://${address.includes(':') ? `[${address}]` : address}`
  return `${protocol}://${address.includes(':') ? `[${address}]` : address}:${port}`
}

/** The NVD page of a CVE; null for ids that are not CVEs (exposure checks). */
export function nvdUrl (id: string): string | null {
  return /^CVE-\d{4}-\d{4,}$/i.test(id) ? `https://nvd.nist.gov/vuln/detail/${id.toUpperCase()}` : null
}

/**
 * What to do about a finding, from the data that decided it: the distribution's fixed package, the upstream bound
 * of the matched rule ("upgrade beyond X"), or a plain "no fixed version known".
 */
const CATALOGUE_NAMES: Record<KevCatalogue, string> = { cisa: 'CISA KEV', eu: 'EU KEV' }

/** The catalogues of known exploited vulnerabilities that list the finding's CVE, by name: `CISA KEV, EU KEV`; empty when none. */
export function kevCatalogueNames (f: Pick<FindingRecord, 'kev' | 'kevCatalogues'>): string {
  return kevCataloguesOfFinding(f).map((c) => CATALOGUE_NAMES[c]).join(', ')
}

export function remediation (f: Omit<FindingRecord, 'kevCatalogues' | 'euvdId'>): string {
  const d = f.distribution
  if (f.status === 'fixed_by_distribution' || f.observed === 'fixed_by_distribution') {
    return `The running ${d?.family ?? 'distribution'} package revision${d?.packageVersion != null ? ` ${d.packageVersion}` : ''} already carries the fix.`
  }
  if (d !== null && d.fixedVersion !== null && d.fixedVersion !== '0') {
    const pkg = d.sourcePackage ?? f.product
    return `Upgrade the ${d.family}${d.release !== null ? ` ${d.release}` : ''} package ${pkg} to ${d.fixedVersion} or later (the distribution's fixed version).`
  }
  const bound = upperBound(`${f.criterion} ${f.rule}`)
  if (bound !== null) {
    return bound.inclusive
      ? `Upgrade ${f.product} beyond ${bound.version} (the last affected version).`
      : `Upgrade ${f.product} to ${bound.version} or later (the first fixed version).`
  }
  return 'No fixed version known.'
}

/** The upper version bound a rule text names (`< 2.0.16`, `<= 9.3`, `lessThan 7.2.6`), when it names one. */
export function upperBound (text: string): { version: string, inclusive: boolean } | null {
  const m = /(?:^|[\s,"(])(<=|<|lessThanOrEqual:?|lessThan:?)\s*"?([0-9][^\s,")]*)/.exec(text)
  if (m === null) return null
  return { version: m[2], inclusive: m[1].startsWith('<=') || m[1].startsWith('lessThanOrEqual') }
}
