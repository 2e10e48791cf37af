// Shapes of the local NVD index, shared by the client, the importer, the matcher and the API.
import type { Kev } from '../domain/findings'
import type { Severity } from '../domain/severity'

export type CvssVersion = '4.0' | '3.1' | '3.0' | '2.0'

export interface CvssMetric {
  version: CvssVersion
  score: number
  /** Lower-case severity; for v2 taken from the metric (outside cvssData), for v3/v4 from cvssData. */
  severity: Severity
  vector: string
  source: string
  type: 'Primary' | 'Secondary'
}

export interface CpeCriterion {
  criteria: string
  vulnerable: boolean
  matchCriteriaId?: string
  versionStartIncluding?: string
  versionStartExcluding?: string
  versionEndIncluding?: string
  versionEndExcluding?: string
}

export interface ConfigNode {
  operator: 'OR' | 'AND'
  negate: boolean
  cpeMatch: CpeCriterion[]
}

export interface Configuration {
  operator?: 'OR' | 'AND'
  negate?: boolean
  nodes: ConfigNode[]
}

export interface Reference {
  url: string
  source?: string
  tags?: string[]
}

/** One CVE as the index keeps it: normalized from an NVD API 2.0 `cve` object. */
export interface CveRecord {
  id: string
  published: string
  lastModified: string
  vulnStatus: string
  rejected: boolean
  description: string
  metrics: CvssMetric[]
  /** The one chosen score: NVD Primary first, newest CVSS version first. Null when none exists (never 0). */
  cvss: number | null
  cvssVersion: CvssVersion | null
  cvssVector: string | null
  severity: Severity | null
  cwes: string[]
  references: Reference[]
  kev: Kev | null
  configurations: Configuration[]
}

export type MatchConfidence = 'exact' | 'platform'

export interface CveMatch {
  cve: CveRecord
  /** The vulnerable criterion that matched the CPE. */
  criterion: CpeCriterion
  /** Human-readable reason, e.g. "9.2p1 < 9.6 (versionEndExcluding)". */
  reason: string
  /** 'platform' when the configuration also requires a platform (AND node) that a scan cannot see. */
  confidence: MatchConfidence
  /** CPE criteria of the non-vulnerable platform the configuration requires, when confidence is 'platform'. */
  requiresPlatform?: string[]
  /** The target CPE had no version, so every criterion of its vendor:product matched: treat as low confidence. */
  productOnly?: boolean
}

export interface IndexStats {
  cves: number
  products: number
  lastSync: string | null
}

/** The local CVE index. One interface, two backends (Redis; memory backed by a file). */
export interface CveIndex {
  /** Normalize and store raw NVD API 2.0 `cve` objects (insert or replace by id). Returns how many were stored. */
  upsertRaw(raw: unknown[]): Promise<number>
  get(id: string): Promise<CveRecord | null>
  /** CVEs whose vulnerable criteria match a CPE 2.3 name (rejected CVEs never match). */
  match(cpe: string): Promise<CveMatch[]>
  /** Whether the index holds criteria for vendor:product, or knows (within the TTL) that NVD has none. */
  knowsProduct(vendor: string, product: string): Promise<boolean>
  /** Remember that vendor:product was fetched on demand, for ttlSeconds. */
  markProductFetched(vendor: string, product: string, ttlSeconds: number): Promise<void>
  stats(): Promise<IndexStats>
  getMeta(key: string): Promise<string | null>
  setMeta(key: string, value: string): Promise<void>
  /** Persist pending state (file backend) and release resources it opened. */
  close(): Promise<void>
}
