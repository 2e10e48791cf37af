// Sort values of hosts and findings: one number (or address key) per record and sort, the same in both stores,
// in the cursors the routes sign, and in the CLI. Ties are broken by address (hosts) or id (findings).
import { addressSortKey } from './addresses'
import { SEVERITY_RANK, type KevCatalogue } from './vocabulary'
import type { HostRecord } from './domain/hosts'
import type { FindingQuery, HostQuery } from './store/results-types'
import type { FindingRecord } from './domain/findings'

export function severityScore (maxSeverity: string | null): number {
  return maxSeverity === null ? -1 : SEVERITY_RANK[maxSeverity] ?? -1
}

/** What the risk order reads of a finding: a record, or the fields a store keeps of one. */
export type RiskFields = Pick<FindingRecord, 'kev' | 'epss' | 'cvss'> & { kevCatalogues?: readonly KevCatalogue[] }

/**
 * One number that orders findings by risk: CISA's KEV with known ransomware use, then known exploited (CISA's KEV
 * or ENISA's EU KEV), then the others; within each, EPSS (a missing score below every real one), then CVSS
 * (likewise). Exact in a double and in a Redis score.
 */
export function riskValue (f: RiskFields): number {
  const kev = f.kev !== null ? (f.kev.ransomware === true ? 2 : 1) : f.kevCatalogues?.includes('eu') === true ? 1 : 0
  const epss = f.epss === null || f.epss === undefined ? 0 : 1 + Math.round(f.epss.score * 100_000)
  const cvss = f.cvss === null ? 0 : 1 + Math.round(f.cvss * 10)
  return kev * 1e12 + epss * 1e3 + cvss
}

/**
 * One number that orders findings by severity (an exposure finding without CVSS in its rank, not below every CVE),
 * then within a severity by riskValue (KEV, EPSS, CVSS). riskValue stays below 1e13, and the whole below 2^53.
 */
export function severityRiskValue (f: RiskFields & Pick<FindingRecord, 'severity'>): number {
  return (1 + (SEVERITY_RANK[f.severity] ?? -1)) * 1e13 + riskValue(f)
}

/** The sort value of a host; ties are broken by address text, and `desc` is the exact reverse of `asc`. */
export function hostSortValue (h: HostRecord, sort: NonNullable<HostQuery['sort']>): number | string {
  switch (sort) {
    case 'lastSeen': return Date.parse(h.lastSeen)
    case 'address': return addressSortKey(h.address)
    case 'findings': return h.findingsCount
    case 'severity': return severityScore(h.maxSeverity)
  }
}

/** CVSS sorts with a missing score below every real one (a missing score is not 0). */
export function findingSortValue (f: FindingRecord, sort: NonNullable<FindingQuery['sort']>): number {
  switch (sort) {
    case 'cvss': return f.cvss ?? -1
    case 'lastSeen': return Date.parse(f.lastSeen)
    case 'firstSeen': return Date.parse(f.firstSeen)
    case 'risk': return riskValue(f)
    case 'severity': return severityRiskValue(f)
  }
}
