// Failed logins are limited per client address before the key is looked at, and the limit fails closed.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import { redisServerAvailable, startPrivateRedis } from '../support/redis-server'

test('after AUTH_FAILURE_MAX failures an address gets 429, even with a good key; others are unaffected', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend, { AUTH_FAILURE_MAX: 3, AUTH_FAILURE_WINDOW: 60 })
      const from = (ip: string, key?: string) => app.inject({ url: '/host', remoteAddress: ip, headers: key === undefined ? {} : { 'x-api-key': key } })
      for (let i = 0; i < 3; i++) t.equal((await from('127.9.0.1', `wrong-key-${i}`)).statusCode, 401, `failure ${i + 1} is a 401`)
      const over = await from('127.9.0.1')
      t.equal(over.statusCode, 429)
      t.same(over.json(), { error: over.json().error, code: 'VULNSCAN_AUTH_TOO_MANY_FAILURES' })
      t.ok(Number(over.headers['retry-after']) > 0, 'retry-after says when')
      const good = await from('127.9.0.1', SERVICE_KEY)
      t.equal(good.statusCode, 429, 'a blocked address is refused before its key is checked')
      t.equal((await from('127.9.0.2', SERVICE_KEY)).statusCode, 200, 'another address is served')
      t.equal((await app.inject({ url: '/health', remoteAddress: '127.9.0.1' })).statusCode, 200, 'public routes stay open')
    })
  }
})

test('with the limiter\'s Redis down, requests fail closed with 503', { skip: !redisServerAvailable() && 'no redis-server binary' }, async (t) => {
  const redis = await startPrivateRedis()
  t.teardown(() => redis.destroy())
  const { app } = await build(t, 'memory', { REDIS_URL: redis.url, AUTH_FAILURE_MAX: 3, RATE_LIMIT_MAX: 1000 })
  t.equal((await app.inject({ url: '/host', headers: { 'x-api-key': SERVICE_KEY } })).statusCode, 200, 'served while Redis is up')
  await redis.stop()
  const bad = await app.inject({ url: '/host', remoteAddress: '127.9.1.1', headers: { 'x-api-key': 'wrong-key' } })
  t.equal(bad.statusCode, 503, 'a failed login that cannot be counted is not let through as a plain 401')
  t.equal(bad.json().code, 'VULNSCAN_STORE_UNAVAILABLE')
  // Scans live in Redis (hosts and findings are in the results database, which is up).
  const fresh = await app.inject({ url: '/app/scan', remoteAddress: '127.9.1.2', headers: { 'x-api-key': SERVICE_KEY } })
  t.equal(fresh.statusCode, 503, 'the request limit cannot be counted either: 503, not unlimited')
  t.match(fresh.json(), { error: String, code: String })
})
