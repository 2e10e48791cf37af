import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { before, teardown, test } from 'tap'
import { createRedisRateLimiter } from '../../../lib/nvd/rate-limiter'

// Two connections stand for two processes (say an API instance and a worker) sharing one NVD key.
const a = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true, maxRetriesPerRequest: 1 })
const b = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true, maxRetriesPerRequest: 1 })
const prefix = `vulnscan-test:rate-limiter-redis:${randomBytes(6).toString('hex')}:`
before(async () => { await Promise.all([a.connect(), b.connect()]) })
teardown(async () => {
  const keys = await a.keys(prefix.replace(/[*?[\]\\]/g, '\\$&') + '*')
  if (keys.length > 0) await a.del(...keys)
  a.disconnect()
  b.disconnect()
})

test('two processes share one rolling window', async (t) => {
  const key = prefix + 'shared'
  const la = createRedisRateLimiter({ redis: a, key, requestsPerWindow: 3, windowMs: 300 })
  const lb = createRedisRateLimiter({ redis: b, key, requestsPerWindow: 3, windowMs: 300 })
  const started = Date.now()
  const stamps: number[] = []
  await Promise.all([
    ...Array.from({ length: 5 }, async () => { await la.acquire(); stamps.push(Date.now() - started) }),
    ...Array.from({ length: 4 }, async () => { await lb.acquire(); stamps.push(Date.now() - started) })
  ])
  stamps.sort((x, y) => x - y)
  t.equal(stamps.length, 9)
  for (const end of stamps) {
    t.ok(stamps.filter((x) => x > end - 290 && x <= end).length <= 3, `at most 3 in the window ending at ${end} ms`)
  }
  t.ok(stamps[8] >= 580, 'nine requests at 3 per 300 ms need two more windows')
  t.ok(await a.pttl(key) > 0, 'the window key expires by itself')
})

test('release moves a slot to the answer time; abort gives up waiting', async (t) => {
  const key = prefix + 'release'
  const l = createRedisRateLimiter({ redis: a, key, requestsPerWindow: 1, windowMs: 400 })
  const release = await l.acquire()
  const sentScore = Number((await a.zrange(key, '0', '0', 'WITHSCORES'))[1])
  await new Promise((resolve) => setTimeout(resolve, 150))
  release()
  await new Promise((resolve) => setTimeout(resolve, 30))
  const answeredScore = Number((await a.zrange(key, '0', '0', 'WITHSCORES'))[1])
  t.ok(answeredScore - sentScore >= 140, 'the slot was re-stamped when the answer came')
  const t0 = Date.now()
  await l.acquire()
  t.ok(Date.now() - t0 >= 350, 'the next request waited a window from the answer')
  await t.rejects(l.acquire(AbortSignal.timeout(50)), 'abort while waiting')
  t.throws(() => createRedisRateLimiter({ redis: a, key, requestsPerWindow: 0, windowMs: 1 }))
})
