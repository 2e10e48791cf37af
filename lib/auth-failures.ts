// Failed logins counted per client address, so that guessing keys costs a client its access for a while.
// On Redis the count is shared by every instance (a SharedRateCounter on its own prefix); embedded, it lives here.

type Callback = (err: Error | null, res?: { current: number, ttl: number }) => void

/** The two calls the auth hook makes: count a failure, and read the count without a round trip. */
export interface FailureCounter {
  incr(key: string, cb: Callback, timeWindow: number, max: number): void
  read(key: string, cb: Callback): void
}

/** The embedded counter: fixed windows per key, at most `maxKeys` addresses remembered (oldest windows first out). */
export class LocalFailureCounter implements FailureCounter {
  private readonly counts = new Map<string, { current: number, resetAt: number }>()

  constructor (private readonly maxKeys = 10_000) {}

  incr (key: string, cb: Callback, timeWindow: number): void {
    const now = Date.now()
    let c = this.counts.get(key)
    if (c === undefined || now >= c.resetAt) {
      if (this.counts.size >= this.maxKeys) this.prune(now)
      c = { current: 0, resetAt: now + timeWindow }
      this.counts.set(key, c)
    }
    c.current++
    cb(null, { current: c.current, ttl: c.resetAt - now })
  }

  read (key: string, cb: Callback): void {
    const now = Date.now()
    const c = this.counts.get(key)
    cb(null, c === undefined || now >= c.resetAt ? { current: 0, ttl: 0 } : { current: c.current, ttl: c.resetAt - now })
  }

  private prune (now: number): void {
    for (const [k, c] of this.counts) if (now >= c.resetAt) this.counts.delete(k)
    // Still full: forget the oldest entries rather than grow without bound.
    for (const k of this.counts.keys()) {
      if (this.counts.size < this.maxKeys) break
      this.counts.delete(k)
    }
  }
}

export function countAsync (counter: FailureCounter, op: 'incr' | 'read', key: string, windowMs: number, max: number): Promise<{ current: number, ttl: number }> {
  return new Promise((resolve, reject) => {
    const cb: Callback = (err, res) => { if (err !== null || res === undefined) reject(err ?? new Error('no count')); else resolve(res) }
    if (op === 'incr') counter.incr(key, cb, windowMs, max)
    else counter.read(key, cb)
  })
}
