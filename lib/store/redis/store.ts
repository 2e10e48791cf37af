// The Redis store: records as JSON strings under `<prefix>:<kind>:<id>`, sorted sets for listing. Hosts and
// findings live in the results store (results-redis.ts) under the same prefix.
import type { Redis } from 'ioredis'
import { API_KEYS_TOPIC, type CredentialPatch, type CredentialRecord, type KnownHostKey, auditMatches, SKIPPED_RUNS_KEPT, WEBHOOK_DELIVERIES_KEPT, type WebhookDelivery, type WebhookPatch, type WebhookRecord, type ScheduleClaim, type SchedulePatch, type ScheduleRecord, type ApiKeyPatch, type AuditEntry, type AuditFilter, type ApiKeyRecord, type BatchSummary, ListOptions, Page, ScanPatch, ScanRecord, ScanStatus, Store } from '../types'
import { percentOf } from '../scan-progress'
import { keySegment } from './key-segment'
import { channelName } from '../../invalidation'
import { scanEventsChannel } from '../../scan-events'
import { targetsDigest, targetsKey } from '../../scanner/targets'

/** Scans of the same targets read at a time while looking for a previous one in some status. */
const PREVIOUS_PAGE = 50

// Merge fields into a scan's state hash unless its status is terminal; move it between status sets.
// KEYS: state hash, status-set prefix. ARGV: scan id, score, then field/value pairs.
const UPDATE_SCAN_LUA = `
local cur = redis.call('HGET', KEYS[1], 'status')
if not cur then return -1 end
if cur == 'completed' or cur == 'failed' or cur == 'cancelled' then return 0 end
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
local new = redis.call('HGET', KEYS[1], 'status')
if new ~= cur then
  redis.call('ZREM', KEYS[2] .. cur, ARGV[1])
  redis.call('ZADD', KEYS[2] .. new, ARGV[2], ARGV[1])
end
return 1
`

// Raise a batch's progress counters, never lower them. KEYS: progress hash. ARGV: batch, hostsDone, portsDone.
const BATCH_PROGRESS_LUA = `
local fields = { ARGV[1] .. ':h', ARGV[1] .. ':p' }
for i, f in ipairs(fields) do
  local v = tonumber(ARGV[i + 1])
  local cur = tonumber(redis.call('HGET', KEYS[1], f) or '0')
  if v > cur then redis.call('HSET', KEYS[1], f, v) end
end
return 1
`

// Decide one due time of a schedule. KEYS: definition, run-state hash, skipped list, the last run's scan state hash.
// ARGV: due ms, due ISO, new scan id, the last run's scan id as read before (empty: none), entries kept, skipped entry.
// The last run is compared with what the caller read: when another process moved it meanwhile, 'retry'.
const CLAIM_SCHEDULE_LUA = `
local def = redis.call('GET', KEYS[1])
if not def then return 'gone' end
if cjson.decode(def).enabled == false then return 'disabled' end
local last = redis.call('HGET', KEYS[2], 'lastScanId') or ''
if last ~= ARGV[4] then return 'retry' end
local due = tonumber(ARGV[1])
local seen = tonumber(redis.call('HGET', KEYS[2], 'seen') or '-1')
if due <= seen then
  if last == ARGV[3] then return 'again' end
  return 'stale'
end
redis.call('HSET', KEYS[2], 'seen', ARGV[1])
if last ~= '' then
  local status = redis.call('HGET', KEYS[4], 'status')
  if status == 'queued' or status == 'running' then
    redis.call('HINCRBY', KEYS[2], 'skippedTotal', 1)
    redis.call('LPUSH', KEYS[3], ARGV[6])
    redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[5]) - 1)
    return 'skipped'
  end
end
redis.call('HSET', KEYS[2], 'lastScanId', ARGV[3], 'lastDue', ARGV[2])
redis.call('HINCRBY', KEYS[2], 'runs', 1)
return 'run'
`

// Replace a value only if it is still the one read. KEYS: the key. ARGV: the value read, the new value.
const REPLACE_IF_LUA = `
local cur = redis.call('GET', KEYS[1])
if not cur then return -1 end
if cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`

// Log a webhook delivery while the webhook exists (a log outliving it would never be deleted), keeping the newest.
// KEYS: webhook record, its delivery list. ARGV: entry, entries kept.
const APPEND_DELIVERY_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('LPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
return 1
`

// Create a credential unless its name is taken. KEYS: record, name index, list. ARGV: id, name, record, score.
const CREATE_CREDENTIAL_LUA = `
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[1]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
return 1
`

type RedisWithCommands = Redis & {
  vulnscanCreateCredential(record: string, names: string, list: string, id: string, name: string, value: string, score: number): Promise<number>
  vulnscanAppendDelivery(webhook: string, list: string, entry: string, kept: number): Promise<number>
  vulnscanReplaceIf(key: string, read: string, next: string): Promise<number>
  vulnscanClaimSchedule(definition: string, runs: string, skipped: string, lastScanState: string, dueMs: number, dueIso: string, scanId: string, last: string, kept: number, skippedEntry: string): Promise<string>
  vulnscanUpdateScan(stateKey: string, statusPrefix: string, id: string, score: number, ...fields: string[]): Promise<number>
  vulnscanBatchProgress(key: string, batch: number, hostsDone: number, portsDone: number): Promise<number>
}

// The scan request is immutable JSON; what changes lives in a hash so that concurrent workers update
// fields without read-modify-write races.
const STATE_FIELDS = ['status', 'startedAt', 'finishedAt', 'reason', 'summary', 'hostsTotal', 'portsTotal', 'batches'] as const

export class RedisStore implements Store {
  readonly kind = 'redis' as const
  private readonly redis: RedisWithCommands

  private readonly channel: string

  constructor (redis: Redis, private readonly prefix: string) {
    this.channel = scanEventsChannel(prefix)
    if (typeof (redis as unknown as Partial<RedisWithCommands>).vulnscanUpdateScan !== 'function') {
      redis.defineCommand('vulnscanUpdateScan', { numberOfKeys: 2, lua: UPDATE_SCAN_LUA })
      redis.defineCommand('vulnscanBatchProgress', { numberOfKeys: 1, lua: BATCH_PROGRESS_LUA })
      redis.defineCommand('vulnscanAppendDelivery', { numberOfKeys: 2, lua: APPEND_DELIVERY_LUA })
      redis.defineCommand('vulnscanReplaceIf', { numberOfKeys: 1, lua: REPLACE_IF_LUA })
      redis.defineCommand('vulnscanClaimSchedule', { numberOfKeys: 4, lua: CLAIM_SCHEDULE_LUA })
      redis.defineCommand('vulnscanCreateCredential', { numberOfKeys: 3, lua: CREATE_CREDENTIAL_LUA })
    }
    this.redis = redis as RedisWithCommands
  }

  key (...parts: string[]): string {
    return [this.prefix, ...parts].join(':')
  }

  /** A scan's key, or one of its parts: the id goes through keySegment so that no id reaches another scan's keys. */
  private scanKey (id: string, part?: 'state' | 'progress' | 'batches'): string {
    return part === undefined ? this.key('scan', keySegment(id)) : this.key('scan', keySegment(id), part)
  }

  async ping (): Promise<void> {
    await this.redis.ping()
  }

  /** Tell every process following this scan that it may have changed (best effort: streams also re-read now and then). */
  private changed (id: string): void {
    this.redis.publish(this.channel, id).catch(() => {})
  }

  /** The connection belongs to whoever opened it (lib/backends.ts), which closes it. */
  async close (): Promise<void> {}

  async createScan (scan: ScanRecord): Promise<{ created: boolean, scan: ScanRecord }> {
    const { status, startedAt, finishedAt, reason, summary, progress, batches, ...request } = scan
    const ok = await this.redis.set(this.scanKey(scan.id), JSON.stringify(request), 'NX')
    if (ok === 'OK') {
      const score = Date.parse(scan.createdAt)
      await this.redis.multi()
        .hset(this.scanKey(scan.id, 'state'), this.stateFields({ status, startedAt, finishedAt, reason, summary, hostsTotal: progress.hostsTotal, portsTotal: progress.portsTotal, batches }))
        .zadd(this.key('scans'), score, scan.id)
        .zadd(this.key('scans', 'status', scan.status), score, scan.id)
        .zadd(this.scansOfTargetsKey(scan.targets), score, scan.id)
        .exec()
      this.changed(scan.id)
      return { created: true, scan }
    }
    const existing = await this.getScan(scan.id)
    if (!existing) return this.createScan(scan)
    return { created: false, scan: existing }
  }

  /** The scans of one target list by creation time (lib/scanner/targets.ts targetsKey): how previousScan finds a scan's predecessors. */
  private scansOfTargetsKey (targets: ScanRecord['targets']): string {
    return this.key('scans', 'targets', targetsDigest(targets))
  }

  async previousScan (id: string, status: ScanStatus): Promise<ScanRecord | null> {
    const scan = await this.getScan(id)
    if (scan === null) return null
    const set = this.scansOfTargetsKey(scan.targets)
    const key = targetsKey(scan.targets)
    const max = `(${Date.parse(scan.createdAt)}`
    for (let offset = 0; ; offset += PREVIOUS_PAGE) {
      const ids = await this.redis.zrevrangebyscore(set, max, '-inf', 'LIMIT', offset, PREVIOUS_PAGE)
      // The digest names the list; the key itself is compared, so two lists never pass for each other.
      const found = (await this.readScans(ids)).find((s) => s.id !== id && s.status === status && targetsKey(s.targets) === key)
      if (found !== undefined) return found
      if (ids.length < PREVIOUS_PAGE) return null
    }
  }

  private stateFields (patch: ScanPatch): Record<string, string> {
    const out: Record<string, string> = {}
    for (const f of STATE_FIELDS) {
      const v = patch[f]
      if (v !== undefined) out[f] = typeof v === 'string' ? v : JSON.stringify(v)
    }
    return out
  }

  private async readScans (ids: string[]): Promise<ScanRecord[]> {
    if (ids.length === 0) return []
    const m = this.redis.multi()
    for (const id of ids) {
      m.get(this.scanKey(id)).hgetall(this.scanKey(id, 'state')).hgetall(this.scanKey(id, 'progress'))
    }
    const res = (await m.exec() ?? []).map(([err, v]) => { if (err) throw err; return v })
    const out: ScanRecord[] = []
    for (let i = 0; i < ids.length; i++) {
      const raw = res[i * 3] as string | null
      if (raw === null) continue
      const state = res[i * 3 + 1] as Record<string, string>
      const prog = res[i * 3 + 2] as Record<string, string>
      let hostsDone = 0
      let portsDone = 0
      for (const [f, v] of Object.entries(prog)) {
        if (f.endsWith(':h')) hostsDone += Number(v)
        else portsDone += Number(v)
      }
      const scan = JSON.parse(raw) as ScanRecord
      scan.status = (state.status ?? 'queued') as ScanStatus
      if (state.startedAt) scan.startedAt = state.startedAt
      if (state.finishedAt) scan.finishedAt = state.finishedAt
      if (state.reason) scan.reason = state.reason
      if (state.summary) scan.summary = JSON.parse(state.summary)
      if (state.batches) scan.batches = Number(state.batches)
      scan.progress = { hostsTotal: Number(state.hostsTotal ?? 0), hostsDone, portsTotal: Number(state.portsTotal ?? 0), portsDone, percent: 0 }
      scan.progress.percent = percentOf(scan)
      out.push(scan)
    }
    return out
  }

  async getScan (id: string): Promise<ScanRecord | null> {
    return (await this.readScans([id]))[0] ?? null
  }

  async listScans (opts: ListOptions & { status?: ScanStatus }): Promise<Page<ScanRecord>> {
    const set = opts.status ? this.key('scans', 'status', opts.status) : this.key('scans')
    const [[, total], [, ids]] = await this.redis.multi()
      .zcard(set)
      .zrevrange(set, opts.offset, opts.offset + opts.limit - 1)
      .exec() as [[null, number], [null, string[]]]
    return { items: await this.readScans(ids), total }
  }

  async updateScan (id: string, patch: ScanPatch): Promise<{ applied: boolean, scan: ScanRecord } | null> {
    const raw = await this.redis.get(this.scanKey(id))
    if (raw === null) return null
    const score = Date.parse((JSON.parse(raw) as ScanRecord).createdAt)
    const fields = Object.entries(this.stateFields(patch)).flat()
    const r = await this.redis.vulnscanUpdateScan(this.scanKey(id, 'state'), this.key('scans', 'status', ''), id, score, ...fields)
    if (r === 1) this.changed(id)
    const scan = await this.getScan(id)
    if (r === -1 || scan === null) return null
    return { applied: r === 1, scan }
  }

  async reportBatchProgress (id: string, batch: number, progress: { hostsDone: number, portsDone: number }): Promise<void> {
    await this.redis.vulnscanBatchProgress(this.scanKey(id, 'progress'), batch, progress.hostsDone, progress.portsDone)
    this.changed(id)
  }

  async finishBatch (id: string, batch: number, summary: BatchSummary): Promise<BatchSummary[]> {
    const [, [, all]] = await this.redis.multi()
      .hsetnx(this.scanKey(id, 'batches'), String(batch), JSON.stringify(summary))
      .hvals(this.scanKey(id, 'batches'))
      .exec() as [[null, number], [null, string[]]]
    this.changed(id)
    return all.map((v) => JSON.parse(v) as BatchSummary)
  }

  async addPendingProducts (entries: { product: string, address: string }[]): Promise<void> {
    if (entries.length === 0) return
    const m = this.redis.multi()
    for (const { product, address } of entries) {
      m.sadd(this.key('nvd-pending'), product).sadd(this.key('nvd-pending', product), address)
    }
    await m.exec()
  }

  async pendingProducts (): Promise<Map<string, string[]>> {
    const products = await this.redis.smembers(this.key('nvd-pending'))
    const out = new Map<string, string[]>()
    for (const p of products) {
      const addresses = await this.redis.smembers(this.key('nvd-pending', p))
      if (addresses.length > 0) out.set(p, addresses.sort())
    }
    return out
  }

  async clearPendingProduct (product: string, addresses: string[]): Promise<void> {
    if (addresses.length > 0) await this.redis.srem(this.key('nvd-pending', product), ...addresses)
    // Drop the product once no address waits on it; a concurrent add re-adds it.
    if (await this.redis.scard(this.key('nvd-pending', product)) === 0) await this.redis.srem(this.key('nvd-pending'), product)
  }

  async createApiKey (key: ApiKeyRecord): Promise<void> {
    const m = this.redis.multi()
      .set(this.key('apikey', key.hash), JSON.stringify(key))
      .hset(this.key('apikeys'), key.id, key.hash)
    // No PEXPIREAT: a record that vanished by itself would leave its index entries behind. An expired key is
    // deleted whole when read, listed or swept (purgeExpiredApiKeys).
    await m.exec()
  }

  async findApiKey (hash: string): Promise<ApiKeyRecord | null> {
    const raw = await this.redis.get(this.key('apikey', hash))
    if (raw === null) return null
    const k = JSON.parse(raw) as ApiKeyRecord
    if (k.expiresAt !== null && Date.parse(k.expiresAt) <= Date.now()) {
      await this.redis.multi().unlink(this.key('apikey', hash)).hdel(this.key('apikeys'), k.id).hdel(this.key('apikey-used'), hash).exec()
      return null
    }
    return k
  }

  async listApiKeys (): Promise<ApiKeyRecord[]> {
    const byId = await this.redis.hgetall(this.key('apikeys'))
    const hashes = Object.values(byId)
    if (hashes.length === 0) return []
    const [raws, used] = await Promise.all([
      this.redis.mget(hashes.map((h) => this.key('apikey', h))),
      this.redis.hmget(this.key('apikey-used'), ...hashes)
    ])
    const keys: ApiKeyRecord[] = []
    const gone: string[] = []
    raws.forEach((raw, i) => {
      if (raw === null) { gone.push(hashes[i]); return }
      const k = JSON.parse(raw) as ApiKeyRecord
      keys.push({ ...k, lastUsedAt: used[i] ?? k.lastUsedAt })
    })
    // The record expired by itself (PEXPIREAT); its index entries go now.
    if (gone.length > 0) await this.dropKeyIndex(byId, gone)
    return keys.sort((a, b) => a.createdAt.localeCompare(b.createdAt))
  }

  private async dropKeyIndex (byId: Record<string, string>, hashes: string[]): Promise<void> {
    const ids = Object.entries(byId).filter(([, h]) => hashes.includes(h)).map(([id]) => id)
    await this.redis.multi()
      .hdel(this.key('apikeys'), ...ids)
      .hdel(this.key('apikey-used'), ...hashes)
      .unlink(...hashes.map((h) => this.key('apikey', h)))
      .exec()
  }

  async purgeExpiredApiKeys (now = Date.now()): Promise<number> {
    const byId = await this.redis.hgetall(this.key('apikeys'))
    const hashes = Object.values(byId)
    if (hashes.length === 0) return 0
    const raws = await this.redis.mget(hashes.map((h) => this.key('apikey', h)))
    const gone = hashes.filter((h, i) => {
      const raw = raws[i]
      if (raw === null) return true
      const k = JSON.parse(raw) as ApiKeyRecord
      return k.expiresAt !== null && Date.parse(k.expiresAt) <= now
    })
    if (gone.length > 0) await this.dropKeyIndex(byId, gone)
    return gone.length
  }

  async deleteApiKey (id: string): Promise<boolean> {
    const hash = await this.redis.hget(this.key('apikeys'), id)
    if (hash === null) return false
    // Published in the same transaction: no process can miss a revocation that was stored.
    await this.redis.multi()
      .del(this.key('apikey', hash))
      .hdel(this.key('apikeys'), id)
      .hdel(this.key('apikey-used'), hash)
      .publish(channelName(this.prefix, API_KEYS_TOPIC), id)
      .exec()
    return true
  }

  async updateApiKey (id: string, patch: ApiKeyPatch): Promise<ApiKeyRecord | null> {
    const hash = await this.redis.hget(this.key('apikeys'), id)
    if (hash === null) return null
    const raw = await this.redis.get(this.key('apikey', hash))
    if (raw === null) return null
    const k = JSON.parse(raw) as ApiKeyRecord
    if (patch.role !== undefined) k.role = patch.role
    if (patch.scope !== undefined) k.scope = [...patch.scope]
    // XX: a key revoked meanwhile stays revoked; KEEPTTL: its expiry stays.
    const [[, set]] = await this.redis.multi()
      .set(this.key('apikey', hash), JSON.stringify(k), 'KEEPTTL', 'XX')
      .publish(channelName(this.prefix, API_KEYS_TOPIC), id)
      .exec() as [[null, string | null], unknown]
    return set === 'OK' ? k : null
  }

  async appendAudit (entry: AuditEntry, retentionMs: number): Promise<void> {
    const at = Date.parse(entry.at)
    await this.redis.multi()
      .zadd(this.key('audit'), at, JSON.stringify(entry))
      .zremrangebyscore(this.key('audit'), '-inf', `(${Date.now() - retentionMs}`)
      .exec()
  }

  async listAudit (opts: ListOptions & AuditFilter): Promise<Page<AuditEntry>> {
    const max = opts.until === undefined ? '+inf' : String(Date.parse(opts.until))
    const min = opts.since === undefined ? '-inf' : String(Date.parse(opts.since))
    // The time window is narrowed in Redis; the log is bounded by its retention, so the rest is filtered here.
    const raws = await this.redis.zrevrangebyscore(this.key('audit'), max, min)
    const matching = raws.map((r) => JSON.parse(r) as AuditEntry).filter((e) => auditMatches(e, opts))
    return { items: matching.slice(opts.offset, opts.offset + opts.limit), total: matching.length }
  }

  async touchApiKey (hash: string, at: string): Promise<void> {
    await this.redis.hset(this.key('apikey-used'), hash, at)
  }

  /** A schedule's definition, or its run state: the id goes through keySegment like a scan's. */
  private scheduleKey (id: string, part?: 'runs' | 'skipped'): string {
    return part === undefined ? this.key('schedule', keySegment(id)) : this.key('schedule', keySegment(id), part)
  }

  // The definition is one JSON value, replaced whole by a change; the run state lives beside it, in a hash and a
  // list that only claimScheduleRun writes, so an edit and a run never overwrite each other.
  async createSchedule (schedule: ScheduleRecord): Promise<void> {
    const { lastRun, runs, skippedTotal, skipped, ...definition } = schedule
    await this.redis.multi()
      .set(this.scheduleKey(schedule.id), JSON.stringify(definition))
      .zadd(this.key('schedules'), Date.parse(schedule.createdAt), schedule.id)
      .exec()
  }

  private async readSchedules (ids: string[]): Promise<ScheduleRecord[]> {
    if (ids.length === 0) return []
    const m = this.redis.multi()
    for (const id of ids) m.get(this.scheduleKey(id)).hgetall(this.scheduleKey(id, 'runs')).lrange(this.scheduleKey(id, 'skipped'), 0, -1)
    const res = (await m.exec() ?? []).map(([err, v]) => { if (err) throw err; return v })
    const out: ScheduleRecord[] = []
    for (let i = 0; i < ids.length; i++) {
      const raw = res[i * 3] as string | null
      if (raw === null) continue
      const runs = res[i * 3 + 1] as Record<string, string>
      const schedule = JSON.parse(raw) as ScheduleRecord
      if (runs.lastScanId !== undefined && runs.lastDue !== undefined) schedule.lastRun = { dueAt: runs.lastDue, scanId: runs.lastScanId }
      schedule.runs = Number(runs.runs ?? 0)
      schedule.skippedTotal = Number(runs.skippedTotal ?? 0)
      schedule.skipped = (res[i * 3 + 2] as string[]).map((e) => JSON.parse(e) as ScheduleRecord['skipped'][number])
      out.push(schedule)
    }
    return out
  }

  async getSchedule (id: string): Promise<ScheduleRecord | null> {
    return (await this.readSchedules([id]))[0] ?? null
  }

  async listSchedules (opts: ListOptions): Promise<Page<ScheduleRecord>> {
    const [[, total], [, ids]] = await this.redis.multi()
      .zcard(this.key('schedules'))
      .zrevrange(this.key('schedules'), opts.offset, opts.offset + opts.limit - 1)
      .exec() as [[null, number], [null, string[]]]
    return { items: await this.readSchedules(ids), total }
  }

  async updateSchedule (id: string, patch: SchedulePatch): Promise<ScheduleRecord | null> {
    const key = this.scheduleKey(id)
    // Compare-and-set: a change made by another request between the read and the write is read again, not lost.
    for (let attempt = 0; attempt < 20; attempt++) {
      const raw = await this.redis.get(key)
      if (raw === null) return null
      const next = { ...JSON.parse(raw) as ScheduleRecord, ...patch }
      const r = await this.redis.vulnscanReplaceIf(key, raw, JSON.stringify(next))
      if (r === -1) return null
      if (r === 1) return await this.getSchedule(id)
    }
    throw new Error(`schedule '${id}' kept changing; try again`)
  }

  async deleteSchedule (id: string): Promise<boolean> {
    const [[, n]] = await this.redis.multi()
      .del(this.scheduleKey(id))
      .unlink(this.scheduleKey(id, 'runs'), this.scheduleKey(id, 'skipped'))
      .zrem(this.key('schedules'), id)
      .exec() as [[null, number], unknown, unknown]
    return n === 1
  }

  async claimScheduleRun (id: string, dueAt: Date, scanId: string): Promise<ScheduleClaim> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const last = await this.redis.hget(this.scheduleKey(id, 'runs'), 'lastScanId') ?? ''
      const entry = JSON.stringify({ dueAt: dueAt.toISOString(), inFlight: last })
      const r = await this.redis.vulnscanClaimSchedule(this.scheduleKey(id), this.scheduleKey(id, 'runs'), this.scheduleKey(id, 'skipped'),
        last === '' ? this.scanKey('-', 'state') : this.scanKey(last, 'state'), dueAt.getTime(), dueAt.toISOString(), scanId, last, SKIPPED_RUNS_KEPT, entry)
      if (r === 'retry') continue
      if (r === 'gone' || r === 'disabled' || r === 'stale') return { outcome: r }
      const schedule = await this.getSchedule(id)
      if (schedule === null) return { outcome: 'gone' }
      if (r === 'skipped') return { outcome: 'skipped', schedule, inFlight: last }
      return { outcome: r as 'run' | 'again', schedule }
    }
    throw new Error(`schedule '${id}': its last run kept changing while a run was claimed`)
  }

  private webhookKey (id: string, part?: 'deliveries'): string {
    return part === undefined ? this.key('webhook', keySegment(id)) : this.key('webhook', keySegment(id), part)
  }

  async createWebhook (webhook: WebhookRecord): Promise<void> {
    await this.redis.multi()
      .set(this.webhookKey(webhook.id), JSON.stringify(webhook))
      .zadd(this.key('webhooks'), Date.parse(webhook.createdAt), webhook.id)
      .exec()
  }

  async getWebhook (id: string): Promise<WebhookRecord | null> {
    const raw = await this.redis.get(this.webhookKey(id))
    return raw === null ? null : JSON.parse(raw) as WebhookRecord
  }

  async listWebhooks (opts: ListOptions): Promise<Page<WebhookRecord>> {
    const [[, total], [, ids]] = await this.redis.multi()
      .zcard(this.key('webhooks'))
      .zrevrange(this.key('webhooks'), opts.offset, opts.offset + opts.limit - 1)
      .exec() as [[null, number], [null, string[]]]
    if (ids.length === 0) return { items: [], total }
    const raws = await this.redis.mget(ids.map((id) => this.webhookKey(id)))
    return { items: raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as WebhookRecord), total }
  }

  async updateWebhook (id: string, patch: WebhookPatch): Promise<WebhookRecord | null> {
    const key = this.webhookKey(id)
    for (let attempt = 0; attempt < 20; attempt++) {
      const raw = await this.redis.get(key)
      if (raw === null) return null
      const next = { ...JSON.parse(raw) as WebhookRecord, ...patch }
      const r = await this.redis.vulnscanReplaceIf(key, raw, JSON.stringify(next))
      if (r === -1) return null
      if (r === 1) return next
    }
    throw new Error(`webhook '${id}' kept changing; try again`)
  }

  async deleteWebhook (id: string): Promise<boolean> {
    const [[, n]] = await this.redis.multi()
      .del(this.webhookKey(id))
      .unlink(this.webhookKey(id, 'deliveries'))
      .zrem(this.key('webhooks'), id)
      .exec() as [[null, number], unknown, unknown]
    return n === 1
  }

  async appendWebhookDelivery (delivery: WebhookDelivery): Promise<void> {
    await this.redis.vulnscanAppendDelivery(this.webhookKey(delivery.webhookId), this.webhookKey(delivery.webhookId, 'deliveries'), JSON.stringify(delivery), WEBHOOK_DELIVERIES_KEPT)
  }

  async listWebhookDeliveries (webhookId: string, opts: ListOptions): Promise<Page<WebhookDelivery>> {
    const key = this.webhookKey(webhookId, 'deliveries')
    const [[, total], [, raws]] = await this.redis.multi()
      .llen(key)
      .lrange(key, opts.offset, opts.offset + opts.limit - 1)
      .exec() as [[null, number], [null, string[]]]
    return { items: raws.map((r) => JSON.parse(r) as WebhookDelivery), total }
  }

  private credentialKey (id: string, part?: 'hostkeys'): string {
    return part === undefined ? this.key('credential', keySegment(id)) : this.key('credential', keySegment(id), part)
  }

  async createCredential (credential: CredentialRecord): Promise<boolean> {
    const r = await this.redis.vulnscanCreateCredential(this.credentialKey(credential.id), this.key('credential-names'), this.key('credentials'),
      credential.id, credential.name, JSON.stringify(credential), Date.parse(credential.createdAt))
    return r === 1
  }

  async getCredential (id: string): Promise<CredentialRecord | null> {
    const raw = await this.redis.get(this.credentialKey(id))
    return raw === null ? null : JSON.parse(raw) as CredentialRecord
  }

  async getCredentialByName (name: string): Promise<CredentialRecord | null> {
    const id = await this.redis.hget(this.key('credential-names'), name)
    return id === null ? null : await this.getCredential(id)
  }

  async listCredentials (opts: ListOptions): Promise<Page<CredentialRecord>> {
    const [[, total], [, ids]] = await this.redis.multi()
      .zcard(this.key('credentials'))
      .zrevrange(this.key('credentials'), opts.offset, opts.offset + opts.limit - 1)
      .exec() as [[null, number], [null, string[]]]
    if (ids.length === 0) return { items: [], total }
    const raws = await this.redis.mget(ids.map((id) => this.credentialKey(id)))
    return { items: raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as CredentialRecord), total }
  }

  async updateCredential (id: string, patch: CredentialPatch): Promise<CredentialRecord | null> {
    const key = this.credentialKey(id)
    for (let attempt = 0; attempt < 20; attempt++) {
      const raw = await this.redis.get(key)
      if (raw === null) return null
      const next = { ...JSON.parse(raw) as CredentialRecord, ...patch }
      const r = await this.redis.vulnscanReplaceIf(key, raw, JSON.stringify(next))
      if (r === -1) return null
      if (r === 1) return next
    }
    throw new Error(`credential '${id}' kept changing; try again`)
  }

  async deleteCredential (id: string): Promise<boolean> {
    const c = await this.getCredential(id)
    if (c === null) return false
    const [[, n]] = await this.redis.multi()
      .del(this.credentialKey(id))
      .unlink(this.credentialKey(id, 'hostkeys'))
      .zrem(this.key('credentials'), id)
      .hdel(this.key('credential-names'), c.name)
      .exec() as [[null, number], unknown, unknown, unknown]
    return n === 1
  }

  async recordHostKey (credentialId: string, host: string, key: KnownHostKey): Promise<KnownHostKey> {
    const hash = this.credentialKey(credentialId, 'hostkeys')
    const [, [, raw]] = await this.redis.multi()
      .hsetnx(hash, host, JSON.stringify(key))
      .hget(hash, host)
      .exec() as [[null, number], [null, string]]
    return JSON.parse(raw) as KnownHostKey
  }

  async getHostKey (credentialId: string, host: string): Promise<KnownHostKey | null> {
    const raw = await this.redis.hget(this.credentialKey(credentialId, 'hostkeys'), host)
    return raw === null ? null : JSON.parse(raw) as KnownHostKey
  }

  async secretsCanary (value: string, replace = false): Promise<string> {
    const key = this.key('secrets-canary')
    if (replace) {
      await this.redis.set(key, value)
      return value
    }
    await this.redis.set(key, value, 'NX')
    return await this.redis.get(key) ?? value
  }
}
