// Rolling-window request limiter: NVD's firewall counts requests in a sliding 30 s window per client,
// so a fixed-interval token bucket would either waste capacity or still trip the 403 throttle.

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
  /** Milliseconds until a slot would be free if acquire were called now (0 when one is free). */
  waitTime: () => number
  readonly requestsPerWindow: number
  readonly windowMs: number
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

export function createRateLimiter (opts: RateLimiterOptions): RateLimiter {
  const { requestsPerWindow, windowMs } = opts
  if (!Number.isInteger(requestsPerWindow) || requestsPerWindow < 1) {
    throw new RangeError('requestsPerWindow must be a positive integer')
  }
  if (!(windowMs > 0)) throw new RangeError('windowMs must be positive')
  const clock = opts.clock ?? systemClock
  // Times of the requests still inside the window (send time, moved to answer time on release).
  // At most requestsPerWindow entries, so linear scans are cheap.
  let sent: Array<{ t: number }> = []
  // Callers queue in arrival order so a burst cannot starve an earlier waiter.
  let tail: Promise<unknown> = Promise.resolve()

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

  function acquire (signal?: AbortSignal): Promise<ReleaseSlot> {
    if (signal?.aborted) return Promise.reject(abortReason(signal))
    // A queued waiter that aborts gives up its turn without taking a slot (take() sees the signal).
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

  return { acquire, waitTime, requestsPerWindow, windowMs }
}
