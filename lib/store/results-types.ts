// Hosts and findings: what scans leave behind. One interface, two backends (Redis and in-memory).
import type { HostResult } from '../scanner/types'
import type { Kev, Severity } from '../nvd/types'
import type { HostRecord, Page } from './types'

/** high: exact upstream version; medium: distro tag in the banner (a backported fix is possible); low: product without version. */
export type Confidence = 'high' | 'medium' | 'low'

export type FindingStatus = 'open' | 'fixed' | 'reopened' | 'accepted' | 'false_positive'

/** A finding as the worker produces it for one host and port. */
export interface NewFinding {
  address: string
  port: number
  cveId: string
  severity: Severity | 'unknown'
  cvss: number | null
  cvssVersion: string | null
  cvssVector: string | null
  kev: Kev | null
  description: string
  product: string
  version: string | null
  /** The CPE the scan derived from the banner. */
  matchedCpe: string
  /** The NVD criterion that matched, with its bounds, e.g. `cpe:2.3:a:eclipse:mosquitto:*:… < 2.0.16`. */
  criterion: string
  /** Why it matched, e.g. "2.0.11 < 2.0.16 (versionEndExcluding)". */
  reason: string
  confidence: Confidence
  /** Said to the user with the confidence, e.g. the distro backport caveat or a required platform. */
  confidenceNote: string | null
  /** The banner or reply that shows the product and version (bounded). */
  evidence: string
  requiresPlatform: string[]
}

export interface FindingRecord extends NewFinding {
  /** Stable id from address, port and CVE: the same finding in every scan. */
  id: string
  firstSeen: string
  lastSeen: string
  lastScanId: string
  status: FindingStatus
  /** When the finding was last marked fixed (not seen again on a re-scan of its host and port). */
  fixedAt: string | null
  comment: string | null
  decidedBy: string | null
  decidedAt: string | null
}

/** One host's results from one scan (batch), as the worker hands them to the results store. */
export interface HostScanWrite {
  scanId: string
  at: string
  host: HostResult
  /** Ports this scan covered for the host: host ports outside this set are kept from earlier scans. */
  scannedPorts: number[]
  /** Findings seen now. */
  findings: NewFinding[]
  /**
   * Ports whose findings this scan settles: a finding on one of them not in `findings` becomes `fixed`.
   * Ports whose product could not be checked against the NVD (or templates without NVD matching) are left out.
   */
  settledPorts: number[]
}

export type SortDirection = 'asc' | 'desc'

export interface HostQuery {
  limit: number
  offset: number
  /** Substring of the address or of a hostname. */
  q?: string
  port?: number
  service?: string
  product?: string
  minSeverity?: Severity
  hasFindings?: boolean
  sort?: 'lastSeen' | 'address' | 'findings' | 'severity'
  order?: SortDirection
}

export interface FindingQuery {
  limit: number
  offset: number
  severity?: Severity | 'unknown'
  minCvss?: number
  kev?: boolean
  cveId?: string
  host?: string
  status?: FindingStatus
  confidence?: Confidence
  sort?: 'cvss' | 'lastSeen' | 'firstSeen'
  order?: SortDirection
}

export interface ResultsStore {
  /** Idempotent: writing the same HostScanWrite twice leaves the same state (a re-run job duplicates nothing). */
  recordHost(write: HostScanWrite): Promise<{ newFindings: number, fixed: number, reopened: number }>
  /** A page of hosts. The records may be shared with other readers (a cache): read them, do not change them. */
  listHosts(query: HostQuery): Promise<Page<HostRecord>>
  getHost(address: string): Promise<HostRecord | null>
  /** Changes whenever any host is written or deleted, in every process: lets readers cache host pages. */
  hostsRevision(): Promise<string>
  /** Delete the host and its findings; false when unknown. */
  deleteHost(address: string): Promise<boolean>
  listFindings(query: FindingQuery): Promise<Page<FindingRecord>>
  getFinding(id: string): Promise<FindingRecord | null>
  /** A user's decision, kept by later scans. */
  decideFinding(id: string, status: 'accepted' | 'false_positive' | 'open', comment: string | null, by: string): Promise<FindingRecord | null>
  /** Addresses with a standing finding (neither fixed nor false positive) for the CVE, in address order. */
  hostsForCve(cveId: string): Promise<string[]>
}
