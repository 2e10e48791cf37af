// The store interface: one shape, two backends (Redis and in-memory). Shared contract tests cover both.
import type { Role } from '../access'
import type { Target, TemplateName, ScanProgress } from '../scanner/types'
import type { DataSources } from '../sources/registry'
import type { ScanStatus, WebhookEvent, WebhookFormat } from '../vocabulary'

export type { ScanStatus }

/** What the credentialed logins of a scan (or a batch) came to. A host whose login failed is never a clean host. */
export interface CredentialedSummary {
  /** Hosts a login was tried on. */
  attempted: number
  /** Hosts whose package list was read and decided. */
  succeeded: number
  /** Hosts whose collection failed, per reason (lib/credentialed/ssh.ts LOGIN_FAILURE_REASONS). */
  failed: Record<string, number>
  /** The failed hosts with their reason, address order, the first CREDENTIALED_HOSTS_KEPT. */
  hosts: Array<{ address: string, reason: string, message: string }>
}

/** How many failed hosts a summary names (the counts cover them all). */
export const CREDENTIALED_HOSTS_KEPT = 100

export interface ScanSummary {
  hostsUp: number
  hostsDown: number
  openPorts: number
  /** Of the open ports, UDP ones (present when the scan covered UDP). */
  openUdpPorts?: number
  findings: Record<'critical' | 'high' | 'medium' | 'low' | 'none' | 'unknown', number>
  /** Products the NVD index could not be checked for (NVD unreachable); re-matched later. */
  uncheckedProducts: string[]
  excluded: { address: string, reason: string }[]
  /** Present when the scan named credentials. */
  credentialed?: CredentialedSummary
  /** The vulnerability data the scan was matched against (set when it finishes). */
  dataSources?: DataSources
}

export const TERMINAL_STATUSES: readonly ScanStatus[] = ['completed', 'failed', 'cancelled']

export function isTerminal (status: ScanStatus): boolean {
  return TERMINAL_STATUSES.includes(status)
}

/** What one batch of a scan found, added up into the scan's summary when the last batch ends. */
export interface BatchSummary {
  hostsUp: number
  hostsDown: number
  openPorts: number
  openUdpPorts?: number
  findings: ScanSummary['findings']
  uncheckedProducts: string[]
  credentialed?: CredentialedSummary
  /** Set when the batch failed for good. */
  error?: string
}

/** The mutable part of a scan, set by workers and by cancellation. */
export interface ScanPatch {
  status?: ScanStatus
  startedAt?: string
  finishedAt?: string
  reason?: string
  summary?: ScanSummary
  hostsTotal?: number
  portsTotal?: number
  batches?: number
}

export interface ScanRecord {
  id: string
  status: ScanStatus
  targets: Target[]
  template: TemplateName
  ports?: string
  /** UDP asked for: the template's UDP ports, or `udpPorts`. */
  udp?: boolean
  udpPorts?: string
  /** false: no host discovery before the port scan. */
  discovery?: boolean
  /** true: the intrusive templates and checks (default logins, brute force, dos, fuzz) run too. */
  intrusive?: boolean
  priority: number
  /** SHA-256 of the normalized request, so a re-post is recognised as the same scan. */
  requestHash: string
  createdAt: string
  startedAt?: string
  finishedAt?: string
  reason?: string
  progress: ScanProgress & { percent: number }
  summary?: ScanSummary
  /** Key id (or 'service') that created the scan. */
  createdBy: string
  /** The posting key's scope at POST time; the worker leaves resolved addresses outside it out. */
  keyScope?: string[]
  /** How many host-batch jobs the scan was split into (set when planned). */
  batches?: number
  /** The schedule that started the scan, when one did. */
  scheduleId?: string
  /** Tags added to every host the scan finds up. */
  tags?: string[]
  /** The scan also covers the known hosts carrying any of these tags, resolved when it is planned. */
  targetTags?: string[]
  /** Ids of the stored credentials the scan logs in to its hosts with (lib/credentials/), tried in this order. */
  credentials?: string[]
}

/** The scan a schedule starts at each due time: POST /app/scan's body without an id. */
export interface ScheduledScan {
  /** Absent or empty when `targetTags` name the hosts. */
  targets?: Target[]
  options?: { template?: TemplateName, ports?: string, udp?: boolean, udpPorts?: string, discovery?: boolean, credentials?: string[], intrusive?: boolean }
  priority?: number
  tags?: string[]
  targetTags?: string[]
}

/**
 * A due time a schedule left out: its previous scan was still in flight (`in_flight`), or no worker ran at that time
 * (`no_worker`: when a worker comes back, the first due time it missed runs late, once, and the later ones it
 * missed are recorded so). Entries from before `reason` existed have none and mean `in_flight`.
 */
export interface SkippedRun {
  dueAt: string
  /** The scan still queued or running at that time (in_flight). */
  inFlight?: string
  reason?: 'in_flight' | 'no_worker'
}

export interface ScheduleRecord {
  id: string
  name: string
  /** Cron expression (5 fields, or 6 with seconds first). */
  cron: string
  /** IANA time zone the expression is read in. */
  timezone: string
  enabled: boolean
  scan: ScheduledScan
  createdAt: string
  updatedAt: string
  /** Key id (or 'service') that created the schedule; its scans carry it. */
  createdBy: string
  /** The creating key's scope, applied to every scan the schedule starts (narrowed by that key's scope at each run). */
  keyScope?: string[]
  /** Keys the tag of its runs' scan ids (lib/schedules.ts scheduledScanId); never leaves the server. Absent on old schedules. */
  runKey?: string
  /**
   * The next due time as last computed (at creation, at each change, after each due time); null when disabled or when
   * it does not fire within the search horizon. Absent on schedules stored before it was kept.
   */
  nextRunAt?: string | null
  /** The last run that started a scan. */
  lastRun?: { dueAt: string, scanId: string }
  /** Runs that started a scan. */
  runs: number
  /** Runs left out because the previous scan was still in flight, and the latest of them. */
  skippedTotal: number
  skipped: SkippedRun[]
}

/** What may change on a schedule after it is made. */
export interface SchedulePatch {
  name?: string
  cron?: string
  timezone?: string
  enabled?: boolean
  scan?: ScheduledScan
  /** Set with `scan`: the scope of the key that chose the new targets, which the runs keep from then on. */
  keyScope?: string[]
  /** The next due time under the changed definition. */
  nextRunAt?: string | null
  updatedAt: string
}

/**
 * What the store made of one due time of a schedule: `run` claimed it for a new scan (with `scanId`), `again` is
 * the same claim seen a second time (a retried job: make sure its scan exists), `skipped` recorded it as left out
 * (the previous scan still in flight), `stale` means a due time at or after it was already handled, `disabled`
 * and `gone` that the schedule no longer runs.
 */
export type ScheduleClaim =
  | { outcome: 'run' | 'again', schedule: ScheduleRecord }
  | { outcome: 'skipped', schedule: ScheduleRecord, inFlight: string }
  | { outcome: 'stale' | 'disabled' | 'gone' }

/** Which new findings a `finding.new` webhook is told about. */
export interface WebhookFilter {
  /** Only findings of this severity or worse. */
  minSeverity?: 'critical' | 'high' | 'medium' | 'low' | 'none'
  /** Only findings on CISA's Known Exploited Vulnerabilities list. */
  kevOnly?: boolean
  /** Only findings of this confidence or higher: a label, or a confidenceScore (0–100) to reach. */
  minConfidence?: 'high' | 'medium' | 'low' | number
}

export interface WebhookRecord {
  id: string
  url: string
  events: WebhookEvent[]
  filter: WebhookFilter
  format: WebhookFormat
  enabled: boolean
  description: string
  /** Signs each body (HMAC-SHA256); shown to the client once, at creation. */
  secret: string
  createdAt: string
  updatedAt: string
  createdBy: string
}

export interface WebhookPatch {
  url?: string
  events?: WebhookEvent[]
  filter?: WebhookFilter
  format?: WebhookFormat
  enabled?: boolean
  description?: string
  updatedAt: string
}

/** One attempt to deliver one event to one webhook. */
export interface WebhookDelivery {
  id: string
  webhookId: string
  at: string
  event: string
  /** The event's id (the same on every attempt and in the X-Vulnscan-Delivery header). */
  eventId: string
  attempt: number
  /** The HTTP status the receiver answered; null when no answer came. */
  statusCode: number | null
  /** Why the attempt failed, when it did (refused address, timeout, connection error, non-2xx answer). */
  error: string | null
  durationMs: number
  ok: boolean
  /** Whether another attempt follows this failed one. */
  willRetry: boolean
}

/**
 * An event the webhooks are to be told of, kept until its deliveries are queued (the outbox): a scan that ended
 * (written by the same step that ends it), or a host write's candidate new findings (written before the write, and
 * checked against what the write committed when it is relayed).
 */
export type OutboxEntry =
  | { kind: 'scan', scanId: string }
  | { kind: 'findings', scanId: string, scheduleId?: string, address: string, at: string, findingIds: string[] }

/** The outbox member of an entry: a scan's is fixed, so that the step that ends the scan can write it. */
export function outboxKey (entry: OutboxEntry): string {
  return entry.kind === 'scan' ? `scan|${entry.scanId}` : `findings|${JSON.stringify(entry)}`
}

export function parseOutboxKey (key: string): OutboxEntry | null {
  const bar = key.indexOf('|')
  const kind = key.slice(0, bar)
  if (kind === 'scan') return { kind: 'scan', scanId: key.slice(bar + 1) }
  if (kind === 'findings') {
    try { return JSON.parse(key.slice(bar + 1)) as OutboxEntry } catch { return null }
  }
  return null
}

/** A delivery that failed for good, kept with its body so that it can be sent again (same delivery id). */
export interface FailedDelivery {
  webhookId: string
  /** The delivery id (X-Vulnscan-Delivery), which is the event's id. */
  eventId: string
  event: string
  body: string
  failedAt: string
  attempts: number
  /** The receiver's answer to the last attempt; null when none came. */
  statusCode: number | null
  error: string
}

/** How many deliveries each webhook's log keeps, newest first. */
export const WEBHOOK_DELIVERIES_KEPT = 200

/** How many skipped runs a schedule keeps (the total is counted beyond them). */
export const SKIPPED_RUNS_KEPT = 20

export interface ApiKeyRecord {
  id: string
  label: string
  /** First characters of the key, to recognise it in lists; never enough to use it. */
  prefix: string
  hash: string
  createdAt: string
  lastUsedAt: string | null
  expiresAt: string | null
  /** Absent on keys made before roles: they act as LEGACY_ROLE (lib/access.ts). */
  role?: Role
  /** CIDRs or addresses the key may scan, within the global lists; absent or empty: the global lists alone. */
  scope?: string[]
}

/** A host key a credential accepts for one host, instead of the one recorded at the first login. */
export interface PinnedHostKey {
  /** The host's address. */
  host: string
  /** `SHA256:<base64>` as `ssh-keygen -lf` prints it. */
  fingerprint: string
}

/**
 * A stored login (lib/credentials/vault.ts). The secret never leaves the record unsealed: `sealed` holds it
 * encrypted under CREDENTIALS_KEY, bound to this record's id.
 */
export interface CredentialRecord {
  id: string
  /** Unique; scans and the CLI may name a credential by it. */
  name: string
  type: 'ssh'
  username: string
  /** Which secret `sealed` holds. */
  auth: 'privateKey' | 'password'
  sealed: string
  port: number
  /** Pinned host keys; a host without one is trusted on first use. */
  hostKeys: PinnedHostKey[]
  /** CIDRs or addresses the credential may be used on; empty: wherever the scan may go. */
  scope: string[]
  description: string
  createdAt: string
  updatedAt: string
  /** When the secret was last set (creation, or a PATCH that rotated it). */
  secretUpdatedAt: string
  createdBy: string
}

export interface CredentialPatch {
  username?: string
  auth?: CredentialRecord['auth']
  sealed?: string
  secretUpdatedAt?: string
  port?: number
  hostKeys?: PinnedHostKey[]
  scope?: string[]
  description?: string
  updatedAt: string
}

/** The host key a credential's first login to a host recorded (trust on first use). */
export interface KnownHostKey {
  fingerprint: string
  /** The key's algorithm, e.g. ssh-ed25519. */
  algorithm: string
  firstSeen: string
}

/** What may change on a key after it is made. */
export interface ApiKeyPatch {
  role?: Role
  scope?: string[]
}

/** One state-changing request, as the audit log keeps it. Never holds a key, only who held it. */
export interface AuditEntry {
  id: string
  at: string
  /** 'service' for the infrastructure key, a dynamic key's id, or null when no valid key was given. */
  keyId: string | null
  keyLabel: string | null
  method: string
  /** The route pattern, e.g. `/app/scan/:id`. */
  route: string
  /** The id the request acted on (path parameter or posted id), when there is one. */
  targetId: string | null
  ip: string
  status: number
}

/** How much of the audit log is kept. */
export interface AuditLimits {
  retentionMs: number
  maxEntries: number
}

/** Refused requests (no valid key) to state-changing routes from one address in one window. */
export interface RefusedCount {
  ip: string
  /** The window's start and end (ISO times; the end excluded). */
  windowStart: string
  windowEnd: string
  count: number
}

export interface AuditFilter {
  keyId?: string
  method?: string
  /** ISO times, inclusive. */
  since?: string
  until?: string
  status?: number
}

export interface Page<T> {
  items: T[]
  total: number
}

export interface ListOptions {
  limit: number
  offset: number
}

export interface Store {
  readonly kind: 'redis' | 'memory'
  ping(): Promise<void>
  close(): Promise<void>

  /** Create the scan unless one with that id exists; returns the stored record either way. */
  createScan(scan: ScanRecord): Promise<{ created: boolean, scan: ScanRecord }>
  getScan(id: string): Promise<ScanRecord | null>
  /**
   * Newest first. `where` keeps only the scans it passes (a scoped key's view: lib/ownership.ts); it is given the
   * scan's request (id, targets, scope, creator…), its state and progress unset, and counts every stored scan.
   */
  listScans(opts: ListOptions & { status?: ScanStatus, where?: (scan: ScanRecord) => boolean }): Promise<Page<ScanRecord>>
  /**
   * Merge a patch into a scan's state unless the scan is already terminal (completed, failed and
   * cancelled are final). Null for an unknown scan; `applied` false when it was terminal. A patch that ends the
   * scan adds its `scan` outbox entry in the same step.
   */
  updateScan(id: string, patch: ScanPatch): Promise<{ applied: boolean, scan: ScanRecord } | null>
  /**
   * The newest scan in `status` created before scan `id` with the same targets (lib/scanner/targets.ts targetsKey); null
   * when there is none, or no scan `id`.
   */
  previousScan(id: string, status: ScanStatus): Promise<ScanRecord | null>
  /** A batch's progress so far; each value only ever goes up (a re-run batch cannot move it back). */
  reportBatchProgress(id: string, batch: number, progress: { hostsDone: number, portsDone: number }): Promise<void>
  /** Record a batch as finished (once; a second call changes nothing) and return every finished batch's summary. */
  finishBatch(id: string, batch: number, summary: BatchSummary): Promise<BatchSummary[]>

  /** Remember hosts whose vendor:product could not be checked against the NVD, to match them later. */
  addPendingProducts(entries: { product: string, address: string }[]): Promise<void>
  /** vendor:product → addresses still waiting for a match. */
  pendingProducts(): Promise<Map<string, string[]>>
  /** Forget addresses once their product was matched. */
  clearPendingProduct(product: string, addresses: string[]): Promise<void>

  createApiKey(key: ApiKeyRecord): Promise<void>
  /** The key whose SHA-256 hash is given, or null (also for an expired key). */
  findApiKey(hash: string): Promise<ApiKeyRecord | null>
  listApiKeys(): Promise<ApiKeyRecord[]>
  deleteApiKey(id: string): Promise<boolean>
  touchApiKey(hash: string, at: string): Promise<void>
  /** Delete every expired key's records (listing and reading also drop those they meet); returns how many. */
  purgeExpiredApiKeys(now?: number): Promise<number>
  /** Change a key's role or scope; null when no key has that id. Tells every process (topic API_KEYS_TOPIC). */
  updateApiKey(id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | null>

  /**
   * Append to the audit log, dropping entries older than `limits.retentionMs` and the oldest beyond
   * `limits.maxEntries`. Entries are never changed.
   */
  appendAudit(entry: AuditEntry, limits: AuditLimits): Promise<void>
  /**
   * Newest first. Without a key, method or status filter a page is read by its place in the log (a time window
   * narrows it first); with one, the entries of the window are read in chunks, at most `maxEntries` of them.
   */
  listAudit(opts: ListOptions & AuditFilter): Promise<Page<AuditEntry>>
  /**
   * Count one refused request (no valid key) from `ip` in the fixed window of `windowMs` that holds `at`: one
   * counter per address and window, never an entry per request. Bounded like the audit log.
   */
  countRefused(ip: string, at: number, windowMs: number, limits: AuditLimits): Promise<void>
  /** The refused-request counters, newest window first (in a window, by address, descending). */
  listRefused(opts: ListOptions): Promise<Page<RefusedCount>>

  createSchedule(schedule: ScheduleRecord): Promise<void>
  getSchedule(id: string): Promise<ScheduleRecord | null>
  /** Newest first; `where` keeps only the schedules it passes (it reads every schedule's definition). */
  listSchedules(opts: ListOptions & { where?: (schedule: ScheduleRecord) => boolean }): Promise<Page<ScheduleRecord>>
  /** Null when no schedule has that id. Run history is kept. */
  updateSchedule(id: string, patch: SchedulePatch): Promise<ScheduleRecord | null>
  deleteSchedule(id: string): Promise<boolean>
  /**
   * Decide, atomically across processes, what one due time of a schedule does: start `scanId`, or be skipped
   * because the scan of the last run is still queued or running. Each due time is decided once. `missed` are later
   * due times that passed while no worker ran (the timer made no job for them): recorded as skipped (no_worker) in
   * the same step.
   */
  claimScheduleRun(id: string, dueAt: Date, scanId: string, missed?: Date[]): Promise<ScheduleClaim>
  /**
   * Keep a schedule's next due time, computed after a due time under the definition last changed at `forUpdatedAt`;
   * ignored when the definition changed since (its change stored a due time of its own).
   */
  setScheduleNext(id: string, nextRunAt: string | null, forUpdatedAt: string): Promise<void>

  createWebhook(webhook: WebhookRecord): Promise<void>
  getWebhook(id: string): Promise<WebhookRecord | null>
  /** Newest first. */
  listWebhooks(opts: ListOptions): Promise<Page<WebhookRecord>>
  updateWebhook(id: string, patch: WebhookPatch): Promise<WebhookRecord | null>
  /** Deletes its delivery log too. */
  deleteWebhook(id: string): Promise<boolean>
  /** Append to a webhook's delivery log, keeping the newest WEBHOOK_DELIVERIES_KEPT. */
  appendWebhookDelivery(delivery: WebhookDelivery): Promise<void>
  /** Newest first. */
  listWebhookDeliveries(webhookId: string, opts: ListOptions): Promise<Page<WebhookDelivery>>
  /** Keep a delivery that failed for good (replacing an earlier failure of the same event), while the webhook exists. */
  keepFailedDelivery(failed: FailedDelivery): Promise<void>
  /** Newest first. */
  listFailedDeliveries(webhookId: string, opts: ListOptions): Promise<Page<FailedDelivery>>
  getFailedDelivery(webhookId: string, eventId: string): Promise<FailedDelivery | null>
  /** Forget a failed delivery (it was delivered since). */
  dropFailedDelivery(webhookId: string, eventId: string): Promise<void>

  /** Keep an event for the webhooks until removeOutbox (scan ends are added by updateScan itself). */
  addOutbox(entries: OutboxEntry[]): Promise<void>
  /** Outbox entries kept for at least `olderThanMs`, oldest first, with their keys. */
  listOutbox(olderThanMs: number, limit: number): Promise<{ key: string, entry: OutboxEntry }[]>
  removeOutbox(keys: string[]): Promise<void>

  /** false (nothing written) when another credential has the name. */
  createCredential(credential: CredentialRecord): Promise<boolean>
  getCredential(id: string): Promise<CredentialRecord | null>
  getCredentialByName(name: string): Promise<CredentialRecord | null>
  /** Newest first. */
  listCredentials(opts: ListOptions): Promise<Page<CredentialRecord>>
  updateCredential(id: string, patch: CredentialPatch): Promise<CredentialRecord | null>
  /** Forgets the host keys its logins recorded too. */
  deleteCredential(id: string): Promise<boolean>
  /**
   * Trust on first use: record `key` as the host key of `host` for the credential unless one is recorded; returns
   * the recorded one either way (atomic across processes: two first logins agree on one key).
   */
  recordHostKey(credentialId: string, host: string, key: KnownHostKey): Promise<KnownHostKey>
  getHostKey(credentialId: string, host: string): Promise<KnownHostKey | null>
  /**
   * The check value of the secrets kept here (SecretBox.canary): written when none is stored (or `replace`: a key
   * rotation sealed it again), and the stored one returned.
   */
  secretsCanary(value: string, replace?: boolean): Promise<string>
}

/** The invalidation topic on which key changes (role, scope, revocation) are announced, with the key's id. */
export const API_KEYS_TOPIC = 'apikeys'

/** Whether an audit entry passes a filter (both backends filter the same way). */
export function auditMatches (e: AuditEntry, f: AuditFilter): boolean {
  if (f.keyId !== undefined && e.keyId !== f.keyId) return false
  if (f.method !== undefined && e.method !== f.method.toUpperCase()) return false
  if (f.status !== undefined && e.status !== f.status) return false
  if (f.since !== undefined && Date.parse(e.at) < Date.parse(f.since)) return false
  if (f.until !== undefined && Date.parse(e.at) > Date.parse(f.until)) return false
  return true
}
