// The source store on Redis: one hash per table under `<prefix>src:<table>`, metadata in
// `<prefix>src:meta`, and a counter `<prefix>src:rev` that every write increments so readers in
// every process can tell their caches are stale.
import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { checkTable, type Entry, type SourceStore } from './source-store'

export interface RedisSourceStoreOptions {
  /** A connection the caller owns (and closes). */
  redis: Redis
  /** Key prefix including its separator, e.g. `vulnscan:`. */
  prefix: string
}

const PUT_BATCH = 2000

export class RedisSourceStore implements SourceStore {
  private readonly redis: Redis
  private readonly base: string

  constructor (opts: RedisSourceStoreOptions) {
    this.redis = opts.redis
    this.base = `${opts.prefix}src:`
  }

  private key (table: string): string {
    checkTable(table)
    return this.base + 't:' + table
  }

  private async bump (): Promise<void> {
    await this.redis.incr(this.base + 'rev')
  }

  private async write (key: string, entries: Iterable<Entry>): Promise<number> {
    let n = 0
    let args: string[] = []
    const send = async (): Promise<void> => {
      if (args.length > 0) await this.redis.hset(key, ...args)
      args = []
    }
    for (const [k, v] of entries) {
      args.push(k, v)
      n++
      if (args.length >= PUT_BATCH * 2) await send()
    }
    await send()
    return n
  }

  async put (table: string, entries: Iterable<Entry>): Promise<void> {
    await this.write(this.key(table), entries)
    await this.bump()
  }

  async get (table: string, key: string): Promise<string | null> {
    return await this.redis.hget(this.key(table), key)
  }

  async getMany (table: string, keys: readonly string[]): Promise<Array<string | null>> {
    if (keys.length === 0) return []
    return await this.redis.hmget(this.key(table), ...keys)
  }

  async delete (table: string, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return
    await this.redis.hdel(this.key(table), ...keys)
    await this.bump()
  }

  async clear (table: string): Promise<void> {
    await this.redis.unlink(this.key(table))
    await this.bump()
  }

  async replace (table: string, batches: AsyncIterable<Entry[]> | Iterable<Entry[]>): Promise<number> {
    const key = this.key(table)
    // Filled aside and renamed over the old table in one step: readers never see it half-filled.
    const tmp = `${key}:next:${randomBytes(6).toString('hex')}`
    let n = 0
    try {
      for await (const batch of batches) n += await this.write(tmp, batch)
      if (n === 0) await this.redis.unlink(key)
      else await this.redis.rename(tmp, key)
    } catch (err) {
      await this.redis.unlink(tmp)
      throw err
    }
    await this.bump()
    return n
  }

  async count (table: string): Promise<number> {
    return await this.redis.hlen(this.key(table))
  }

  async * scan (table: string, batchSize = 1000): AsyncIterable<Array<[string, string]>> {
    const key = this.key(table)
    let cursor = '0'
    do {
      const [next, flat] = await this.redis.hscan(key, cursor, 'COUNT', batchSize)
      cursor = next
      const batch: Array<[string, string]> = []
      for (let i = 0; i + 1 < flat.length; i += 2) batch.push([flat[i], flat[i + 1]])
      if (batch.length > 0) yield batch
    } while (cursor !== '0')
  }

  async getMeta (key: string): Promise<string | null> {
    return await this.redis.hget(this.base + 'meta', key)
  }

  /** The tables' hashes (`<prefix>src:t:<table>`), not a replace's hash filled aside. */
  async tables (): Promise<string[]> {
    const out: string[] = []
    const at = this.base + 't:'
    let cursor = '0'
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', at.replace(/[*?[\]\\]/g, '\\$&') + '*', 'COUNT', 1000)
      cursor = next
      for (const key of keys) {
        const name = key.slice(at.length)
        if (/^[a-z0-9][a-z0-9_-]*$/.test(name)) out.push(name)
      }
    } while (cursor !== '0')
    return [...new Set(out)].sort()
  }

  async allMeta (): Promise<Array<[string, string]>> {
    return Object.entries(await this.redis.hgetall(this.base + 'meta'))
  }

  async setMeta (key: string, value: string): Promise<void> {
    await this.redis.hset(this.base + 'meta', key, value)
    await this.bump()
  }

  async revision (): Promise<string> {
    return (await this.redis.get(this.base + 'rev')) ?? '0'
  }

  async flush (): Promise<void> {}

  async close (): Promise<void> {}
}

export function createRedisSourceStore (opts: RedisSourceStoreOptions): RedisSourceStore {
  return new RedisSourceStore(opts)
}
