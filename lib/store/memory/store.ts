// The embedded store: everything in process memory, nothing survives a restart.
import { API_KEYS_TOPIC, type CredentialPatch, type CredentialRecord, type KnownHostKey, auditMatches, isTerminal, SKIPPED_RUNS_KEPT, WEBHOOK_DELIVERIES_KEPT, type WebhookDelivery, type WebhookPatch, type WebhookRecord, type ScheduleClaim, type SchedulePatch, type ScheduleRecord, type ApiKeyPatch, type AuditEntry, type AuditFilter, type ApiKeyRecord, type BatchSummary, type ListOptions, type Page, type ScanPatch, type ScanRecord, type ScanStatus, type Store } from '../types'
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

  async listScans (opts: ListOptions & { status?: ScanStatus }): Promise<Page<ScanRecord>> {
    const all: ScanRecord[] = []
    for (let i = this.scanOrder.length - 1; i >= 0; i--) {
      const s = this.scans.get(this.scanOrder[i])
      if (s && (opts.status === undefined || s.status === opts.status)) all.push(s)
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

  async appendAudit (entry: AuditEntry, retentionMs: number): Promise<void> {
    const cutoff = Date.now() - retentionMs
    let drop = 0
    while (drop < this.audit.length && Date.parse(this.audit[drop].at) < cutoff) drop++
    if (drop > 0) this.audit.splice(0, drop)
    this.audit.push({ ...entry })
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

  async listSchedules (opts: ListOptions): Promise<Page<ScheduleRecord>> {
    const all = [...this.schedules.values()].reverse()
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

  async claimScheduleRun (id: string, dueAt: Date, scanId: string): Promise<ScheduleClaim> {
    const s = this.schedules.get(id)
    if (!s) return { outcome: 'gone' }
    if (!s.enabled) return { outcome: 'disabled' }
    const due = dueAt.getTime()
    if (due <= (this.scheduleSeen.get(id) ?? -1)) {
      return s.lastRun?.scanId === scanId ? { outcome: 'again', schedule: structuredClone(s) } : { outcome: 'stale' }
    }
    this.scheduleSeen.set(id, due)
    const last = s.lastRun === undefined ? undefined : this.scans.get(s.lastRun.scanId)
    if (last !== undefined && !isTerminal(last.status)) {
      s.skippedTotal++
      s.skipped = [{ dueAt: dueAt.toISOString(), inFlight: last.id }, ...s.skipped].slice(0, SKIPPED_RUNS_KEPT)
      return { outcome: 'skipped', schedule: structuredClone(s), inFlight: last.id }
    }
    s.lastRun = { dueAt: dueAt.toISOString(), scanId }
    s.runs++
    return { outcome: 'run', schedule: structuredClone(s) }
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
