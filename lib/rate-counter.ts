// The per-key request counter that every API instance shares through Redis (@fastify/rate-limit's store
// interface), counting locally between syncs so that a request costs no Redis round trip.
import type { Redis } from 'ioredis'

// Add an instance's requests to the shared count; start the window on its first requests. Returns the shared
// count and the milliseconds left in the window.
const ADD_LUA = `
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return { count, ttl }
`

type RedisWithAdd = Redis & { vulnscanRateAdd(key: string, n: number, windowMs: number): Promise<[number, number]> }

interface KeyCount {
  /** The shared count at the last sync (this instance's synced requests included). */
  shared: number
  /** Requests sent to Redis and not answered yet. */
  inflight: number
  /** Requests counted here and not yet sent. */
  pending: number
  resetAt: number
  lastSync: number
  /** The window's first sync while it is in flight: the requests behind it wait rather than all asking Redis. */
  first: Promise<unknown> | null
}

type StoreCallback = (err: Error | null, res?: { current: number, ttl: number }) => void

/**
 * The per-key limit on Redis, shared by every API instance, without a Redis round trip per request. The
 * plugin's own Redis store runs a script per request, which cost a third of GET /host's throughput. Here
 * each instance counts locally and adds its count to the shared one at most every `syncMs` per key; a
 * request is answered from the shared count last read plus what the instance has seen since. A key's first
 * request in a window, and every request once the count is within a tenth of the limit, waits for the
 * shared count, so the limit is exact where it is enforced; far below it, instances see each other's
 * requests at most `syncMs` late.
 */
export class SharedRateCounter {
  private readonly counts = new Map<string, KeyCount>()
  private readonly redis: RedisWithAdd
  private readonly timer: NodeJS.Timeout

  constructor (redis: Redis, private readonly prefix: string, private readonly syncMs = 100, private readonly maxKeys = 10_000) {
    if (typeof (redis as unknown as Partial<RedisWithAdd>).vulnscanRateAdd !== 'function') {
      redis.defineCommand('vulnscanRateAdd', { numberOfKeys: 1, lua: ADD_LUA })
    }
    this.redis = redis as unknown as RedisWithAdd
    this.timer = setInterval(() => this.flushAll(), syncMs)
    this.timer.unref()
  }

  close (): void {
    clearInterval(this.timer)
  }

  /** The store interface of @fastify/rate-limit: one store serves every route. */
  child (): this {
    return this
  }

  incr (key: string, cb: StoreCallback, timeWindow: number, max: number): void {
    const now = Date.now()
    let c = this.counts.get(key)
    // resetAt is 0 until the window's first sync answers.
    if (c === undefined || (c.resetAt !== 0 && now >= c.resetAt)) {
      if (c === undefined && this.counts.size >= this.maxKeys) this.prune(now)
      c = { shared: 0, inflight: 0, pending: 0, resetAt: 0, lastSync: 0, first: null }
      if (this.counts.size < this.maxKeys) this.counts.set(key, c)
    }
    if (c.first !== null) {
      c.first.then(() => this.incr(key, cb, timeWindow, max), (err: Error) => cb(err))
      return
    }
    c.pending++
    if (c.resetAt === 0) {
      const first = this.sync(key, c, timeWindow)
      const counter = c
      c.first = first.finally(() => { counter.first = null })
      // Requests behind it are told through cb; this derived promise must not count as an unhandled rejection,
      // which ends the process (Redis down made the API exit).
      c.first.catch(() => {})
      first.then((res) => cb(null, res), (err: Error) => cb(err))
      return
    }
    const estimate = c.shared + c.inflight + c.pending
    if (estimate >= max - Math.ceil(max / 10)) {
      this.sync(key, c, timeWindow).then((res) => cb(null, res), (err: Error) => cb(err))
      return
    }
    if (now - c.lastSync >= this.syncMs && c.inflight === 0) this.sync(key, c, timeWindow).catch(() => {})
    cb(null, { current: estimate, ttl: c.resetAt - now })
  }

  read (key: string, cb: StoreCallback): void {
    const now = Date.now()
    const c = this.counts.get(key)
    if (c === undefined || now >= c.resetAt) cb(null, { current: 0, ttl: 0 })
    else cb(null, { current: c.shared + c.inflight + c.pending, ttl: c.resetAt - now })
  }

  private async sync (key: string, c: KeyCount, timeWindow: number): Promise<{ current: number, ttl: number }> {
    const n = c.pending
    c.pending = 0
    c.inflight += n
    c.lastSync = Date.now()
    try {
      const [count, ttl] = await this.redis.vulnscanRateAdd(this.prefix + key, n, timeWindow)
      c.inflight -= n
      // Replies come back in order on the one connection, so the last one read is the newest count, and
      // `count` is this batch's place in the window (later requests are not held against it).
      c.shared = count
      c.resetAt = Date.now() + ttl
      return { current: count, ttl }
    } catch (err) {
      c.inflight -= n
      c.pending += n
      throw err
    }
  }

  private flushAll (): void {
    const now = Date.now()
    for (const [key, c] of this.counts) {
      if (c.pending > 0 && c.inflight === 0 && now < c.resetAt) {
        this.sync(key, c, Math.max(1, c.resetAt - now)).catch(() => {})
      }
    }
    this.prune(now)
  }

  private prune (now: number): void {
    for (const [key, c] of this.counts) {
      if (now >= c.resetAt && c.inflight === 0) this.counts.delete(key)
    }
  }
}
