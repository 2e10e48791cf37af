// The CVE index in Redis, shared by every API and worker process.
//
// Keys, under `<prefix>nvd:` (prefix given by the caller, e.g. `vulnscan:`):
//   cve:<id>                    deflated record JSON (see record-codec)
//   lm                          hash id → lastModified (the "newer wins" check without reading records)
//   product:<vendor>:<product>  hash id → JSON [[criterion, platform criteria | 0], ...] naming the product
//   products                    set of vendor:product keys that have criteria
//   pgen                        hash vendor:product → generation, bumped whenever that product's CVEs change
//   meta                        hash (lastSync and whatever the sync keeps)
//   fetched:<vendor>:<product>  on-demand fetch marker, expiring after its TTL
//
// match() keeps a compiled, grouped copy of each product it has seen, tagged with the product's
// generation; a warm match costs one HGET of that generation, so a change made by another
// process is seen at the next match.

import type { Redis } from 'ioredis'
import { compileTarget, criterionUses, productKeyOf, type CriterionUse, type MatchHit } from './matcher'
import { ProductGroups, expandHits, type GroupHit } from './product-groups'
import { compareModified, decodeJson, decodeRecord, encodeJson } from './record-codec'
import { hitsToMatches, newestPerId, normalizeAll, prepare, type LocalCveIndex, type PreparedRecord } from './index-common'
import type { CpeCriterion, CveMatch, CveRecord, IndexStats } from './types'

const PRODUCT_CACHE_MAX = 256
const RECORD_CACHE_PER_PRODUCT = 512
const MGET_CHUNK = 1000

type StoredUse = [CpeCriterion, string[] | 0]

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

function usesByProduct (uses: CriterionUse[]): Map<string, StoredUse[]> {
  const m = new Map<string, StoredUse[]>()
  for (const u of uses) {
    let list = m.get(u.productKey)
    if (list === undefined) {
      list = []
      m.set(u.productKey, list)
    }
    list.push([u.criterion, u.requiresPlatform ?? 0])
  }
  return m
}

export class RedisIndex implements LocalCveIndex {
  readonly base: string
  private readonly redis: Redis
  private readonly cache = new Map<string, CachedProduct>()

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
    const batch = newestPerId(records, compareModified)
    if (batch.length === 0) return 0
    const oldLms = await this.redis.hmget(this.k('lm'), ...batch.map((r) => r.id))
    const candidates: Array<{ p: PreparedRecord, existed: boolean }> = []
    batch.forEach((r, i) => {
      const old = oldLms[i]
      if (old !== null && compareModified(r.lastModified, old) < 0) return
      candidates.push({ p: prepare(r), existed: old !== null })
    })
    const existing = candidates.filter((c) => c.existed)
    const oldBlobs = new Map<string, Buffer | null>()
    if (existing.length > 0) {
      const ids = existing.map((c) => c.p.record.id)
      const blobs = await this.redis.mgetBuffer(...ids.map((id) => this.k('cve:' + id)))
      ids.forEach((id, i) => oldBlobs.set(id, blobs[i]))
    }
    const tx = this.redis.multi()
    const touched = new Set<string>()
    const emptied = new Set<string>()
    let stored = 0
    for (const { p } of candidates) {
      const id = p.record.id
      const oldBlob = oldBlobs.get(id)
      let oldUses = new Map<string, StoredUse[]>()
      if (oldBlob !== undefined && oldBlob !== null) {
        const oldJson = decodeJson(oldBlob)
        if (oldJson === p.json) continue
        const old = JSON.parse(oldJson) as CveRecord
        if (compareModified(p.record.lastModified, old.lastModified) < 0) continue
        oldUses = usesByProduct(old.rejected ? [] : criterionUses(old.configurations))
      }
      const newUses = usesByProduct(p.uses)
      for (const key of oldUses.keys()) {
        if (!newUses.has(key)) {
          tx.hdel(this.k('product:' + key), id)
          emptied.add(key)
          touched.add(key)
        }
      }
      for (const [key, list] of newUses) {
        const prev = oldUses.get(key)
        const json = JSON.stringify(list)
        if (prev !== undefined && JSON.stringify(prev) === json) continue
        tx.hset(this.k('product:' + key), id, json)
        tx.sadd(this.k('products'), key)
        touched.add(key)
      }
      tx.set(this.k('cve:' + id), encodeJson(p.json))
      tx.hset(this.k('lm'), id, p.record.lastModified)
      stored++
    }
    for (const key of touched) tx.hincrby(this.k('pgen'), key, 1)
    if (stored === 0) {
      tx.discard()
      return 0
    }
    await tx.exec()
    if (emptied.size > 0) await this.dropEmptyProducts([...emptied])
    return stored
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
    const groups = new ProductGroups()
    for (const [id, json] of Object.entries(fields)) {
      for (const [criterion, req] of JSON.parse(json) as StoredUse[]) {
        const use: CriterionUse = { criterion, productKey: key }
        if (req !== 0) use.requiresPlatform = req
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
