// What the rooms of the scan lifecycle share: the job's data, the runner's dependencies and configuration, and the
// few rules every room applies (a permanent failure, a batch's job id, the ports progress counts).
import type { ExpandedHost } from '../scanner/targets'
import type { Template } from '../scanner/types'
import type { NvdService } from '../nvd/service'
import type { ScanQueue } from '../queue/types'
import type { ResultsStore } from '../store/results-types'
import type { Store } from '../store/types'
import type { SourceStore } from '../sources/source-store'
import type { ReadCachedStore } from '../sources/read-cache'
import type { Notifier } from '../webhooks/events'
import type { CredentialedScanning } from '../credentialed/scanning'

export interface ScanJobData {
  scanId: string
  /** Absent on the planning job. */
  batch?: number
  hosts?: ExpandedHost[]
}

export interface RunnerConfig {
  MAX_HOSTS: number
  SCAN_ALLOW: string
  SCAN_DENY: string
  SCAN_CONCURRENCY: number
  SCAN_HOST_CONCURRENCY: number
  SCAN_BATCH_HOSTS: number
  SCAN_TIMEOUT: number
  /** Seconds between sweeps for orphaned scans; also how old a scan must be to count as one (default 60). */
  SCAN_SWEEP_INTERVAL?: number
  /** Templates (lib/templates/): absent, none run (runners built by hand in tests). */
  TEMPLATES_DIR?: string
  TEMPLATES_SIGNING_CERT?: string
  TEMPLATES_REQUIRE_SIGNED?: boolean
}

export interface RunnerLogger {
  debug?(obj: object, msg: string): void
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export interface RunnerDeps {
  store: Store
  results: ResultsStore
  queue: ScanQueue
  nvd: NvdService
  /** CVE JSON 5 records, distribution trackers, KEV and EPSS; null matches on the NVD alone. */
  sources?: SourceStore | null
  config: RunnerConfig
  log: RunnerLogger
  /** Attempts a job gets before its failure is final (BullMQ's `attempts`; 1 in process). */
  attempts: number
  /** How often a running batch checks whether its scan was cancelled. */
  cancelPollMs?: number
  /** Told when a scan ends and when a host write finds new findings (webhooks); it never throws. */
  notifier?: Notifier
  /** Most hosts written in one recordHosts call (default 64). */
  writeBatchHosts?: number
  /** Longest a scanned host waits for its batch to fill before it is written anyway (default 250 ms). */
  writeBatchMs?: number
  /** Logs in to the hosts of scans that name credentials; absent: such scans say every login failed. */
  credentialed?: CredentialedScanning | null
}

/** What the matcher reads, for one worker: the NVD index and the other sources behind a read cache. */
export interface WorkerMatchDeps {
  nvd: NvdService['index']
  sources: ReadCachedStore | null
}

/** A failure that retrying cannot mend (bad targets, a scan gone): the scan fails at once. */
export class PermanentScanError extends Error {
  override readonly name = 'PermanentScanError'
}

export function batchJobId (scanId: string, batch: number): string {
  // '#' cannot occur in scan ids, so batch ids never collide with a scan's own id.
  return `${scanId}#b${batch}`
}

/** TCP and UDP ports scanned on each host, as progress counts them. */
export function portsPerHost (t: Template): number {
  return new Set(t.ports).size + (t.udp ? new Set(t.udpPorts).size : 0)
}
