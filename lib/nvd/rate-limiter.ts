// Rolling-window request limiter: NVD's firewall counts requests in a sliding 30 s window per client,
// so a fixed-interval token bucket would either waste capacity or still trip the 403 throttle.
// createRateLimiter counts within one process; createRedisRateLimiter shares one window between
// every process that uses the same NVD key (API instances and workers scaled out on one Redis).

import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'

export interface Clock {
  now: () => number
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>
}

export interface RateLimiterOptions {
  requestsPerWindow: number
  windowMs: number
  clock?: Clock
}

/**
 * Call when the request's answer has arrived. The server counts a request when it arrives, which
 * is somewhere between sending and answering, so the slot is re-stamped at the answer: counting
 * from there keeps the client behind the server's window however the latency varies.
 */
export type ReleaseSlot = () => void

export interface RateLimiter {
  /** Resolves once a request may be sent; the slot is taken at that moment. */
  acquire: (signal?: AbortSignal) => Promise<ReleaseSlot>
  readonly requestsPerWindow: number
  readonly windowMs: number
}

export interface LocalRateLimiter extends RateLimiter {
  /** Milliseconds until a slot would be free if acquire were called now (0 when one is free). */
  waitTime: () => number
}

/** NVD's published limits: 5 requests per rolling 30 s without a key, 50 with one. */
export const NVD_WINDOW_MS = 30_000
export const NVD_REQUESTS_WITHOUT_KEY = 5
export const NVD_REQUESTS_WITH_KEY = 50

export function abortReason (signal: AbortSignal): Error {
  const r = signal.reason as unknown
  if (r instanceof Error) return r
  const err = new Error('The operation was aborted')
  err.name = 'AbortError'
  return err
}

export function sleep (ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) { reject(abortReason(signal)); return }
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(abortReason(signal!))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, Math.max(0, ms))
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

export const systemClock: Clock = { now: () => Date.now(), sleep }

/**
 * Serve callers in arrival order, so a burst cannot starve an earlier waiter. A queued waiter that
 * aborts rejects at once and gives up its turn without taking a slot (take() sees the signal).
 */
function inTurn (take: (signal?: AbortSignal) => Promise<ReleaseSlot>): (signal?: AbortSignal) => Promise<ReleaseSlot> {
  let tail: Promise<unknown> = Promise.resolve()
  return (signal) => {
    if (signal?.aborted) return Promise.reject(abortReason(signal))
    const turn = tail.then(async () => await take(signal))
    tail = turn.catch(() => {})
    if (signal === undefined) return turn
    return new Promise((resolve, reject) => {
      const onAbort = (): void => reject(abortReason(signal))
      signal.addEventListener('abort', onAbort, { once: true })
      turn.then(
        (release) => { signal.removeEventListener('abort', onAbort); resolve(release) },
        (err: unknown) => { signal.removeEventListener('abort', onAbort); reject(err) })
    })
  }
}

export function createRateLimiter (opts: RateLimiterOptions): LocalRateLimiter {
  const { requestsPerWindow, windowMs } = opts
  if (!Number.isInteger(requestsPerWindow) || requestsPerWindow < 1) {
    throw new RangeError('requestsPerWindow must be a positive integer')
  }
  if (!(windowMs > 0)) throw new RangeError('windowMs must be positive')
  const clock = opts.clock ?? systemClock
  // Times of the requests still inside the window (send time, moved to answer time on release).
  // At most requestsPerWindow entries, so linear scans are cheap.
  let sent: Array<{ t: number }> = []

  function prune (now: number): void {
    if (sent.some((s) => s.t <= now - windowMs)) sent = sent.filter((s) => s.t > now - windowMs)
  }

  function waitTime (): number {
    const now = clock.now()
    prune(now)
    if (sent.length < requestsPerWindow) return 0
    let oldest = Infinity
    for (const s of sent) oldest = Math.min(oldest, s.t)
    return oldest + windowMs - now
  }

  async function take (signal?: AbortSignal): Promise<ReleaseSlot> {
    for (;;) {
      if (signal?.aborted) throw abortReason(signal)
      const wait = waitTime()
      if (wait <= 0) {
        const slot = { t: clock.now() }
        sent.push(slot)
        return () => { slot.t = Math.max(slot.t, clock.now()) }
      }
      await clock.sleep(wait, signal)
    }
  }

  const acquire = inTurn(take)

  return { acquire, waitTime, requestsPerWindow, windowMs }
}

export interface RedisRateLimiterOptions {
  redis: Redis
  /** The sorted set holding the window, e.g. `vulnscan:nvd:ratelimit`. */
  key: string
  requestsPerWindow: number
  windowMs: number
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
}

// Redis' own clock stamps every slot, so processes on hosts with skewed clocks still agree.
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window * 2)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local wait = tonumber(oldest[2]) + window - now
if wait < 1 then wait = 1 end
return wait
`

const RELEASE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZADD', KEYS[1], 'XX', 'CH', now, ARGV[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
end
return 0
`

/** A rolling-window limiter whose window lives in Redis, shared by every process using the key. */
export function createRedisRateLimiter (opts: RedisRateLimiterOptions): RateLimiter {
  const { redis, key, requestsPerWindow, windowMs } = opts
  if (!Number.isInteger(requestsPerWindow) || requestsPerWindow < 1) {
    throw new RangeError('requestsPerWindow must be a positive integer')
  }
  if (!(windowMs > 0)) throw new RangeError('windowMs must be positive')
  const pause = opts.sleep ?? sleep

  async function take (signal?: AbortSignal): Promise<ReleaseSlot> {
    const member = randomUUID()
    for (;;) {
      if (signal?.aborted) throw abortReason(signal)
      const wait = Number(await redis.eval(TAKE_SCRIPT, 1, key, requestsPerWindow, windowMs, member))
      if (wait === 0) {
        return () => {
          // Best effort: if Redis is briefly unreachable the slot keeps its send time.
          redis.eval(RELEASE_SCRIPT, 1, key, member, windowMs).catch(() => {})
        }
      }
      // A little jitter so processes that woke together do not race for the same freed slot.
      await pause(wait + Math.floor(Math.random() * 20), signal)
    }
  }

  const acquire = inTurn(take)

  return { acquire, requestsPerWindow, windowMs }
}
