// The embedded store: everything in process memory, nothing survives a restart.
import { API_KEYS_TOPIC, type CredentialPatch, type CredentialRecord, type KnownHostKey, auditMatches, isTerminal, outboxKey, parseOutboxKey, type FailedDelivery, type OutboxEntry, SKIPPED_RUNS_KEPT, WEBHOOK_DELIVERIES_KEPT, type WebhookDelivery, type WebhookPatch, type WebhookRecord, type ScheduleClaim, type SchedulePatch, type ScheduleRecord, type ApiKeyPatch, type AuditEntry, type AuditFilter, type AuditLimits, type RefusedCount, type ApiKeyRecord, type BatchSummary, type ListOptions, type Page, type ScanPatch, type ScanRecord, type ScanStatus, type Store } from '../types'
import { percentOf } from '../scan-progress'
import type { InvalidationChannel } from '../../invalidation'
import { ScanEventHub } from '../../scan-events'
import { targetsKey } from '../../scanner/targets'

export class MemoryStore implements Store {
  readonly kind = 'memory' as const
  protected scans = new Map<string, ScanRecord>()
  /** Scan ids, oldest first. */
  protected scanOrder: string[] = []
  protected keys = new Map<string, ApiKeyRecord>()
  protected batchProgress = new Map<string, Map<number, { hostsDone: number, portsDone: number }>>()
  protected batchDone = new Map<string, Map<number, BatchSummary>>()
  protected pending = new Map<string, Set<string>>()
  /** Oldest first. */
  protected audit: AuditEntry[] = []
  /** Refused-request counters by `<window start>|<ip>`, the last counted last. */
  protected refused = new Map<string, RefusedCount>()
  /** Oldest first (Map keeps insertion order). */
  protected schedules = new Map<string, ScheduleRecord>()
  /** The latest due time (ms) each schedule decided, run or skipped. */
  protected scheduleSeen = new Map<string, number>()
  protected webhooks = new Map<string, WebhookRecord>()
  /** Newest first, per webhook. */
  protected deliveries = new Map<string, WebhookDelivery[]>()

  /** Oldest first. */
  protected credentials = new Map<string, CredentialRecord>()
  /** `<credential id> <host>` → the key its first login recorded. */
  protected hostKeys = new Map<string, KnownHostKey>()
  protected canary: string | null = null

  constructor (private readonly invalidation?: InvalidationChannel) {}
  /** Scan changes, for streams that follow a scan (the embedded counterpart of Redis pub/sub). */
  readonly events = new ScanEventHub()

  async ping (): Promise<void> {}
  async close (): Promise<void> {}

  async createScan (scan: ScanRecord): Promise<{ created: boolean, scan: ScanRecord }> {
    const existing = this.scans.get(scan.id)
    if (existing) return { created: false, scan: structuredClone(existing) }
    this.scans.set(scan.id, structuredClone(scan))
    this.scanOrder.push(scan.id)
    this.events.changed(scan.id)
    return { created: true, scan: structuredClone(scan) }
  }

  async getScan (id: string): Promise<ScanRecord | null> {
    const s = this.scans.get(id)
    return s ? this.view(s) : null
  }

  /** A copy with progress summed over the batches. */
  private view (s: ScanRecord): ScanRecord {
    const out = structuredClone(s)
    let hostsDone = 0
    let portsDone = 0
    for (const p of this.batchProgress.get(s.id)?.values() ?? []) {
      hostsDone += p.hostsDone
      portsDone += p.portsDone
    }
    out.progress = { ...out.progress, hostsDone, portsDone }
    out.progress.percent = percentOf(out)
    return out
  }

  async updateScan (id: string, patch: ScanPatch): Promise<{ applied: boolean, scan: ScanRecord } | null> {
    const s = this.scans.get(id)
    if (!s) return null
    if (isTerminal(s.status)) return { applied: false, scan: this.view(s) }
    const { hostsTotal, portsTotal, ...rest } = patch
    Object.assign(s, structuredClone(rest))
    if (hostsTotal !== undefined) s.progress.hostsTotal = hostsTotal
    if (portsTotal !== undefined) s.progress.portsTotal = portsTotal
    if (isTerminal(s.status)) this.outbox.set(outboxKey({ kind: 'scan', scanId: id }), Date.now())
    this.events.changed(id)
    return { applied: true, scan: this.view(s) }
  }

  async previousScan (id: string, status: ScanStatus): Promise<ScanRecord | null> {
    const scan = this.scans.get(id)
    if (scan === undefined) return null
    const key = targetsKey(scan.targets)
    const created = Date.parse(scan.createdAt)
    // Newest first, as the Redis store walks its index of the same targets.
    for (let i = this.scanOrder.length - 1; i >= 0; i--) {
      const s = this.scans.get(this.scanOrder[i])
      if (s === undefined || s.id === id || s.status !== status || !(Date.parse(s.createdAt) < created)) continue
      if (targetsKey(s.targets) === key) return this.view(s)
    }
    return null
  }

  async reportBatchProgress (id: string, batch: number, progress: { hostsDone: number, portsDone: number }): Promise<void> {
    // A scan that ended keeps the progress it had then (a batch still running does not move it).
    const scan = this.scans.get(id)
    if (scan !== undefined && isTerminal(scan.status)) return
    let m = this.batchProgress.get(id)
    if (!m) this.batchProgress.set(id, m = new Map())
    const cur = m.get(batch) ?? { hostsDone: 0, portsDone: 0 }
    m.set(batch, { hostsDone: Math.max(cur.hostsDone, progress.hostsDone), portsDone: Math.max(cur.portsDone, progress.portsDone) })
    this.events.changed(id)
  }

  async finishBatch (id: string, batch: number, summary: BatchSummary): Promise<BatchSummary[]> {
    let m = this.batchDone.get(id)
    if (!m) this.batchDone.set(id, m = new Map())
    if (!m.has(batch)) m.set(batch, structuredClone(summary))
    this.events.changed(id)
    return [...m.values()].map((b) => structuredClone(b))
  }

  async listScans (opts: ListOptions & { status?: ScanStatus, where?: (scan: ScanRecord) => boolean }): Promise<Page<ScanRecord>> {
    const all: ScanRecord[] = []
    for (let i = this.scanOrder.length - 1; i >= 0; i--) {
      const s = this.scans.get(this.scanOrder[i])
      if (s && (opts.status === undefined || s.status === opts.status) && (opts.where === undefined || opts.where(s))) all.push(s)
    }
    return { items: all.slice(opts.offset, opts.offset + opts.limit).map((s) => this.view(s)), total: all.length }
  }

  async addPendingProducts (entries: { product: string, address: string }[]): Promise<void> {
    for (const { product, address } of entries) {
      let set = this.pending.get(product)
      if (!set) this.pending.set(product, set = new Set())
      set.add(address)
    }
  }

  async pendingProducts (): Promise<Map<string, string[]>> {
    return new Map([...this.pending].map(([p, a]) => [p, [...a].sort()]))
  }

  async clearPendingProduct (product: string, addresses: string[]): Promise<void> {
    const set = this.pending.get(product)
    if (!set) return
    for (const a of addresses) set.delete(a)
    if (set.size === 0) this.pending.delete(product)
  }

  async createApiKey (key: ApiKeyRecord): Promise<void> {
    this.keys.set(key.hash, structuredClone(key))
  }

  async findApiKey (hash: string): Promise<ApiKeyRecord | null> {
    const k = this.keys.get(hash)
    if (!k) return null
    if (k.expiresAt !== null && Date.parse(k.expiresAt) <= Date.now()) {
      this.keys.delete(hash)
      return null
    }
    return structuredClone(k)
  }

  async purgeExpiredApiKeys (now = Date.now()): Promise<number> {
    let n = 0
    for (const [hash, k] of this.keys) {
      if (k.expiresAt !== null && Date.parse(k.expiresAt) <= now) {
        this.keys.delete(hash)
        n++
      }
    }
    return n
  }

  async listApiKeys (): Promise<ApiKeyRecord[]> {
    await this.purgeExpiredApiKeys()
    return [...this.keys.values()].map((k) => structuredClone(k)).sort((a, b) => a.createdAt.localeCompare(b.createdAt))
  }

  async deleteApiKey (id: string): Promise<boolean> {
    for (const [hash, k] of this.keys) {
      if (k.id === id) {
        this.keys.delete(hash)
        await this.invalidation?.publish(API_KEYS_TOPIC, id)
        return true
      }
    }
    return false
  }

  async updateApiKey (id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | null> {
    for (const k of this.keys.values()) {
      if (k.id !== id) continue
      if (patch.role !== undefined) k.role = patch.role
      if (patch.scope !== undefined) k.scope = [...patch.scope]
      await this.invalidation?.publish(API_KEYS_TOPIC, id)
      return structuredClone(k)
    }
    return null
  }

  async appendAudit (entry: AuditEntry, limits: AuditLimits): Promise<void> {
    const cutoff = Date.now() - limits.retentionMs
    let drop = 0
    while (drop < this.audit.length && Date.parse(this.audit[drop].at) < cutoff) drop++
    drop = Math.max(drop, this.audit.length + 1 - limits.maxEntries)
    if (drop > 0) this.audit.splice(0, drop)
    this.audit.push({ ...entry })
  }

  async countRefused (ip: string, at: number, windowMs: number, limits: AuditLimits): Promise<void> {
    const start = at - (at % windowMs)
    const key = `${start}|${ip}`
    const hit = this.refused.get(key)
    // Map order is the order counters were made; a counted one moves to the end, as the newest.
    this.refused.delete(key)
    this.refused.set(key, hit === undefined ? { ip, windowStart: new Date(start).toISOString(), windowEnd: new Date(start + windowMs).toISOString(), count: 1 } : { ...hit, count: hit.count + 1 })
    const cutoff = Date.now() - limits.retentionMs
    for (const [k, c] of this.refused) {
      if (this.refused.size <= limits.maxEntries && Date.parse(c.windowEnd) >= cutoff) break
      this.refused.delete(k)
    }
  }

  async listRefused (opts: ListOptions): Promise<Page<RefusedCount>> {
    // Newest window first, then by address from the end, as the Redis store's sorted set reads them.
    const all = [...this.refused.values()].sort((a, b) => b.windowStart.localeCompare(a.windowStart) || (a.ip < b.ip ? 1 : a.ip > b.ip ? -1 : 0))
    return { items: all.slice(opts.offset, opts.offset + opts.limit).map((c) => ({ ...c })), total: all.length }
  }

  async listAudit (opts: ListOptions & AuditFilter): Promise<Page<AuditEntry>> {
    const matching = this.audit.filter((e) => auditMatches(e, opts)).reverse()
    return { items: matching.slice(opts.offset, opts.offset + opts.limit).map((e) => ({ ...e })), total: matching.length }
  }

  async touchApiKey (hash: string, at: string): Promise<void> {
    const k = this.keys.get(hash)
    if (k) k.lastUsedAt = at
  }

  async createSchedule (schedule: ScheduleRecord): Promise<void> {
    this.schedules.set(schedule.id, structuredClone(schedule))
  }

  async getSchedule (id: string): Promise<ScheduleRecord | null> {
    const s = this.schedules.get(id)
    return s ? structuredClone(s) : null
  }

  async listSchedules (opts: ListOptions & { where?: (schedule: ScheduleRecord) => boolean }): Promise<Page<ScheduleRecord>> {
    const all = [...this.schedules.values()].reverse().filter((s) => opts.where === undefined || opts.where(s))
    return { items: all.slice(opts.offset, opts.offset + opts.limit).map((s) => structuredClone(s)), total: all.length }
  }

  async updateSchedule (id: string, patch: SchedulePatch): Promise<ScheduleRecord | null> {
    const s = this.schedules.get(id)
    if (!s) return null
    Object.assign(s, structuredClone(patch))
    return structuredClone(s)
  }

  async deleteSchedule (id: string): Promise<boolean> {
    this.scheduleSeen.delete(id)
    return this.schedules.delete(id)
  }

  async claimScheduleRun (id: string, dueAt: Date, scanId: string, missed: Date[] = []): Promise<ScheduleClaim> {
    const s = this.schedules.get(id)
    if (!s) return { outcome: 'gone' }
    if (!s.enabled) return { outcome: 'disabled' }
    const due = dueAt.getTime()
    if (due <= (this.scheduleSeen.get(id) ?? -1)) {
      return s.lastRun?.scanId === scanId ? { outcome: 'again', schedule: structuredClone(s) } : { outcome: 'stale' }
    }
    this.scheduleSeen.set(id, Math.max(due, ...missed.map((m) => m.getTime())))
    const recordMissed = (): void => {
      for (const m of missed) s.skipped.unshift({ dueAt: m.toISOString(), reason: 'no_worker' })
      s.skippedTotal += missed.length
      s.skipped = s.skipped.slice(0, SKIPPED_RUNS_KEPT)
    }
    const last = s.lastRun === undefined ? undefined : this.scans.get(s.lastRun.scanId)
    if (last !== undefined && !isTerminal(last.status)) {
      s.skippedTotal++
      s.skipped = [{ dueAt: dueAt.toISOString(), inFlight: last.id, reason: 'in_flight' as const }, ...s.skipped].slice(0, SKIPPED_RUNS_KEPT)
      recordMissed()
      return { outcome: 'skipped', schedule: structuredClone(s), inFlight: last.id }
    }
    recordMissed()
    s.lastRun = { dueAt: dueAt.toISOString(), scanId }
    s.runs++
    return { outcome: 'run', schedule: structuredClone(s) }
  }

  async setScheduleNext (id: string, nextRunAt: string | null, forUpdatedAt: string): Promise<void> {
    const s = this.schedules.get(id)
    if (s !== undefined && s.updatedAt === forUpdatedAt) s.nextRunAt = nextRunAt
  }

  async createWebhook (webhook: WebhookRecord): Promise<void> {
    this.webhooks.set(webhook.id, structuredClone(webhook))
  }

  async getWebhook (id: string): Promise<WebhookRecord | null> {
    const w = this.webhooks.get(id)
    return w ? structuredClone(w) : null
  }

  async listWebhooks (opts: ListOptions): Promise<Page<WebhookRecord>> {
    const all = [...this.webhooks.values()].reverse()
    return { items: all.slice(opts.offset, opts.offset + opts.limit).map((w) => structuredClone(w)), total: all.length }
  }

  async updateWebhook (id: string, patch: WebhookPatch): Promise<WebhookRecord | null> {
    const w = this.webhooks.get(id)
    if (!w) return null
    Object.assign(w, structuredClone(patch))
    return structuredClone(w)
  }

  async deleteWebhook (id: string): Promise<boolean> {
    this.deliveries.delete(id)
    this.failed.delete(id)
    return this.webhooks.delete(id)
  }

  async appendWebhookDelivery (delivery: WebhookDelivery): Promise<void> {
    if (!this.webhooks.has(delivery.webhookId)) return
    const log = this.deliveries.get(delivery.webhookId) ?? []
    log.unshift(structuredClone(delivery))
    if (log.length > WEBHOOK_DELIVERIES_KEPT) log.length = WEBHOOK_DELIVERIES_KEPT
    this.deliveries.set(delivery.webhookId, log)
  }

  async listWebhookDeliveries (webhookId: string, opts: ListOptions): Promise<Page<WebhookDelivery>> {
    const log = this.deliveries.get(webhookId) ?? []
    return { items: log.slice(opts.offset, opts.offset + opts.limit).map((d) => structuredClone(d)), total: log.length }
  }

  private readonly failed = new Map<string, Map<string, FailedDelivery>>()
  private readonly outbox = new Map<string, number>()

  async keepFailedDelivery (failed: FailedDelivery): Promise<void> {
    if (!this.webhooks.has(failed.webhookId)) return
    const m = this.failed.get(failed.webhookId) ?? new Map<string, FailedDelivery>()
    m.delete(failed.eventId)
    m.set(failed.eventId, structuredClone(failed))
    this.failed.set(failed.webhookId, m)
  }

  async listFailedDeliveries (webhookId: string, opts: ListOptions): Promise<Page<FailedDelivery>> {
    const all = [...(this.failed.get(webhookId)?.values() ?? [])].reverse()
    return { items: all.slice(opts.offset, opts.offset + opts.limit).map((d) => structuredClone(d)), total: all.length }
  }

  async getFailedDelivery (webhookId: string, eventId: string): Promise<FailedDelivery | null> {
    const f = this.failed.get(webhookId)?.get(eventId)
    return f === undefined ? null : structuredClone(f)
  }

  async dropFailedDelivery (webhookId: string, eventId: string): Promise<void> {
    this.failed.get(webhookId)?.delete(eventId)
  }

  async addOutbox (entries: OutboxEntry[]): Promise<void> {
    for (const e of entries) this.outbox.set(outboxKey(e), Date.now())
  }

  async listOutbox (olderThanMs: number, limit: number): Promise<{ key: string, entry: OutboxEntry }[]> {
    const out: { key: string, entry: OutboxEntry }[] = []
    const before = Date.now() - olderThanMs
    for (const [key, at] of [...this.outbox].sort((a, b) => a[1] - b[1])) {
      if (at > before || out.length >= limit) break
      const entry = parseOutboxKey(key)
      if (entry !== null) out.push({ key, entry })
    }
    return out
  }

  async removeOutbox (keys: string[]): Promise<void> {
    for (const k of keys) this.outbox.delete(k)
  }

  async createCredential (credential: CredentialRecord): Promise<boolean> {
    for (const c of this.credentials.values()) if (c.name === credential.name) return false
    this.credentials.set(credential.id, structuredClone(credential))
    return true
  }

  async getCredential (id: string): Promise<CredentialRecord | null> {
    const c = this.credentials.get(id)
    return c ? structuredClone(c) : null
  }

  async getCredentialByName (name: string): Promise<CredentialRecord | null> {
    for (const c of this.credentials.values()) if (c.name === name) return structuredClone(c)
    return null
  }

  async listCredentials (opts: ListOptions): Promise<Page<CredentialRecord>> {
    const all = [...this.credentials.values()].reverse()
    return { items: all.slice(opts.offset, opts.offset + opts.limit).map((c) => structuredClone(c)), total: all.length }
  }

  async updateCredential (id: string, patch: CredentialPatch): Promise<CredentialRecord | null> {
    const c = this.credentials.get(id)
    if (!c) return null
    Object.assign(c, structuredClone(patch))
    return structuredClone(c)
  }

  async deleteCredential (id: string): Promise<boolean> {
    for (const key of this.hostKeys.keys()) if (key.startsWith(`${id} `)) this.hostKeys.delete(key)
    return this.credentials.delete(id)
  }

  async recordHostKey (credentialId: string, host: string, key: KnownHostKey): Promise<KnownHostKey> {
    const k = `${credentialId} ${host}`
    const known = this.hostKeys.get(k)
    if (known !== undefined) return { ...known }
    this.hostKeys.set(k, { ...key })
    return { ...key }
  }

  async getHostKey (credentialId: string, host: string): Promise<KnownHostKey | null> {
    const known = this.hostKeys.get(`${credentialId} ${host}`)
    return known === undefined ? null : { ...known }
  }

  async secretsCanary (value: string, replace = false): Promise<string> {
    if (this.canary === null || replace) this.canary = value
    return this.canary
  }
}
