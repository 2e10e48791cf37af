// The CVE index in Redis, shared by every API and worker process.
//
// Keys, under `<prefix>nvd:` (prefix given by the caller, e.g. `vulnscan:`):
//   cve:<id>                    deflated record JSON (see record-codec)
//   lm                          hash id → lastModified (the "newer wins" check without reading records)
//   product:<vendor>:<product>  hash id → the criteria of that CVE naming the product, as
//                               "critId[/platId],..." (ids are short hashes of their content)
//   crit                        hash critId → criterion JSON (shared by every CVE that lists it)
//   plat                        hash platId → JSON list of the platform criteria an AND requires
//   products                    set of vendor:product keys that have criteria
//   pgen                        hash vendor:product → generation, bumped whenever that product's CVEs change
//   meta                        hash (lastSync and whatever the sync keeps)
//   fetched:<vendor>:<product>  on-demand fetch marker, expiring after its TTL
//
// match() keeps a compiled, grouped copy of each product it has seen, tagged with the product's
// generation; a warm match costs one HGET of that generation, so a change made by another
// process is seen at the next match.

import { createHash } from 'node:crypto'
import type { ChainableCommander, Redis } from 'ioredis'
import { compileTarget, criterionUses, productKeyOf, type CriterionUse, type MatchHit } from './matcher'
import { ProductGroups, expandHits, groupKey, type GroupHit } from './product-groups'
import { compareModified, decodeJson, decodeRecord, encodeJson } from './record-codec'
import { hitsToMatches, newestPerId, normalizeAll, prepare, type LocalCveIndex, type PreparedRecord } from './index-common'
import type { CpeCriterion, CveMatch, CveRecord, IndexStats } from './types'

const PRODUCT_CACHE_MAX = 256
const RECORD_CACHE_PER_PRODUCT = 512
const MGET_CHUNK = 1000

const DEF_CACHE_MAX = 200_000

function shortHash (s: string): string {
  return createHash('sha1').update(s).digest('base64url').slice(0, 16)
}

/** One CVE's criteria for one product, encoded, with the definitions the encoding refers to. */
interface EncodedUses {
  value: string
  crits: Map<string, CpeCriterion>
  plats: Map<string, string[]>
}

interface WritePlan {
  ops: Array<(tx: ChainableCommander) => unknown>
  /** Products that lost a CVE and may now be empty. */
  emptied: Set<string>
  stored: number
}

interface CachedProduct {
  gen: string
  groups: ProductGroups
  records: Map<string, CveRecord>
}

export interface RedisIndexOptions {
  redis: Redis
  /** Application key prefix, e.g. `vulnscan:`; the index writes under `<prefix>nvd:`. */
  prefix: string
}

function usesByProduct (uses: CriterionUse[]): Map<string, EncodedUses> {
  const m = new Map<string, EncodedUses>()
  for (const u of uses) {
    let e = m.get(u.productKey)
    if (e === undefined) {
      e = { value: '', crits: new Map(), plats: new Map() }
      m.set(u.productKey, e)
    }
    const critId = shortHash(groupKey(u.criterion))
    e.crits.set(critId, u.criterion)
    let item = critId
    if (u.requiresPlatform !== undefined) {
      const platId = shortHash(u.requiresPlatform.join('\n'))
      e.plats.set(platId, u.requiresPlatform)
      item += '/' + platId
    }
    e.value += (e.value === '' ? '' : ',') + item
  }
  return m
}

export class RedisIndex implements LocalCveIndex {
  readonly base: string
  private readonly redis: Redis
  private readonly cache = new Map<string, CachedProduct>()
  private writes: Promise<unknown> = Promise.resolve()
  private readonly crits = new Map<string, CpeCriterion>()
  private readonly plats = new Map<string, string[]>()

  constructor (opts: RedisIndexOptions) {
    this.redis = opts.redis
    const p = opts.prefix === '' || opts.prefix.endsWith(':') ? opts.prefix : opts.prefix + ':'
    this.base = p + 'nvd:'
  }

  private k (name: string): string {
    return this.base + name
  }

  async upsertRaw (raw: unknown[]): Promise<number> {
    return await this.upsertRecords(normalizeAll(raw))
  }

  async upsertRecords (records: CveRecord[]): Promise<number> {
    // WATCH state belongs to the connection, so this process's own batches go one at a time.
    const run = this.writes.then(async () => await this.upsertWatched(records), async () => await this.upsertWatched(records))
    this.writes = run.catch(() => {})
    return await run
  }

  /**
   * Optimistic transaction: the records' keys are watched while their stored versions are read,
   * so a concurrent writer (another process syncing the same CVE) makes EXEC fail and the batch
   * is re-read and retried instead of applying a product diff computed from a stale record.
   */
  private async upsertWatched (records: CveRecord[]): Promise<number> {
    const batch = newestPerId(records, compareModified)
    if (batch.length === 0) return 0
    const prepared = new Map<string, PreparedRecord>()
    const keys = batch.map((r) => this.k('cve:' + r.id))
    for (let attempt = 0; ; attempt++) {
      await this.redis.watch(...keys)
      let plan: WritePlan
      try {
        plan = await this.plan(batch, prepared)
      } catch (err) {
        await this.redis.unwatch()
        throw err
      }
      if (plan.stored === 0) {
        await this.redis.unwatch()
        return 0
      }
      const tx = this.redis.multi()
      for (const op of plan.ops) op(tx)
      const res = await tx.exec()
      if (res === null) {
        if (attempt >= 8) throw new Error('NVD index: too many concurrent writes to the same CVEs, giving up')
        continue
      }
      const failed = res.find(([err]) => err !== null)
      if (failed !== undefined) throw failed[0] as Error
      if (plan.emptied.size > 0) await this.dropEmptyProducts([...plan.emptied])
      return plan.stored
    }
  }

  private async plan (batch: CveRecord[], prepared: Map<string, PreparedRecord>): Promise<WritePlan> {
    const oldLms = await this.redis.hmget(this.k('lm'), ...batch.map((r) => r.id))
    const candidates: Array<{ p: PreparedRecord, existed: boolean }> = []
    batch.forEach((r, i) => {
      const old = oldLms[i]
      if (old !== null && compareModified(r.lastModified, old) < 0) return
      let p = prepared.get(r.id)
      if (p === undefined) {
        p = prepare(r)
        prepared.set(r.id, p)
      }
      candidates.push({ p, existed: old !== null })
    })
    const oldBlobs = new Map<string, Buffer | null>()
    const existing = candidates.filter((c) => c.existed).map((c) => c.p.record.id)
    if (existing.length > 0) {
      const blobs = await this.redis.mgetBuffer(...existing.map((id) => this.k('cve:' + id)))
      existing.forEach((id, i) => oldBlobs.set(id, blobs[i]))
    }
    const plan: WritePlan = { ops: [], emptied: new Set(), stored: 0 }
    // Writes are gathered per key so a batch is a few hundred commands, not tens of thousands.
    const touched = new Set<string>()
    const productSets = new Map<string, string[]>()
    const productDels = new Map<string, string[]>()
    const crits = new Map<string, string>()
    const plats = new Map<string, string>()
    const cves: Array<string | Buffer> = []
    const lms: string[] = []
    const push = (m: Map<string, string[]>, key: string, ...v: string[]): void => {
      const list = m.get(key)
      if (list === undefined) m.set(key, v)
      else list.push(...v)
    }
    for (const { p } of candidates) {
      const id = p.record.id
      const oldBlob = oldBlobs.get(id)
      let oldUses = new Map<string, EncodedUses>()
      if (oldBlob !== undefined && oldBlob !== null) {
        const oldJson = decodeJson(oldBlob)
        if (oldJson === p.json) continue
        const old = JSON.parse(oldJson) as CveRecord
        if (compareModified(p.record.lastModified, old.lastModified) < 0) continue
        oldUses = usesByProduct(old.rejected ? [] : criterionUses(old.configurations))
      }
      const newUses = usesByProduct(p.uses)
      for (const key of oldUses.keys()) {
        touched.add(key)
        if (!newUses.has(key)) {
          push(productDels, key, id)
          plan.emptied.add(key)
        }
      }
      for (const [key, list] of newUses) {
        // Every product of a changed record gets a new generation, so caches drop the old record too.
        touched.add(key)
        for (const [critId, c] of list.crits) if (!crits.has(critId)) crits.set(critId, JSON.stringify(c))
        for (const [platId, req] of list.plats) if (!plats.has(platId)) plats.set(platId, JSON.stringify(req))
        const prev = oldUses.get(key)
        if (prev !== undefined && prev.value === list.value) continue
        push(productSets, key, id, list.value)
      }
      cves.push(this.k('cve:' + id), encodeJson(p.json))
      lms.push(id, p.record.lastModified)
      plan.stored++
    }
    if (crits.size > 0) plan.ops.push((tx) => tx.hset(this.k('crit'), ...[...crits].flat()))
    if (plats.size > 0) plan.ops.push((tx) => tx.hset(this.k('plat'), ...[...plats].flat()))
    for (const [key, ids] of productDels) plan.ops.push((tx) => tx.hdel(this.k('product:' + key), ...ids))
    for (const [key, fv] of productSets) plan.ops.push((tx) => tx.hset(this.k('product:' + key), ...fv))
    if (productSets.size > 0) plan.ops.push((tx) => tx.sadd(this.k('products'), ...productSets.keys()))
    if (cves.length > 0) {
      plan.ops.push((tx) => tx.mset(...cves))
      plan.ops.push((tx) => tx.hset(this.k('lm'), ...lms))
    }
    for (const key of touched) plan.ops.push((tx) => tx.hincrby(this.k('pgen'), key, 1))
    return plan
  }

  private async dropEmptyProducts (keys: string[]): Promise<void> {
    const p = this.redis.pipeline()
    for (const key of keys) p.hlen(this.k('product:' + key))
    const res = await p.exec()
    const empty = keys.filter((_, i) => res?.[i]?.[1] === 0)
    if (empty.length > 0) await this.redis.srem(this.k('products'), ...empty)
  }

  async get (id: string): Promise<CveRecord | null> {
    const blob = await this.redis.getBuffer(this.k('cve:' + id))
    return blob === null ? null : decodeRecord(blob)
  }

  async getMany (ids: readonly string[]): Promise<Array<CveRecord | null>> {
    const out: Array<CveRecord | null> = []
    for (let i = 0; i < ids.length; i += MGET_CHUNK) {
      const chunk = ids.slice(i, i + MGET_CHUNK)
      const blobs = await this.redis.mgetBuffer(...chunk.map((id) => this.k('cve:' + id)))
      for (const b of blobs) out.push(b === null ? null : decodeRecord(b))
    }
    return out
  }

  /** The product's grouped criteria, from the in-process cache when its generation is current. */
  private async product (key: string): Promise<CachedProduct | null> {
    const gen = (await this.redis.hget(this.k('pgen'), key)) ?? '0'
    const hit = this.cache.get(key)
    if (hit !== undefined && hit.gen === gen) {
      // Refresh its place in the LRU order.
      this.cache.delete(key)
      this.cache.set(key, hit)
      return hit
    }
    const res = await this.redis.multi().hget(this.k('pgen'), key).hgetall(this.k('product:' + key)).exec()
    const freshGen = (res?.[0]?.[1] as string | null) ?? '0'
    const fields = (res?.[1]?.[1] ?? {}) as Record<string, string>
    const entries = Object.entries(fields).map(([id, v]) => [id, v.split(',').map((item) => item.split('/'))] as const)
    await this.loadDefinitions(entries)
    const groups = new ProductGroups()
    for (const [id, items] of entries) {
      for (const [critId, platId] of items) {
        const criterion = this.crits.get(critId)
        if (criterion === undefined) continue
        const use: CriterionUse = { criterion, productKey: key }
        if (platId !== undefined) use.requiresPlatform = this.plats.get(platId) ?? [`unknown platform ${platId}`]
        groups.add(id, use)
      }
    }
    const entry: CachedProduct = { gen: freshGen, groups, records: new Map() }
    this.cache.delete(key)
    if (this.cache.size >= PRODUCT_CACHE_MAX) {
      const first = this.cache.keys().next()
      if (first.done !== true) this.cache.delete(first.value)
    }
    this.cache.set(key, entry)
    return entry
  }

  /** Fetch the criterion and platform definitions a product refers to that this process lacks. */
  private async loadDefinitions (entries: ReadonlyArray<readonly [string, string[][]]>): Promise<void> {
    const critIds = new Set<string>()
    const platIds = new Set<string>()
    for (const [, items] of entries) {
      for (const [c, p] of items) {
        if (!this.crits.has(c)) critIds.add(c)
        if (p !== undefined && !this.plats.has(p)) platIds.add(p)
      }
    }
    if (critIds.size === 0 && platIds.size === 0) return
    if (this.crits.size + critIds.size > DEF_CACHE_MAX) this.crits.clear()
    if (this.plats.size + platIds.size > DEF_CACHE_MAX) this.plats.clear()
    const c = [...critIds]
    const p = [...platIds]
    const [cv, pv] = await Promise.all([
      c.length > 0 ? this.redis.hmget(this.k('crit'), ...c) : Promise.resolve([]),
      p.length > 0 ? this.redis.hmget(this.k('plat'), ...p) : Promise.resolve([])
    ])
    c.forEach((id, i) => { const v = cv[i]; if (v !== null && v !== undefined) this.crits.set(id, JSON.parse(v) as CpeCriterion) })
    p.forEach((id, i) => { const v = pv[i]; if (v !== null && v !== undefined) this.plats.set(id, JSON.parse(v) as string[]) })
  }

  async matchGroups (cpe: string): Promise<GroupHit[]> {
    const t = compileTarget(cpe)
    if (t === null) throw new Error(`not a CPE 2.3 name: ${cpe}`)
    const p = await this.product(productKeyOf(t.vendor, t.product))
    return p === null ? [] : p.groups.match(t)
  }

  async matchHits (cpe: string): Promise<MatchHit[]> {
    return expandHits(await this.matchGroups(cpe))
  }

  async match (cpe: string): Promise<CveMatch[]> {
    const t = compileTarget(cpe)
    if (t === null) throw new Error(`not a CPE 2.3 name: ${cpe}`)
    const p = await this.product(productKeyOf(t.vendor, t.product))
    if (p === null) return []
    const hits = expandHits(p.groups.match(t))
    // Records of a product are cached with its generation: any change to them bumps it.
    const missing = hits.filter((h) => !p.records.has(h.id)).map((h) => h.id)
    const loaded = missing.length > 0 ? await this.getMany(missing) : []
    const fresh = new Map<string, CveRecord | null>()
    missing.forEach((id, i) => {
      const r = loaded[i]
      fresh.set(id, r)
      if (r !== null && p.records.size < RECORD_CACHE_PER_PRODUCT) p.records.set(id, r)
    })
    return hitsToMatches(hits, hits.map((h) => p.records.get(h.id) ?? fresh.get(h.id) ?? null))
  }

  async knowsProduct (vendor: string, product: string): Promise<boolean> {
    const key = productKeyOf(vendor, product)
    const res = await this.redis.multi().sismember(this.k('products'), key).exists(this.k('fetched:' + key)).exec()
    return res?.[0]?.[1] === 1 || res?.[1]?.[1] === 1
  }

  async markProductFetched (vendor: string, product: string, ttlSeconds: number): Promise<void> {
    await this.redis.set(this.k('fetched:' + productKeyOf(vendor, product)), String(Date.now()), 'EX', Math.max(1, Math.ceil(ttlSeconds)))
  }

  /** Every process reads the same Redis: nothing to pick up. */
  async refresh (): Promise<boolean> {
    return false
  }

  async stats (): Promise<IndexStats> {
    const res = await this.redis.multi().hlen(this.k('lm')).scard(this.k('products')).hget(this.k('meta'), 'lastSync').exec()
    return {
      cves: Number(res?.[0]?.[1] ?? 0),
      products: Number(res?.[1]?.[1] ?? 0),
      lastSync: (res?.[2]?.[1] as string | null) ?? null
    }
  }

  async getMeta (key: string): Promise<string | null> {
    return await this.redis.hget(this.k('meta'), key)
  }

  async setMeta (key: string, value: string): Promise<void> {
    await this.redis.hset(this.k('meta'), key, value)
  }

  async flush (): Promise<void> {}

  /** The connection belongs to the caller; only the in-process cache is released. */
  async close (): Promise<void> {
    this.cache.clear()
    this.crits.clear()
    this.plats.clear()
  }

  /** Delete every key of this index (tests, benchmarks, a full re-import). Never touches other keys. */
  async drop (): Promise<void> {
    let cursor = '0'
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', this.base.replace(/[*?[\]\\]/g, '\\$&') + '*', 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) await this.redis.unlink(...keys)
    } while (cursor !== '0')
    this.cache.clear()
  }
}

export function createRedisIndex (opts: RedisIndexOptions): RedisIndex {
  return new RedisIndex(opts)
}
