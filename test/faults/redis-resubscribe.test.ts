// A Redis connection in subscribe mode restores its subscriptions after each reconnect. When the connection drops
// again before Redis answers that SUBSCRIBE (a Redis that restarts twice in a row, or a process shutting down just
// as Redis comes back), the rejected resubscription must reach the connection's error listener, never the process
// as an unhandled rejection: Node.js ends the process on one. ioredis 6.0.0 left it unhandled (CI run of
// 2026-12-08: test/routes/health.full.test.ts, two "Connection is closed." rejections); 6.1.0 hands it to 'error'.
import { test } from 'tap'
import { Redis } from 'ioredis'
import { redisServerAvailable, startPrivateRedis } from '../support/redis-server'

test('a connection closed while it resubscribes after a reconnect leaves no unhandled rejection', { skip: !redisServerAvailable() && 'redis-server not installed' }, async (t) => {
  const redis = await startPrivateRedis()
  t.teardown(() => redis.destroy())
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown): void => { unhandled.push(reason) }
  // tap turns an unhandled rejection into a failure of its own: listened for here first, to say what it was.
  process.prependListener('unhandledRejection', onUnhandled)
  t.teardown(() => { process.off('unhandledRejection', onUnhandled) })

  for (let round = 0; round < 5; round++) {
    // The subscriber's settings in lib/backends.ts: never give up on a command, resubscribe on reconnect.
    const sub = new Redis(redis.url, { maxRetriesPerRequest: null, enableAutoPipelining: false, autoResubscribe: true, retryStrategy: () => 50 })
    const errors: Error[] = []
    sub.on('error', (err) => { errors.push(err) })
    await sub.subscribe('vulnscan:test:invalidate', 'vulnscan:test:events')
    await redis.kill()
    const closed = new Promise<void>((resolve) => {
      // The moment the connection is ready again, ioredis sends its SUBSCRIBE; the connection goes before the answer.
      // Its socket is destroyed at once, so that no answer already on its way can settle the command first.
      sub.once('ready', () => {
        (sub as unknown as { stream: { destroy(): void } }).stream.destroy()
        sub.disconnect()
        resolve()
      })
    })
    await redis.start()
    await closed
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.same(unhandled.map((r) => (r as Error).message), [], 'no rejection left unhandled')
})
