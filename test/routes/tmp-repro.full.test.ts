import { test } from 'tap'
import { build } from '../helper'
import { startPrivateRedis } from '../support/redis-server'

for (let i = 0; i < 8; i++) {
  test(`close while connections reconnect ${i}`, async (t) => {
    const redis = await startPrivateRedis()
    t.teardown(() => redis.destroy())
    const { app } = await build(t, 'memory', { REDIS_URL: redis.url })
    t.equal((await app.inject({ url: '/health' })).statusCode, 200)
    await redis.stop()
    await app.inject({ url: '/health' })
    await new Promise((resolve) => setTimeout(resolve, i * 300))
    await redis.start()
    let back = 0
    while (back !== 200) back = (await app.inject({ url: '/health' })).statusCode
  })
}
