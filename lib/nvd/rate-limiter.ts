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

export interface RateLimiter {
  /** Resolves once a request may be sent; the slot is consumed at that moment. */
  acquire: (signal?: AbortSignal) => Promise<void>
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
  // Start times of the requests still inside the window, oldest first; never longer than the limit.
  const sent: number[] = []
  // Callers queue in arrival order so a burst cannot starve an earlier waiter.
  let tail: Promise<void> = Promise.resolve()

  function prune (now: number): void {
    while (sent.length > 0 && sent[0] <= now - windowMs) sent.shift()
  }

  function waitTime (): number {
    const now = clock.now()
    prune(now)
    if (sent.length < requestsPerWindow) return 0
    return sent[0] + windowMs - now
  }

  async function take (signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (signal?.aborted) throw abortReason(signal)
      const wait = waitTime()
      if (wait <= 0) {
        sent.push(clock.now())
        return
      }
      await clock.sleep(wait, signal)
    }
  }

  function acquire (signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal))
    // A queued waiter that aborts gives up its turn without taking a slot (take() sees the signal).
    const turn = tail.then(() => take(signal))
    tail = turn.catch(() => {})
    if (signal === undefined) return turn
    return new Promise((resolve, reject) => {
      const onAbort = (): void => reject(abortReason(signal))
      signal.addEventListener('abort', onAbort, { once: true })
      turn.then(
        () => { signal.removeEventListener('abort', onAbort); resolve() },
        (err: unknown) => { signal.removeEventListener('abort', onAbort); reject(err) })
    })
  }

  return { acquire, waitTime, requestsPerWindow, windowMs }
}
