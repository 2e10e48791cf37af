// Two API instances on one Redis: each caches key records, and a change made through one is seen by the other on
// its very next request (pub/sub invalidation), as is a revocation made straight in the store (the keys CLI).
import { test } from 'tap'
import { build, redisAnswers, SERVICE_KEY, uniquePrefix } from '../helper'

const SERVICE = { 'x-api-key': SERVICE_KEY }

test('a change on one instance is seen by the other on its next request', async (t) => {
  if (!await redisAnswers()) return t.pass('skipped: no Redis answers (required under CI=true)')
  const prefix = uniquePrefix('instances').replace(/:/g, '.')
  const shared = { REDIS_PREFIX: prefix, QUEUE_PREFIX: `${prefix}-bull` }
  const one = (await build(t, 'redis', shared)).app
  const two = (await build(t, 'redis', shared)).app
  const scan = (id: string): object => ({ id, targets: [{ value: '127.25.0.1', type: 'single_ip' }] })

  const k = (await one.inject({ method: 'POST', url: '/admin/keys', headers: SERVICE, payload: { label: 'x', role: 'operator' } })).json()
  const h = { 'x-api-key': k.key }
  t.equal((await two.inject({ url: '/host', headers: h })).statusCode, 200, 'instance two knows the key (and caches it)')
  t.equal((await two.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scan('i1') })).statusCode, 200)

  t.equal((await one.inject({ method: 'PATCH', url: `/admin/keys/${k.id}`, headers: SERVICE, payload: { role: 'reader' } })).statusCode, 200)
  t.equal((await two.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scan('i2') })).statusCode, 403, 'the new role on the other instance at once')
  t.equal((await two.inject({ url: '/host', headers: h })).statusCode, 200)

  t.equal((await one.inject({ method: 'PATCH', url: `/admin/keys/${k.id}`, headers: SERVICE, payload: { role: 'operator', scope: ['127.26.0.0/16'] } })).statusCode, 200)
  const scoped = await two.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scan('i3') })
  t.equal(scoped.statusCode, 403, 'the new scope on the other instance at once')
  t.match(scoped.json().error, /127\.25\.0\.1/)

  t.equal((await one.inject({ method: 'DELETE', url: `/admin/keys/${k.id}`, headers: SERVICE })).statusCode, 204)
  t.equal((await two.inject({ url: '/host', headers: h })).statusCode, 401, 'revoked on the other instance at once')

  const k2 = (await one.inject({ method: 'POST', url: '/admin/keys', headers: SERVICE, payload: { label: 'cli' } })).json()
  t.equal((await two.inject({ url: '/host', headers: { 'x-api-key': k2.key } })).statusCode, 200)
  // The CLI answers without waiting for the announcement; a running instance has it within moments.
  const heard = two.backends.invalidation.received('apikeys', k2.id, 2000)
  t.ok(await one.store.deleteApiKey(k2.id), 'revoked in the store, as `npm run keys -- revoke` does')
  t.equal(await heard, true, 'instance two hears of it')
  t.equal((await two.inject({ url: '/host', headers: { 'x-api-key': k2.key } })).statusCode, 401)
  t.equal((await one.inject({ url: '/host', headers: { 'x-api-key': k2.key } })).statusCode, 401)
})
