import { test } from 'tap'
import { type Clock, createRateLimiter } from '../../../lib/nvd/rate-limiter'

/** A clock whose sleep moves time forward at once, recording each wait. */
function fakeClock (start = 1_000_000): Clock & { waits: number[], t: number } {
  const c = {
    t: start,
    waits: [] as number[],
    now: () => c.t,
    sleep: async (ms: number, signal?: AbortSignal) => {
      if (signal?.aborted) throw new Error('aborted')
      c.waits.push(ms)
      c.t += ms
    }
  }
  return c
}

test('admits N requests at once, then waits for the oldest to leave the window', async (t) => {
  const clock = fakeClock()
  const limiter = createRateLimiter({ requestsPerWindow: 5, windowMs: 30_000, clock })
  const start = clock.t
  const times: number[] = []
  for (let i = 0; i < 12; i++) {
    await limiter.acquire()
    times.push(clock.t - start)
  }
  t.same(times, [0, 0, 0, 0, 0, 30_000, 30_000, 30_000, 30_000, 30_000, 60_000, 60_000])
  // Every 30 s window ending at any admission holds at most 5 admissions.
  for (const end of times) {
    t.ok(times.filter((x) => x > end - 30_000 && x <= end).length <= 5)
  }
})

test('the window rolls: requests spread over time free slots one by one', async (t) => {
  const clock = fakeClock()
  const limiter = createRateLimiter({ requestsPerWindow: 2, windowMs: 10_000, clock })
  await limiter.acquire() // t=0
  clock.t += 4_000
  await limiter.acquire() // t=4000
  clock.t += 1_000
  await limiter.acquire() // must wait until the first leaves: t=10000
  t.same(clock.waits, [5_000])
  await limiter.acquire() // until the second leaves: t=14000
  t.same(clock.waits, [5_000, 4_000])
})

test('waitTime reports when the next slot frees', async (t) => {
  const clock = fakeClock()
  const limiter = createRateLimiter({ requestsPerWindow: 1, windowMs: 1_000, clock })
  t.equal(limiter.waitTime(), 0)
  await limiter.acquire()
  clock.t += 300
  t.equal(limiter.waitTime(), 700)
  clock.t += 700
  t.equal(limiter.waitTime(), 0)
})

test('concurrent callers are served in arrival order and never exceed the limit', async (t) => {
  const limiter = createRateLimiter({ requestsPerWindow: 3, windowMs: 200 })
  const started = Date.now()
  const order: number[] = []
  const stamps: number[] = []
  await Promise.all(Array.from({ length: 7 }, (_, i) => limiter.acquire().then(() => {
    order.push(i)
    stamps.push(Date.now() - started)
  })))
  t.same(order, [0, 1, 2, 3, 4, 5, 6])
  for (const end of stamps) {
    // 5 ms of slack for timer granularity.
    t.ok(stamps.filter((x) => x > end - 195 && x <= end).length <= 3, `at most 3 in any window ending at ${end}`)
  }
  t.ok(stamps[6] >= 390, 'the seventh waited two full windows')
})

test('an aborted waiter rejects at once and gives its turn to the next', async (t) => {
  const limiter = createRateLimiter({ requestsPerWindow: 1, windowMs: 150 })
  await limiter.acquire()
  const ac = new AbortController()
  const aborted = limiter.acquire(ac.signal)
  const next = limiter.acquire()
  const t0 = Date.now()
  ac.abort()
  await t.rejects(aborted)
  t.ok(Date.now() - t0 < 100, 'rejected without waiting for a slot')
  await next
  t.equal(limiter.waitTime() > 0, true, 'the next caller took the slot the aborted one left')
  await t.rejects(limiter.acquire(AbortSignal.abort()), 'an already-aborted signal rejects')
})

test('a released slot counts from when the answer came, not from when it was sent', async (t) => {
  const clock = fakeClock()
  const limiter = createRateLimiter({ requestsPerWindow: 1, windowMs: 1_000, clock })
  const release = await limiter.acquire()
  clock.t += 400 // the request took 400 ms to answer
  release()
  t.equal(limiter.waitTime(), 1_000, 'the window restarts at the answer')
  await limiter.acquire()
  t.same(clock.waits, [1_000])
})

test('rejects nonsensical limits', async (t) => {
  t.throws(() => createRateLimiter({ requestsPerWindow: 0, windowMs: 1000 }))
  t.throws(() => createRateLimiter({ requestsPerWindow: 2.5, windowMs: 1000 }))
  t.throws(() => createRateLimiter({ requestsPerWindow: 5, windowMs: 0 }))
})
