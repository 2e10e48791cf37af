// The Redis store: records as JSON strings under `<prefix>:<kind>:<id>`, sorted sets for listing. Hosts and
// findings live in the results store (results-redis.ts) under the same prefix.
import type { Redis } from 'ioredis'
import { API_KEYS_TOPIC, type CredentialPatch, type CredentialRecord, type KnownHostKey, auditMatches, outboxKey, parseOutboxKey, SKIPPED_RUNS_KEPT, type FailedDelivery, type OutboxEntry, WEBHOOK_DELIVERIES_KEPT, type WebhookDelivery, type WebhookPatch, type WebhookRecord, type ScheduleClaim, type SchedulePatch, type ScheduleRecord, type ApiKeyPatch, type AuditEntry, type AuditFilter, type AuditLimits, type RefusedCount, type ApiKeyRecord, type BatchSummary, ListOptions, Page, ScanPatch, ScanRecord, ScanStatus, Store } from '../types'
import { percentOf } from '../scan-progress'
import { keySegment } from './key-segment'
import { channelName } from '../../invalidation'
import { scanEventsChannel } from '../../scan-events'
import { targetsDigest, targetsKey } from '../../scanner/targets'

/** Records read at a time when a list is filtered record by record (a scoped key's scans and schedules). */
const FILTER_CHUNK = 500

/** Scans of the same targets read at a time while looking for a previous one in some status. */
const PREVIOUS_PAGE = 50

// Write a new scan whole, in one step: its request, its state and every index, or nothing (a Redis that died
// between a SET NX and a later MULTI left a request with no state: queued for ever, invisible to lists and DELETE).
// A request found without its state (left so by an older version) is made whole here, as queued.
// KEYS: request, state hash, scans, the status set, the scans of the same targets. ARGV: id, score, request JSON,
// then state field/value pairs. Returns 1 created, 2 repaired, 0 already there.
const CREATE_SCAN_LUA = `
local function index ()
  for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
  redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
  redis.call('ZADD', KEYS[5], ARGV[2], ARGV[1])
end
if redis.call('SET', KEYS[1], ARGV[3], 'NX') then
  index()
  return 1
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  index()
  return 2
end
return 0
`

// Merge fields into a scan's state hash unless its status is terminal; move it between status sets. A scan whose
// request exists without its state (see CREATE_SCAN_LUA) is made whole first, as queued, rather than left unseen.
// A change that ends the scan adds its webhook outbox entry in the same step, so no crash can lose the event.
// KEYS: state hash, status-set prefix, request, scans, the scans of the same targets, the outbox. ARGV: scan id,
// score, then field/value pairs.
const UPDATE_SCAN_LUA = `
local cur = redis.call('HGET', KEYS[1], 'status')
if not cur then
  if redis.call('EXISTS', KEYS[3]) == 0 then return -1 end
  cur = 'queued'
  redis.call('HSET', KEYS[1], 'status', cur)
  redis.call('ZADD', KEYS[4], ARGV[2], ARGV[1])
  redis.call('ZADD', KEYS[2] .. cur, ARGV[2], ARGV[1])
  redis.call('ZADD', KEYS[5], ARGV[2], ARGV[1])
end
if cur == 'completed' or cur == 'failed' or cur == 'cancelled' then return 0 end
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
local new = redis.call('HGET', KEYS[1], 'status')
if new ~= cur then
  redis.call('ZREM', KEYS[2] .. cur, ARGV[1])
  redis.call('ZADD', KEYS[2] .. new, ARGV[2], ARGV[1])
  if new == 'completed' or new == 'failed' or new == 'cancelled' then
    local t = redis.call('TIME')
    redis.call('ZADD', KEYS[6], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), 'scan|' .. ARGV[1])
  end
end
return 1
`

// Raise a batch's progress counters, never lower them; a scan that ended keeps the progress it had then.
// KEYS: progress hash, state hash. ARGV: batch, hostsDone, portsDone.
const BATCH_PROGRESS_LUA = `
local status = redis.call('HGET', KEYS[2], 'status')
if status == 'completed' or status == 'failed' or status == 'cancelled' then return 0 end
local fields = { ARGV[1] .. ':h', ARGV[1] .. ':p' }
for i, f in ipairs(fields) do
  local v = tonumber(ARGV[i + 1])
  local cur = tonumber(redis.call('HGET', KEYS[1], f) or '0')
  if v > cur then redis.call('HSET', KEYS[1], f, v) end
end
return 1
`

// Decide one due time of a schedule. KEYS: definition, run-state hash, skipped list, the last run's scan state hash.
// ARGV: due ms, due ISO, new scan id, the last run's scan id as read before (empty: none), entries kept, skipped entry,
// then pairs of a later due time missed while no worker ran (ms, skipped entry), oldest first.
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
local function missed ()
  for i = 7, #ARGV, 2 do
    redis.call('HINCRBY', KEYS[2], 'skippedTotal', 1)
    redis.call('LPUSH', KEYS[3], ARGV[i + 1])
    redis.call('HSET', KEYS[2], 'seen', ARGV[i])
  end
  redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[5]) - 1)
end
if last ~= '' then
  local status = redis.call('HGET', KEYS[4], 'status')
  if status == 'queued' or status == 'running' then
    redis.call('HINCRBY', KEYS[2], 'skippedTotal', 1)
    redis.call('LPUSH', KEYS[3], ARGV[6])
    missed()
    return 'skipped'
  end
end
missed()
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

// Keep a delivery that failed for good while its webhook exists; a failure of the same event replaces the earlier.
// KEYS: webhook record, its failed hash. ARGV: event id, entry.
const KEEP_FAILED_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
`

// Set hash fields while another key exists (a schedule's run state while its definition does). KEYS: that key, the
// hash. ARGV: field/value pairs.
const SET_IF_EXISTS_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], unpack(ARGV))
return 1
`

// Count a refused request. KEYS: the counters' index (member `<window start>|<window ms>|<ip>`, scored by the start),
// their counts. ARGV: member, window start, cutoff (windows starting before it go), most counters kept (the oldest
// windows go first).
const COUNT_REFUSED_LUA = `
if redis.call('HINCRBY', KEYS[2], ARGV[1], 1) == 1 then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3], 'LIMIT', 0, 1000)
local excess = redis.call('ZCARD', KEYS[1]) - #gone - tonumber(ARGV[4])
if excess > 0 then
  for _, m in ipairs(redis.call('ZRANGE', KEYS[1], #gone, #gone + excess - 1)) do gone[#gone + 1] = m end
end
if #gone > 0 then
  redis.call('ZREM', KEYS[1], unpack(gone))
  redis.call('HDEL', KEYS[2], unpack(gone))
end
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
  vulnscanCountRefused(index: string, counts: string, member: string, start: number, cutoff: number, max: number): Promise<number>
  vulnscanSetIfExists(key: string, hash: string, ...fieldValues: string[]): Promise<number>
  vulnscanCreateCredential(record: string, names: string, list: string, id: string, name: string, value: string, score: number): Promise<number>
  vulnscanAppendDelivery(webhook: string, list: string, entry: string, kept: number): Promise<number>
  vulnscanReplaceIf(key: string, read: string, next: string): Promise<number>
  vulnscanClaimSchedule(definition: string, runs: string, skipped: string, lastScanState: string, dueMs: number, dueIso: string, scanId: string, last: string, kept: number, skippedEntry: string, ...missed: (string | number)[]): Promise<string>
  vulnscanKeepFailed(webhook: string, failed: string, eventId: string, entry: string): Promise<number>
  vulnscanUpdateScan(stateKey: string, statusPrefix: string, requestKey: string, scansKey: string, targetsKey: string, outboxKey: string, id: string, score: number, ...fields: string[]): Promise<number>
  vulnscanCreateScan(requestKey: string, stateKey: string, scansKey: string, statusKey: string, targetsKey: string, id: string, score: number, request: string, ...fields: string[]): Promise<number>
  vulnscanBatchProgress(key: string, state: string, batch: number, hostsDone: number, portsDone: number): Promise<number>
}

// The scan request is immutable JSON; what changes lives in a hash so that concurrent workers update
// fields without read-modify-write races.
const STATE_FIELDS = ['status', 'startedAt', 'finishedAt', 'reason', 'summary', 'hostsTotal', 'portsTotal', 'batches'] as const

/** An audit entry as stored: its JSON, without the ordering sequence appendAudit puts first. */
function auditEntryOf (raw: string): AuditEntry {
  const { seq: _seq, ...entry } = JSON.parse(raw) as AuditEntry & { seq?: string }
  return entry
}

export class RedisStore implements Store {
  readonly kind = 'redis' as const
  private readonly redis: RedisWithCommands
  /** The counter that orders this process's audit entries within one millisecond. */
  private auditSeq = 0

  private readonly channel: string

  constructor (redis: Redis, private readonly prefix: string) {
    this.channel = scanEventsChannel(prefix)
    if (typeof (redis as unknown as Partial<RedisWithCommands>).vulnscanUpdateScan !== 'function') {
      redis.defineCommand('vulnscanUpdateScan', { numberOfKeys: 6, lua: UPDATE_SCAN_LUA })
      redis.defineCommand('vulnscanKeepFailed', { numberOfKeys: 2, lua: KEEP_FAILED_LUA })
      redis.defineCommand('vulnscanCreateScan', { numberOfKeys: 5, lua: CREATE_SCAN_LUA })
      redis.defineCommand('vulnscanBatchProgress', { numberOfKeys: 2, lua: BATCH_PROGRESS_LUA })
      redis.defineCommand('vulnscanAppendDelivery', { numberOfKeys: 2, lua: APPEND_DELIVERY_LUA })
      redis.defineCommand('vulnscanReplaceIf', { numberOfKeys: 1, lua: REPLACE_IF_LUA })
      redis.defineCommand('vulnscanClaimSchedule', { numberOfKeys: 4, lua: CLAIM_SCHEDULE_LUA })
      redis.defineCommand('vulnscanSetIfExists', { numberOfKeys: 2, lua: SET_IF_EXISTS_LUA })
      redis.defineCommand('vulnscanCountRefused', { numberOfKeys: 2, lua: COUNT_REFUSED_LUA })
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
    const state = this.stateFields({ status, startedAt, finishedAt, reason, summary, hostsTotal: progress.hostsTotal, portsTotal: progress.portsTotal, batches })
    const r = await this.redis.vulnscanCreateScan(this.scanKey(scan.id), this.scanKey(scan.id, 'state'), this.key('scans'), this.key('scans', 'status', scan.status),
      this.scansOfTargetsKey(scan.targets), scan.id, Date.parse(scan.createdAt), JSON.stringify(request), ...Object.entries(state).flat())
    if (r !== 0) this.changed(scan.id)
    if (r === 1) return { created: true, scan }
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

  async listScans (opts: ListOptions & { status?: ScanStatus, where?: (scan: ScanRecord) => boolean }): Promise<Page<ScanRecord>> {
    const set = opts.status ? this.key('scans', 'status', opts.status) : this.key('scans')
    if (opts.where !== undefined) {
      const { ids, total } = await this.walkFiltered(set, (id) => this.scanKey(id), opts.where, opts)
      return { items: await this.readScans(ids), total }
    }
    const [[, total], [, ids]] = await this.redis.multi()
      .zcard(set)
      .zrevrange(set, opts.offset, opts.offset + opts.limit - 1)
      .exec() as [[null, number], [null, string[]]]
    return { items: await this.readScans(ids), total }
  }

  /**
   * The ids of a page of the sorted set `set` (newest first) among the members whose immutable record (at `keyOf(id)`)
   * passes `where`, and how many pass: the set read in chunks, each chunk's records with one MGET.
   */
  private async walkFiltered<T> (set: string, keyOf: (id: string) => string, where: (record: T) => boolean, page: ListOptions): Promise<{ ids: string[], total: number }> {
    const ids: string[] = []
    let total = 0
    for (let start = 0; ; start += FILTER_CHUNK) {
      const chunk = await this.redis.zrevrange(set, start, start + FILTER_CHUNK - 1)
      if (chunk.length === 0) break
      const raws = await this.redis.mget(chunk.map(keyOf))
      raws.forEach((raw, i) => {
        if (raw === null || !where(JSON.parse(raw) as T)) return
        if (total >= page.offset && ids.length < page.limit) ids.push(chunk[i])
        total++
      })
      if (chunk.length < FILTER_CHUNK) break
    }
    return { ids, total }
  }

  async updateScan (id: string, patch: ScanPatch): Promise<{ applied: boolean, scan: ScanRecord } | null> {
    const raw = await this.redis.get(this.scanKey(id))
    if (raw === null) return null
    const request = JSON.parse(raw) as ScanRecord
    const score = Date.parse(request.createdAt)
    const fields = Object.entries(this.stateFields(patch)).flat()
    const r = await this.redis.vulnscanUpdateScan(this.scanKey(id, 'state'), this.key('scans', 'status', ''), this.scanKey(id), this.key('scans'), this.scansOfTargetsKey(request.targets),
      this.key('webhook-outbox'), id, score, ...fields)
    if (r === 1) this.changed(id)
    const scan = await this.getScan(id)
    if (r === -1 || scan === null) return null
    return { applied: r === 1, scan }
  }

  async reportBatchProgress (id: string, batch: number, progress: { hostsDone: number, portsDone: number }): Promise<void> {
    await this.redis.vulnscanBatchProgress(this.scanKey(id, 'progress'), this.scanKey(id, 'state'), batch, progress.hostsDone, progress.portsDone)
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

  async appendAudit (entry: AuditEntry, limits: AuditLimits): Promise<void> {
    const at = Date.parse(entry.at)
    // Entries of the same millisecond share a score and are ordered by their member's text: a leading sequence (the
    // time, then a counter of this process) keeps them in the order they were written, for the newest-first list and
    // for the trim, which drops the oldest.
    this.auditSeq = (this.auditSeq + 1) % 1_000_000
    const seq = `${String(at).padStart(15, '0')}${String(this.auditSeq).padStart(6, '0')}`
    await this.redis.multi()
      .zadd(this.key('audit'), at, JSON.stringify({ seq, ...entry }))
      .zremrangebyscore(this.key('audit'), '-inf', `(${Date.now() - limits.retentionMs}`)
      // The newest maxEntries stay (ranks count from the oldest).
      .zremrangebyrank(this.key('audit'), 0, -(limits.maxEntries + 1))
      .exec()
  }

  async listAudit (opts: ListOptions & AuditFilter): Promise<Page<AuditEntry>> {
    const key = this.key('audit')
    const max = opts.until === undefined ? '+inf' : String(Date.parse(opts.until))
    const min = opts.since === undefined ? '-inf' : String(Date.parse(opts.since))
    if (opts.keyId === undefined && opts.method === undefined && opts.status === undefined) {
      // By place in the log: the count and one page, whatever the log holds.
      const [[, total], [, raws]] = await this.redis.multi()
        .zcount(key, min, max)
        .zrevrangebyscore(key, max, min, 'LIMIT', opts.offset, opts.limit)
        .exec() as [[null, number], [null, string[]]]
      return { items: raws.map(auditEntryOf), total }
    }
    // Filtered: the window read in chunks (the log is bounded), only the page's entries kept.
    const items: AuditEntry[] = []
    let total = 0
    for (let start = 0; ; start += FILTER_CHUNK) {
      const raws = await this.redis.zrevrangebyscore(key, max, min, 'LIMIT', start, FILTER_CHUNK)
      for (const r of raws) {
        const e = auditEntryOf(r)
        if (!auditMatches(e, opts)) continue
        if (total >= opts.offset && items.length < opts.limit) items.push(e)
        total++
      }
      if (raws.length < FILTER_CHUNK) break
    }
    return { items, total }
  }

  async countRefused (ip: string, at: number, windowMs: number, limits: AuditLimits): Promise<void> {
    const start = at - (at % windowMs)
    await this.redis.vulnscanCountRefused(this.key('audit', 'refused'), this.key('audit', 'refused', 'n'), `${start}|${windowMs}|${ip}`, start,
      Date.now() - limits.retentionMs - windowMs, limits.maxEntries)
  }

  async listRefused (opts: ListOptions): Promise<Page<RefusedCount>> {
    const [[, total], [, members]] = await this.redis.multi()
      .zcard(this.key('audit', 'refused'))
      .zrevrange(this.key('audit', 'refused'), opts.offset, opts.offset + opts.limit - 1)
      .exec() as [[null, number], [null, string[]]]
    if (members.length === 0) return { items: [], total }
    const counts = await this.redis.hmget(this.key('audit', 'refused', 'n'), ...members)
    return {
      items: members.map((m, i) => {
        const [start, windowMs, ...ip] = m.split('|')
        return { ip: ip.join('|'), windowStart: new Date(Number(start)).toISOString(), windowEnd: new Date(Number(start) + Number(windowMs)).toISOString(), count: Number(counts[i] ?? 0) }
      }),
      total
    }
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
      if (runs.next !== undefined && runs.nextFor === schedule.updatedAt) schedule.nextRunAt = JSON.parse(runs.next) as string | null
      out.push(schedule)
    }
    return out
  }

  async getSchedule (id: string): Promise<ScheduleRecord | null> {
    return (await this.readSchedules([id]))[0] ?? null
  }

  async listSchedules (opts: ListOptions & { where?: (schedule: ScheduleRecord) => boolean }): Promise<Page<ScheduleRecord>> {
    if (opts.where !== undefined) {
      const { ids, total } = await this.walkFiltered(this.key('schedules'), (id) => this.scheduleKey(id), opts.where, opts)
      return { items: await this.readSchedules(ids), total }
    }
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

  async claimScheduleRun (id: string, dueAt: Date, scanId: string, missed: Date[] = []): Promise<ScheduleClaim> {
    const missedArgs = missed.flatMap((m) => [m.getTime(), JSON.stringify({ dueAt: m.toISOString(), reason: 'no_worker' })])
    for (let attempt = 0; attempt < 20; attempt++) {
      const last = await this.redis.hget(this.scheduleKey(id, 'runs'), 'lastScanId') ?? ''
      const entry = JSON.stringify({ dueAt: dueAt.toISOString(), inFlight: last, reason: 'in_flight' })
      const r = await this.redis.vulnscanClaimSchedule(this.scheduleKey(id), this.scheduleKey(id, 'runs'), this.scheduleKey(id, 'skipped'),
        last === '' ? this.scanKey('-', 'state') : this.scanKey(last, 'state'), dueAt.getTime(), dueAt.toISOString(), scanId, last, SKIPPED_RUNS_KEPT, entry, ...missedArgs)
      if (r === 'retry') continue
      if (r === 'gone' || r === 'disabled' || r === 'stale') return { outcome: r }
      const schedule = await this.getSchedule(id)
      if (schedule === null) return { outcome: 'gone' }
      if (r === 'skipped') return { outcome: 'skipped', schedule, inFlight: last }
      return { outcome: r as 'run' | 'again', schedule }
    }
    throw new Error(`schedule '${id}': its last run kept changing while a run was claimed`)
  }

  async setScheduleNext (id: string, nextRunAt: string | null, forUpdatedAt: string): Promise<void> {
    // Kept beside the run state, with the definition it was computed under: a change made since wins (readSchedules).
    await this.redis.vulnscanSetIfExists(this.scheduleKey(id), this.scheduleKey(id, 'runs'), 'next', JSON.stringify(nextRunAt), 'nextFor', forUpdatedAt)
  }

  private webhookKey (id: string, part?: 'deliveries' | 'failed'): string {
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
      .unlink(this.webhookKey(id, 'deliveries'), this.webhookKey(id, 'failed'))
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

  async keepFailedDelivery (failed: FailedDelivery): Promise<void> {
    await this.redis.vulnscanKeepFailed(this.webhookKey(failed.webhookId), this.webhookKey(failed.webhookId, 'failed'), failed.eventId, JSON.stringify(failed))
  }

  async listFailedDeliveries (webhookId: string, opts: ListOptions): Promise<Page<FailedDelivery>> {
    // A hash keeps insertion order while it is small; the newest is sorted first by its time anyway.
    const all = (await this.redis.hvals(this.webhookKey(webhookId, 'failed'))).map((v) => JSON.parse(v) as FailedDelivery)
      .sort((a, b) => b.failedAt.localeCompare(a.failedAt))
    return { items: all.slice(opts.offset, opts.offset + opts.limit), total: all.length }
  }

  async getFailedDelivery (webhookId: string, eventId: string): Promise<FailedDelivery | null> {
    const raw = await this.redis.hget(this.webhookKey(webhookId, 'failed'), eventId)
    return raw === null ? null : JSON.parse(raw) as FailedDelivery
  }

  async dropFailedDelivery (webhookId: string, eventId: string): Promise<void> {
    await this.redis.hdel(this.webhookKey(webhookId, 'failed'), eventId)
  }

  async addOutbox (entries: OutboxEntry[]): Promise<void> {
    if (entries.length === 0) return
    const now = Date.now()
    await this.redis.zadd(this.key('webhook-outbox'), 'NX', ...entries.flatMap((e) => [now, outboxKey(e)]))
  }

  async listOutbox (olderThanMs: number, limit: number): Promise<{ key: string, entry: OutboxEntry }[]> {
    const keys = await this.redis.zrangebyscore(this.key('webhook-outbox'), '-inf', Date.now() - olderThanMs, 'LIMIT', 0, limit)
    return keys.flatMap((key) => { const entry = parseOutboxKey(key); return entry === null ? [] : [{ key, entry }] })
  }

  async removeOutbox (keys: string[]): Promise<void> {
    if (keys.length > 0) await this.redis.zrem(this.key('webhook-outbox'), ...keys)
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
