// The Redis store: records as JSON strings under `<prefix>:<kind>:<id>`, sorted sets for listing.
import type { Redis } from 'ioredis'
import type { ApiKeyRecord, HostRecord, ListOptions, Page, ScanRecord, ScanStatus, Store } from './types'

// One round trip for a page: total, then the JSON of each host in the requested slice (newest first).
const HOST_PAGE_LUA = `
local total = redis.call('ZCARD', KEYS[1])
local ids = redis.call('ZREVRANGE', KEYS[1], ARGV[1], ARGV[2])
local out = { total }
for i, id in ipairs(ids) do
  out[i + 1] = redis.call('GET', ARGV[3] .. id) or false
end
return out
`

type RedisWithCommands = Redis & {
  vulnscanHostPage(key: string, start: number, stop: number, hostPrefix: string): Promise<[number, ...(string | null)[]]>
}

export class RedisStore implements Store {
  readonly kind = 'redis' as const
  private readonly redis: RedisWithCommands

  constructor (redis: Redis, private readonly prefix: string) {
    if (typeof (redis as unknown as Partial<RedisWithCommands>).vulnscanHostPage !== 'function') {
      redis.defineCommand('vulnscanHostPage', { numberOfKeys: 1, lua: HOST_PAGE_LUA })
    }
    this.redis = redis as RedisWithCommands
  }

  key (...parts: string[]): string {
    return [this.prefix, ...parts].join(':')
  }

  async ping (): Promise<void> {
    await this.redis.ping()
  }

  /** The connection belongs to whoever created it (the redis plugin), which closes it. */
  async close (): Promise<void> {}

  async createScan (scan: ScanRecord): Promise<{ created: boolean, scan: ScanRecord }> {
    const ok = await this.redis.set(this.key('scan', scan.id), JSON.stringify(scan), 'NX')
    if (ok === 'OK') {
      const score = Date.parse(scan.createdAt)
      await this.redis.multi()
        .zadd(this.key('scans'), score, scan.id)
        .zadd(this.key('scans', 'status', scan.status), score, scan.id)
        .exec()
      return { created: true, scan }
    }
    const existing = await this.getScan(scan.id)
    if (!existing) return this.createScan(scan)
    return { created: false, scan: existing }
  }

  async getScan (id: string): Promise<ScanRecord | null> {
    const raw = await this.redis.get(this.key('scan', id))
    return raw ? JSON.parse(raw) as ScanRecord : null
  }

  async listScans (opts: ListOptions & { status?: ScanStatus }): Promise<Page<ScanRecord>> {
    const set = opts.status ? this.key('scans', 'status', opts.status) : this.key('scans')
    const [[, total], [, ids]] = await this.redis.multi()
      .zcard(set)
      .zrevrange(set, opts.offset, opts.offset + opts.limit - 1)
      .exec() as [[null, number], [null, string[]]]
    if (ids.length === 0) return { items: [], total }
    const raws = await this.redis.mget(ids.map((id) => this.key('scan', id)))
    return { items: raws.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as ScanRecord), total }
  }

  async listHostsJson (opts: ListOptions): Promise<Page<string>> {
    const [total, ...items] = await this.redis.vulnscanHostPage(this.key('hosts'), opts.offset, opts.offset + opts.limit - 1, this.key('host', ''))
    return { items: items.filter((r): r is string => typeof r === 'string'), total }
  }

  async getHost (address: string): Promise<HostRecord | null> {
    const raw = await this.redis.get(this.key('host', address))
    return raw ? JSON.parse(raw) as HostRecord : null
  }

  async putHost (host: HostRecord): Promise<void> {
    await this.redis.multi()
      .set(this.key('host', host.address), JSON.stringify(host))
      .zadd(this.key('hosts'), Date.parse(host.lastSeen), host.address)
      .exec()
  }

  async createApiKey (key: ApiKeyRecord): Promise<void> {
    const m = this.redis.multi()
      .set(this.key('apikey', key.hash), JSON.stringify(key))
      .hset(this.key('apikeys'), key.id, key.hash)
    if (key.expiresAt !== null) m.pexpireat(this.key('apikey', key.hash), Date.parse(key.expiresAt))
    await m.exec()
  }

  async findApiKey (hash: string): Promise<ApiKeyRecord | null> {
    const raw = await this.redis.get(this.key('apikey', hash))
    if (raw === null) return null
    const k = JSON.parse(raw) as ApiKeyRecord
    if (k.expiresAt !== null && Date.parse(k.expiresAt) <= Date.now()) return null
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
    raws.forEach((raw, i) => {
      if (raw === null) return
      const k = JSON.parse(raw) as ApiKeyRecord
      keys.push({ ...k, lastUsedAt: used[i] ?? k.lastUsedAt })
    })
    return keys.sort((a, b) => a.createdAt.localeCompare(b.createdAt))
  }

  async deleteApiKey (id: string): Promise<boolean> {
    const hash = await this.redis.hget(this.key('apikeys'), id)
    if (hash === null) return false
    await this.redis.multi()
      .del(this.key('apikey', hash))
      .hdel(this.key('apikeys'), id)
      .hdel(this.key('apikey-used'), hash)
      .exec()
    return true
  }

  async touchApiKey (hash: string, at: string): Promise<void> {
    await this.redis.hset(this.key('apikey-used'), hash, at)
  }
}
