// The results store's contract: how hosts and findings (lib/domain/) are written, listed and decided. One interface,
// two backends (PostgreSQL and in-memory).
import type { Confidence } from '../domain/confidence'
import type { Epss, FindingRecord, Kev, NewFinding } from '../domain/findings'
import type { HostRecord, HostResult, Transport } from '../domain/hosts'
import type { FindingSeverity, Severity, SeverityTally } from '../domain/severity'
import type { FindingSort, FindingSource, FindingStatus, KevFilter } from '../vocabulary'
import type { Page } from './types'
import type { ListPosition } from '../list-cursor'

/** One host's results from one scan (batch), as the worker hands them to the results store. */
export interface HostScanWrite {
  scanId: string
  at: string
  host: HostResult
  /** TCP ports this scan covered for the host: host ports outside this set are kept from earlier scans. */
  scannedPorts: number[]
  /** UDP ports this scan covered (none when it did not scan UDP): likewise for the host's UDP ports. */
  scannedUdpPorts?: number[]
  /** Findings seen now. */
  findings: NewFinding[]
  /**
   * Ports whose findings this scan settles: a finding on one of them not in `findings` becomes `fixed`.
   * Ports whose product could not be checked against the NVD (or templates without NVD matching) are left out.
   */
  settledPorts: number[]
  /** Likewise for findings on UDP ports: a TCP port's settling never touches a UDP finding on the same number, nor the reverse. */
  settledUdpPorts?: number[]
  /**
   * Ports whose exposure-check findings (source `vulnscan`) this scan settles: the checks ran there to a conclusion,
   * or the port is closed now. Kept apart from `settledPorts`, which settles CVE findings only: a scan whose
   * template runs no checks, or a re-match of stored services, says nothing of exposures.
   */
  settledChecks?: number[]
  /** Likewise for exposure-check findings on UDP ports. */
  settledUdpChecks?: number[]
  /** Tags the scan adds to the host (it never removes one); bounded as lib/tags.ts says. */
  tags?: string[]
}

/** A port as one scan saw it: open or filtered, with what service detection named. */
export interface ScanPort {
  port: number
  /** Present for UDP ports only (absent: tcp), so that snapshots of TCP-only scans stay as they were. */
  protocol?: 'udp'
  state: 'open' | 'filtered'
  service?: string
  product?: string
  version?: string
}

/** A finding one scan observed, with the fields a scan diff sorts and shows as the finding stands now. */
export interface ScanFindingRef {
  id: string
  port: number
  protocol: Transport
  cveId: string
  severity: NewFinding['severity']
  cvss: number | null
  status: FindingStatus
}

/** What one scan saw of one host: the scan's own snapshot, kept while the host is. */
export interface ScanHostRecord {
  address: string
  up: boolean
  /** The latest write of this scan for the host. */
  at: string
  /** Ports the scan covered on the host, as range text (`1-1024,3306`; lib/store/port-ranges.ts). */
  scanned: string
  /** Ports whose findings the scan settled (closed ones, and open ones matched against the vulnerability data). */
  settled: string
  /** UDP ports the scan covered, as range text; absent when it covered none. */
  scannedUdp?: string
  /** UDP ports whose findings the scan settled; absent when none. */
  settledUdp?: string
  /** The open and filtered ports among those it covered, in port order (TCP before UDP on one number). */
  ports: ScanPort[]
  /** The findings it observed, in id order. */
  findings: ScanFindingRef[]
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
  /** Only the hosts this scan saw (up or down). */
  scanId?: string
  /** Only hosts carrying this tag. */
  tag?: string
  /** Only hosts inside these networks (a key's scope: CIDRs or addresses); absent or empty: every host. */
  scope?: readonly string[]
  sort?: 'lastSeen' | 'address' | 'findings' | 'severity'
  order?: SortDirection
  /** Keyset paging: the page starts after this place in the order (offset is then 0). */
  after?: ListPosition
}

export interface FindingQuery {
  limit: number
  offset: number
  severity?: FindingSeverity
  minCvss?: number
  /** Only findings whose EPSS score is at least this (findings without one are left out). */
  minEpss?: number
  /** true: listed by any catalogue of known exploited vulnerabilities; false: by none; or by this catalogue. */
  kev?: KevFilter
  cveId?: string
  host?: string
  /** Without a status, fixed_by_distribution and potential findings are left out (the default lists). */
  status?: FindingStatus
  confidence?: Confidence
  /** Only findings decided by this source (e.g. `distribution`: package findings and banner findings the trackers decided). */
  source?: FindingSource
  /** Only findings whose confidenceScore is at least this (0–100). */
  minConfidence?: number
  /** Only the findings this scan observed on the hosts and ports it covered. */
  scanId?: string
  /** Only findings on hosts carrying this tag. */
  tag?: string
  /** Only findings on hosts inside these networks (a key's scope); absent or empty: every host. */
  scope?: readonly string[]
  /** risk: KEV (ransomware use first), then EPSS, then CVSS. */
  sort?: FindingSort
  order?: SortDirection
  /** Keyset paging: the page starts after this place in the order (offset is then 0); exports ignore it. */
  after?: ListPosition
}

/** KEV and EPSS data of CVEs, as the data sources hold them now. */
export type ExploitLookup = (cveIds: string[]) => Promise<Map<string, ExploitUpdate>>
/**
 * New KEV and EPSS data of a CVE; without `kev`, the KEV data a finding holds stays. `euKev` and `euvdId` come from
 * ENISA's EUVD once it was imported: without `euKev` the finding's EU KEV listing stays, and a null or missing
 * `euvdId` keeps the id it has (as the match-time enrichment does).
 */
export interface ExploitUpdate { kev?: Kev | null, epss: Epss | null, euKev?: boolean, euvdId?: string | null }

/** What one host write changed. */
export interface RecordCounts {
  newFindings: number
  fixed: number
  reopened: number
  /** The findings this write observed that stand after it (open or reopened), by severity: lib/finding-counts.ts's count. */
  standing: SeverityTally
}

/** A finding list to read whole (an export): the filters and order of FindingQuery, the paging optional. */
export type FindingExportQuery = Omit<FindingQuery, 'limit' | 'offset'> & { limit?: number, offset?: number }

export interface ResultsStore {
  /** Resolves when the results database answers (/health). */
  ping(): Promise<void>
  /** Idempotent: writing the same HostScanWrite twice leaves the same state (a re-run job duplicates nothing). */
  recordHost(write: HostScanWrite): Promise<RecordCounts>
  /**
   * Several hosts at once (a worker's batch), with the result of recordHost on each in turn: one transaction
   * where the backend has them, so a batch is stored whole or not at all.
   */
  recordHosts(writes: HostScanWrite[]): Promise<RecordCounts[]>
  /** A page of hosts. The records may be shared with other readers (a cache): read them, do not change them. */
  listHosts(query: HostQuery): Promise<Page<HostRecord>>
  getHost(address: string): Promise<HostRecord | null>
  /** Changes whenever any host is written or deleted, in every process: lets readers cache host pages. */
  hostsRevision(): Promise<string>
  /** Delete the host and its findings; false when unknown. */
  deleteHost(address: string): Promise<boolean>
  listFindings(query: FindingQuery): Promise<Page<FindingRecord>>
  /**
   * Every finding the query matches, in its order, read from one consistent view: findings written during the
   * read are neither skipped nor repeated, and memory stays flat however many there are.
   */
  streamFindings(query: FindingExportQuery): AsyncIterable<FindingRecord>
  getFinding(id: string): Promise<FindingRecord | null>
  /** A user's decision, kept by later scans. */
  decideFinding(id: string, status: 'accepted' | 'false_positive' | 'open', comment: string | null, by: string): Promise<FindingRecord | null>
  /** Replace the host's tags with `tags` (a tag set, lib/tags.ts); null when the host is unknown. */
  setHostTags(address: string, tags: string[]): Promise<HostRecord | null>
  /**
   * Add `tags` to the host's and remove `remove` from them in one step (a concurrent change is not lost); null when
   * the host is unknown. Throws TooManyTagsError when the host would carry more than MAX_TAGS.
   */
  addHostTags(address: string, tags: string[], remove?: string[]): Promise<HostRecord | null>
  /** Addresses of every host carrying any of `tags`, in address order (what a scan's targetTags cover). */
  hostsWithTags(tags: string[]): Promise<string[]>
  /** Addresses with a standing finding (neither fixed nor false positive) for the CVE, in address order. */
  hostsForCve(cveId: string): Promise<string[]>
  /**
   * Bring every finding's KEV and EPSS data up to date from `lookup` (called with batches of CVE ids), without a
   * re-scan. Returns how many findings changed.
   */
  refreshExploitContext(lookup: ExploitLookup): Promise<number>
  /** What one scan saw of each host it wrote, in address order; empty for a scan that wrote none (or an unknown id). */
  scanHosts(scanId: string): Promise<ScanHostRecord[]>
}
