import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import Fastify from 'fastify'
import app, { serverOptions } from '../../app'

const INVALID = { error: 'Invalid API key' }

test('the same 401 body for a missing, empty, wrong or oversized key', async (t) => {
  const { app } = await build(t)
  for (const headers of [{}, { 'x-api-key': '' }, { 'x-api-key': 'wrong' }, { 'x-api-key': SERVICE_KEY + 'x' }, { 'x-api-key': 'k'.repeat(5000) }]) {
    for (const url of ['/host', '/app/scan', '/admin/keys']) {
      const res = await app.inject({ url, headers })
      t.equal(res.statusCode, 401, `${url} ${JSON.stringify(headers).slice(0, 40)}`)
      t.same(res.json(), INVALID)
      t.equal(res.body, '{"error":"Invalid API key"}', 'exactly the contract body')
    }
  }
  t.equal((await app.inject({ url: '/host', headers: { 'x-api-key': SERVICE_KEY } })).statusCode, 200)
})

test('dynamic keys', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const admin = { 'x-api-key': SERVICE_KEY }
      const created = await app.inject({ method: 'POST', url: '/admin/keys', headers: admin, payload: { label: 'ci' } })
      t.equal(created.statusCode, 201)
      const key = created.json()
      t.match(key, { label: 'ci', lastUsedAt: null, expiresAt: null })
      t.match(key.key, /^vsk_[A-Za-z0-9_-]{43}$/)
      t.ok(key.key.startsWith(key.prefix), 'prefix is the start of the key')
      t.notOk('hash' in key, 'the hash never leaves the server')

      const use = { 'x-api-key': key.key }
      t.equal((await app.inject({ url: '/host', headers: use })).statusCode, 200, 'the new key works')
      const forbidden = await app.inject({ url: '/admin/keys', headers: use })
      t.equal(forbidden.statusCode, 403, 'a dynamic key may not call /admin')
      t.equal(forbidden.json().code, 'VULNSCAN_AUTH_FORBIDDEN')

      const list = await app.inject({ url: '/admin/keys', headers: admin })
      t.equal(list.json().total, 1)
      t.notOk(JSON.stringify(list.json()).includes(key.key), 'the key is never listed')
      t.ok(list.json().items[0].lastUsedAt, 'lastUsedAt is recorded')

      const revoked = await app.inject({ method: 'DELETE', url: `/admin/keys/${key.id}`, headers: admin })
      t.equal(revoked.statusCode, 204)
      const after = await app.inject({ url: '/host', headers: use })
      t.equal(after.statusCode, 401, 'revocation takes effect on the very next request')
      t.same(after.json(), INVALID)
      t.equal((await app.inject({ method: 'DELETE', url: `/admin/keys/${key.id}`, headers: admin })).statusCode, 404)

      const bad = await app.inject({ method: 'POST', url: '/admin/keys', headers: admin, payload: { label: 'x', expiresIn: '30y' } })
      t.equal(bad.statusCode, 400)
      t.match(bad.json().error, /expiresIn/)
    })
  }
})

test('an expired key gets the same 401', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const created = await app.inject({ method: 'POST', url: '/admin/keys', headers: { 'x-api-key': SERVICE_KEY }, payload: { label: 'short', expiresIn: '1s' } })
      const { key, expiresAt } = created.json()
      t.ok(Date.parse(expiresAt) > Date.now())
      t.equal((await app.inject({ url: '/host', headers: { 'x-api-key': key } })).statusCode, 200)
      await new Promise((resolve) => setTimeout(resolve, 1200))
      const res = await app.inject({ url: '/host', headers: { 'x-api-key': key } })
      t.equal(res.statusCode, 401)
      t.same(res.json(), INVALID)
    })
  }
})

test('revocation on one API instance takes effect on another at once', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis answers (required under CI=true)')
  const first = await build(t, 'redis')
  // A second instance on the same Redis prefix, as a second machine behind a load balancer would be.
  const second = Fastify(serverOptions(first.config))
  await second.register(app, { config: first.config })
  t.teardown(() => second.close())
  const admin = { 'x-api-key': SERVICE_KEY }
  const { key, id } = (await first.app.inject({ method: 'POST', url: '/admin/keys', headers: admin, payload: { label: 'shared' } })).json()
  t.equal((await second.inject({ url: '/host', headers: { 'x-api-key': key } })).statusCode, 200, 'created on one, accepted by the other')
  t.equal((await first.app.inject({ method: 'DELETE', url: `/admin/keys/${id}`, headers: admin })).statusCode, 204)
  t.equal((await second.inject({ url: '/host', headers: { 'x-api-key': key } })).statusCode, 401, 'revoked on one, refused by the other')
})

test('only SHA-256 hashes of dynamic keys are stored in Redis', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis answers (required under CI=true)')
  const { app, redis, config } = await build(t, 'redis')
  const { key } = (await app.inject({ method: 'POST', url: '/admin/keys', headers: { 'x-api-key': SERVICE_KEY }, payload: { label: 'x' } })).json()
  await app.inject({ url: '/host', headers: { 'x-api-key': key } })
  const { createHash } = await import('node:crypto')
  const hash = createHash('sha256').update(key).digest('hex')
  let dump = ''
  for (const k of await redis!.keys(`${config.REDIS_PREFIX}:*`)) {
    const type = await redis!.type(k)
    dump += k + ' ' + (type === 'string' ? await redis!.get(k) : type === 'hash' ? JSON.stringify(await redis!.hgetall(k)) : '') + '\n'
  }
  t.notOk(dump.includes(key), 'the plain key is nowhere in Redis')
  t.notOk(dump.includes(key.slice(4, 20)), 'not even a long part of it')
  t.ok(dump.includes(hash), 'its hash is')
})

test('public routes need no key: /health and the docs', async (t) => {
  const { app } = await build(t)
  t.equal((await app.inject({ url: '/health' })).statusCode, 200)
  const docs = await app.inject({ url: '/docs' })
  t.ok([200, 302].includes(docs.statusCode), `docs answered ${docs.statusCode}`)
  const json = await app.inject({ url: '/docs/json' })
  t.equal(json.statusCode, 200)
  t.equal(json.json().openapi, '3.1.0')
})
