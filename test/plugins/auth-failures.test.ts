// Failed logins are limited per client address: a locked address has its guesses refused unread, a valid key always
// passes (keys are 192 random bits: the lock slows guessing, it must not shut out the clients behind an address), and
// behind a reverse proxy (TRUST_PROXY) each client is counted on its own address. The limit fails closed.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import { redisServerAvailable, startPrivateRedis } from '../support/redis-server'

test('after AUTH_FAILURE_MAX failures an address gets 429 for its guesses, while valid keys from it pass; others are unaffected', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend, { AUTH_FAILURE_MAX: 3, AUTH_FAILURE_WINDOW: 60 })
      const reader = (await app.inject({ method: 'POST', url: '/admin/keys', headers: { 'x-api-key': SERVICE_KEY }, payload: { label: 'r', role: 'reader' } })).json().key as string
      const from = (ip: string, key?: string) => app.inject({ url: '/host', remoteAddress: ip, headers: key === undefined ? {} : { 'x-api-key': key } })
      for (let i = 0; i < 3; i++) t.equal((await from('127.9.0.1', `wrong-key-${i}`)).statusCode, 401, `failure ${i + 1} is a 401`)
      const over = await from('127.9.0.1')
      t.equal(over.statusCode, 429)
      t.same(over.json(), { error: over.json().error, code: 'VULNSCAN_AUTH_TOO_MANY_FAILURES' })
      t.ok(Number(over.headers['retry-after']) > 0, 'retry-after says when')
      t.equal((await from('127.9.0.1', 'wrong-key-again')).statusCode, 429, 'a further guess from the locked address is refused')
      t.equal((await from('127.9.0.1', SERVICE_KEY)).statusCode, 200, 'the infrastructure key passes from a locked address')
      t.equal((await from('127.9.0.1', reader)).statusCode, 200, 'and so does a valid dynamic key')
      t.equal((await from('127.9.0.2', SERVICE_KEY)).statusCode, 200, 'another address is served')
      t.equal((await from('127.9.0.2', 'wrong-key')).statusCode, 401, 'and its own guesses are counted apart')
      t.equal((await app.inject({ url: '/health', remoteAddress: '127.9.0.1' })).statusCode, 200, 'public routes stay open')
    })
  }
})

test('behind a reverse proxy named in TRUST_PROXY, each client behind it is counted on its own address', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const proxy = '127.9.5.1'
      const { app } = await build(t, backend, { AUTH_FAILURE_MAX: 3, AUTH_FAILURE_WINDOW: 60, TRUST_PROXY: `${proxy},127.9.6.0/24` })
      const via = (client: string, key: string, at = proxy) => app.inject({ url: '/host', remoteAddress: at, headers: { 'x-api-key': key, 'x-forwarded-for': client } })
      for (let i = 0; i < 4; i++) await via('198.51.100.7', `wrong-key-${i}`)
      t.equal((await via('198.51.100.7', 'wrong-key')).statusCode, 429, 'the guessing client is locked')
      t.equal((await via('198.51.100.8', 'wrong-key')).statusCode, 401, 'another client behind the same proxy is not')
      t.equal((await via('198.51.100.8', SERVICE_KEY, '127.9.6.20')).statusCode, 200, 'a proxy inside a trusted block is believed too')
      const refused = (await app.inject({ url: '/admin/audit/refused', headers: { 'x-api-key': SERVICE_KEY } })).json()
      t.same(refused.items, [], 'GETs are not state changes: nothing counted')
      await app.inject({ method: 'DELETE', url: '/host/10.0.0.1', remoteAddress: proxy, headers: { 'x-api-key': 'wrong', 'x-forwarded-for': '198.51.100.9' } })
      const counted = (await app.inject({ url: '/admin/audit/refused', headers: { 'x-api-key': SERVICE_KEY } })).json()
      t.match(counted.items, [{ ip: '198.51.100.9', count: 1 }], 'a refused state change is counted under the client address')
      const untrusted = await app.inject({ url: '/host', remoteAddress: '127.9.7.1', headers: { 'x-api-key': 'wrong', 'x-forwarded-for': '198.51.100.7' } })
      t.equal(untrusted.statusCode, 401, 'X-Forwarded-For from an address not named is ignored: its own address is counted')
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
