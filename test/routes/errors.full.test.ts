import { test } from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import app, { serverOptions } from '../../app'
import { loadConfig } from '../../lib/config'
import { build, SERVICE_KEY } from '../helper'

const auth = { 'x-api-key': SERVICE_KEY }
const scan = JSON.stringify({ targets: [{ value: '10.0.0.1', type: 'single_ip' }] })

test('HTTP-level errors have the { error, code } shape and the right status', async (t) => {
  const { app } = await build(t, 'memory', { BODY_LIMIT: 2048 })
  const malformed = await app.inject({ method: 'POST', url: '/app/scan', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"targets": [' })
  t.equal(malformed.statusCode, 400)
  t.same(malformed.json(), { error: 'Request body is not valid JSON', code: 'VULNSCAN_HTTP_INVALID_JSON' })

  const wrongType = await app.inject({ method: 'POST', url: '/app/scan', headers: { ...auth, 'content-type': 'text/plain' }, payload: scan })
  t.equal(wrongType.statusCode, 415)
  t.equal(wrongType.json().code, 'VULNSCAN_HTTP_UNSUPPORTED_MEDIA_TYPE')
  t.match(wrongType.json().error, /application\/json/)

  const large = await app.inject({ method: 'POST', url: '/app/scan', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify({ targets: Array(200).fill({ value: '10.0.0.1', type: 'single_ip' }) }) })
  t.equal(large.statusCode, 413)
  t.equal(large.json().code, 'VULNSCAN_HTTP_BODY_TOO_LARGE')

  const empty = await app.inject({ method: 'POST', url: '/app/scan', headers: { ...auth, 'content-type': 'application/json' }, payload: '' })
  t.equal(empty.statusCode, 400)
  t.type(empty.json().error, 'string')

  const unknown = await app.inject({ url: '/no/such/route', headers: auth })
  t.equal(unknown.statusCode, 404)
  t.same(unknown.json(), { error: 'Route GET /no/such/route not found', code: 'VULNSCAN_NOT_FOUND' })
  t.equal((await app.inject({ method: 'PUT', url: '/host', headers: auth })).statusCode, 404)
})

test('a 500 hides internals and logs them with the request id', async (t) => {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _enc, cb) { lines.push(chunk.toString()); cb() } })
  const config = loadConfig({ SERVICE_API_KEY: SERVICE_KEY, LOG_LEVEL: 'info' }, {})
  const fastify = Fastify({ ...serverOptions(config), logger: { ...(serverOptions(config).logger as object), stream } })
  await fastify.register(app, { config })
  t.teardown(() => fastify.close())
  fastify.results.listHosts = async () => { throw new Error('secret internal detail at /var/lib/thing') }
  const res = await fastify.inject({ url: '/host', headers: auth })
  t.equal(res.statusCode, 500)
  t.equal(res.json().code, 'VULNSCAN_INTERNAL')
  t.notMatch(res.body, /secret|\/var\/lib/, 'no internals in the body')
  t.match(res.json().error, new RegExp(res.json().error.match(/request (\S+)\)/)[1]), 'the body names the request id')
  t.ok(lines.some((l) => l.includes('secret internal detail')), 'the log has the cause')
})

test('the API key never reaches the logs', async (t) => {
  const lines: string[] = []
  const stream = new Writable({ write (chunk, _enc, cb) { lines.push(chunk.toString()); cb() } })
  const config = loadConfig({ SERVICE_API_KEY: SERVICE_KEY, LOG_LEVEL: 'trace' }, {})
  const fastify = Fastify({ ...serverOptions(config), logger: { ...(serverOptions(config).logger as object), stream } })
  await fastify.register(app, { config })
  t.teardown(() => fastify.close())
  const created = await fastify.inject({ method: 'POST', url: '/admin/keys', headers: auth, payload: { label: 'log-test' } })
  const dynamic = created.json().key as string
  await fastify.inject({ url: '/host', headers: { 'x-api-key': dynamic } })
  await fastify.inject({ url: '/host', headers: { 'x-api-key': 'wrong-key-value-zzz' } })
  fastify.log.info({ headers: { 'x-api-key': SERVICE_KEY } }, 'a line that carries headers')
  const all = lines.join('')
  t.ok(lines.length > 5, 'requests were logged')
  t.notOk(all.includes(SERVICE_KEY), 'no infrastructure key')
  t.notOk(all.includes(dynamic), 'no dynamic key')
  t.notOk(all.includes('wrong-key-value-zzz'), 'not even a wrong key')
  t.ok(all.includes('[redacted]'), 'a header that reaches a log line is redacted')
})

test('security headers are set, and Swagger UI still loads under them', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ url: '/health' })
  t.equal(res.headers['x-content-type-options'], 'nosniff')
  t.notOk(res.headers['strict-transport-security'], 'no HSTS over plain HTTP')
  t.match(String(res.headers['content-security-policy']), /default-src 'self'/)
  const ui = await app.inject({ url: '/docs/' })
  t.equal(ui.statusCode, 200)
  t.match(ui.body, /swagger-ui/)
})

test('per-key rate limit: 429 with the error shape, counted per key', async (t) => {
  const { app } = await build(t, 'memory', { RATE_LIMIT_MAX: 3 })
  const statuses = []
  for (let i = 0; i < 4; i++) statuses.push((await app.inject({ url: '/host', headers: auth })).statusCode)
  t.same(statuses, [200, 200, 200, 429])
  const limited = await app.inject({ url: '/host', headers: auth })
  t.equal(limited.json().code, 'VULNSCAN_RATE_LIMITED')
  t.match(limited.json().error, /Rate limit exceeded/)
  t.ok(limited.headers['retry-after'])
  const other = (await app.inject({ method: 'POST', url: '/admin/keys', headers: { 'x-api-key': 'nope' }, payload: {} }))
  t.equal(other.statusCode, 401)
})
