// POST/GET/PATCH/DELETE /admin/credentials on both backends: admins manage them, operators only name them in scans
// (within each credential's scope); secrets are sealed at rest, never answered, logged or audited; the scaled
// deployment refuses to start without CREDENTIALS_KEY or with another key than the one its secrets were sealed with.
import { test } from 'tap'
import { PassThrough } from 'node:stream'
import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import app, { serverOptions } from '../../../app'
import { loadConfig } from '../../../lib/config'
import { backends, build, deletePrefix, dropSchema, DATABASE_TEST_URL, REDIS_TEST_URL, SERVICE_KEY, TEST_CREDENTIALS_KEY, uniquePrefix, uniqueSchema } from '../../helper'
import { keyPair } from '../../support/ssh-lab'

const SERVICE = { 'x-api-key': SERVICE_KEY }

for (const backend of ['memory', 'redis'] as const) {
  test(`credentials: who may do what, and the secret never shows (${backend})`, async (t) => {
    if (!(await backends()).includes(backend)) return t.pass(`skipped: no ${backend} backend here`)
    const logs: string[] = []
    const logStream = new PassThrough()
    logStream.on('data', (d: Buffer) => logs.push(d.toString()))
    const { app: server, redis, config } = await build(t, backend, { LOG_LEVEL: 'trace' }, { logStream })
    const answers: string[] = []
    const inject = async (opts: { method?: string, url: string, headers?: Record<string, string>, payload?: unknown }): Promise<{ statusCode: number, json: () => any }> => {
      const res = await server.inject(opts as never)
      answers.push(res.body)
      return res
    }
    const key = keyPair('correct horse')
    const password = `pw-${randomBytes(9).toString('hex')}`
    const operator = (await inject({ method: 'POST', url: '/admin/keys', headers: SERVICE, payload: { label: 'ops', role: 'operator' } })).json().key as string
    const admin = (await inject({ method: 'POST', url: '/admin/keys', headers: SERVICE, payload: { label: 'boss', role: 'admin' } })).json().key as string

    const created = await inject({ method: 'POST', url: '/admin/credentials', headers: { 'x-api-key': admin }, payload: { name: 'fleet', type: 'ssh', username: 'scanner', privateKey: key.privateKey, passphrase: 'correct horse', scope: ['192.0.2.0/24'] } })
    t.equal(created.statusCode, 201)
    const id = created.json().id as string
    t.equal((await inject({ method: 'POST', url: '/admin/credentials', headers: { 'x-api-key': operator }, payload: { name: 'x', type: 'ssh', username: 'x', password } })).statusCode, 403, 'an operator cannot create one')
    t.equal((await inject({ url: '/admin/credentials', headers: { 'x-api-key': operator } })).statusCode, 403, 'nor read them')
    t.equal((await inject({ url: `/admin/credentials/${id}`, headers: { 'x-api-key': operator } })).statusCode, 403)
    t.equal((await inject({ method: 'POST', url: '/admin/credentials', headers: SERVICE, payload: { name: 'pw', type: 'ssh', username: 'scanner', password } })).statusCode, 201)

    const wrongPassphrase = await inject({ method: 'POST', url: '/admin/credentials', headers: SERVICE, payload: { name: 'bad', type: 'ssh', username: 'x', privateKey: key.privateKey, passphrase: 'wrong' } })
    t.equal(wrongPassphrase.statusCode, 400)
    t.match(wrongPassphrase.json(), { code: 'VULNSCAN_CREDENTIAL_INVALID', error: /privateKey cannot be read with this passphrase/ })
    t.equal((await inject({ method: 'POST', url: '/admin/credentials', headers: SERVICE, payload: { name: 'both', type: 'ssh', username: 'x', privateKey: key.privateKey, password } })).statusCode, 400, 'not both secrets')
    t.equal((await inject({ method: 'POST', url: '/admin/credentials', headers: SERVICE, payload: { name: 'none', type: 'ssh', username: 'x' } })).statusCode, 400, 'not none')
    t.equal((await inject({ method: 'POST', url: '/admin/credentials', headers: SERVICE, payload: { name: 'pub', type: 'ssh', username: 'x', privateKey: key.publicKey } })).statusCode, 400, 'a public key is no private key')
    const pinned = await inject({ method: 'POST', url: '/admin/credentials', headers: SERVICE, payload: { name: 'pinned', type: 'ssh', username: 'x', password, hostKeys: [{ host: '192.0.2.5', fingerprint: key.publicKey }] } })
    t.equal(pinned.statusCode, 201)
    t.match(pinned.json().hostKeys[0].fingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/, 'a public key line is pinned as its fingerprint')
    t.equal((await inject({ method: 'POST', url: '/admin/credentials', headers: SERVICE, payload: { name: 'badpin', type: 'ssh', username: 'x', password, hostKeys: [{ host: '192.0.2.5', fingerprint: 'MD5:aa' }] } })).statusCode, 400)

    // Operators use credentials in scans, by name or id, within the credential's scope.
    const inScope = await inject({ method: 'POST', url: '/app/scan', headers: { 'x-api-key': operator }, payload: { targets: [{ value: '192.0.2.9', type: 'single_ip' }], options: { credentials: ['fleet'] } } })
    t.equal(inScope.statusCode, 200)
    const scan = (await inject({ url: `/app/scan/${inScope.json().id}`, headers: SERVICE })).json()
    t.same(scan.credentials, [id], 'kept by id')
    const outside = await inject({ method: 'POST', url: '/app/scan', headers: { 'x-api-key': operator }, payload: { targets: [{ value: '198.51.100.1', type: 'single_ip' }], options: { credentials: [id] } } })
    t.equal(outside.statusCode, 403)
    t.match(outside.json(), { code: 'VULNSCAN_CREDENTIAL_OUTSIDE_SCOPE', error: /scope of credential 'fleet'/ })
    const sched = await inject({ method: 'POST', url: '/app/schedule', headers: { 'x-api-key': operator }, payload: { name: 'nightly', cron: '0 3 * * *', scan: { targets: [{ value: '192.0.2.0/28', type: 'cidr' }], options: { credentials: ['fleet'] } } } })
    t.equal(sched.statusCode, 201)
    t.same(sched.json().scan.options.credentials, [id], 'a schedule keeps it by id too')
    t.equal((await inject({ method: 'POST', url: '/app/schedule', headers: SERVICE, payload: { name: 'n2', cron: '0 3 * * *', scan: { targets: [{ value: '192.0.2.1', type: 'single_ip' }], options: { credentials: ['ghost'] } } } })).statusCode, 400)

    const rotated = await inject({ method: 'PATCH', url: '/admin/credentials/fleet', headers: { 'x-api-key': admin }, payload: { password } })
    t.equal(rotated.statusCode, 200)
    t.equal(rotated.json().auth, 'password')
    t.equal((await inject({ method: 'PATCH', url: '/admin/credentials/fleet', headers: SERVICE, payload: { passphrase: 'x' } })).statusCode, 400, 'a passphrase alone changes nothing')
    t.equal((await inject({ method: 'PATCH', url: '/admin/credentials/fleet', headers: { 'x-api-key': operator }, payload: { port: 2222 } })).statusCode, 403)

    // At rest: sealed, bound to the record.
    if (redis !== undefined) {
      const raw = await redis.get(`${config.REDIS_PREFIX}:credential:${id}`) ?? ''
      t.match(raw, /"sealed":"v1\./, 'stored sealed')
      t.notOk(raw.includes(password), 'never in the clear')
    }
    const stored = await server.store.getCredential(id)
    t.equal(server.credentials.opened(stored!).password, password, 'opens for a login')

    t.equal((await inject({ method: 'POST', url: '/admin/credentials/rotate', headers: { 'x-api-key': operator } })).statusCode, 403)
    t.same((await inject({ method: 'POST', url: '/admin/credentials/rotate', headers: SERVICE })).json(), { resealed: 0, current: 3 })
    t.equal((await inject({ method: 'DELETE', url: '/admin/credentials/fleet', headers: { 'x-api-key': operator } })).statusCode, 403)
    t.equal((await inject({ method: 'DELETE', url: '/admin/credentials/fleet', headers: SERVICE })).statusCode, 204)
    t.equal((await inject({ method: 'DELETE', url: '/admin/credentials/fleet', headers: SERVICE })).statusCode, 404)

    const audit = (await inject({ url: '/admin/audit?limit=500', headers: SERVICE })).json()
    t.ok(audit.items.some((e: any) => e.route === '/admin/credentials/:id' && e.method === 'PATCH' && e.targetId === id))
    const everything = [...answers, ...logs, JSON.stringify(audit)].join('\n')
    for (const secret of [password, 'correct horse', ...key.privateKey.split('\n').filter((l) => l.length >= 20)]) {
      t.notOk(everything.includes(secret), 'no secret in any answer, log line or audit entry')
    }
    t.ok(logs.some((l) => l.includes('credential created')), 'the logs were read')
  })
}

test('the scaled deployment needs CREDENTIALS_KEY, and the one its secrets were sealed with', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis here')
  const prefix = uniquePrefix('credkey').replace(/:/g, '.')
  const schema = uniqueSchema('credkey')
  const start = async (key: string | undefined, previous = ''): Promise<void> => {
    const config = loadConfig({
      SERVICE_API_KEY: SERVICE_KEY, LOG_LEVEL: 'silent', REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: prefix, QUEUE_PREFIX: `${prefix}-bull`,
      DATABASE_URL: DATABASE_TEST_URL, DATABASE_SCHEMA: schema, WORKER_ENABLED: false, NVD_INDEX_FILE: '', SOURCES_FILE: '',
      ...(key !== undefined ? { CREDENTIALS_KEY: key } : {}), CREDENTIALS_KEY_PREVIOUS: previous
    }, {})
    const fastify = Fastify(serverOptions(config))
    try {
      await fastify.register(app, { config })
      await fastify.ready()
    } finally {
      await fastify.close().catch(() => {})
    }
  }
  t.teardown(async () => {
    const redis = new Redis(REDIS_TEST_URL)
    await deletePrefix(redis, prefix)
    redis.disconnect()
    await dropSchema(schema)
  })
  await t.rejects(start(undefined), /CREDENTIALS_KEY is not set/)
  await start(TEST_CREDENTIALS_KEY)
  const other = randomBytes(32).toString('hex')
  await t.rejects(start(other), /CREDENTIALS_KEY does not open the secrets already stored/)
  await t.resolves(start(other, TEST_CREDENTIALS_KEY), 'the old key as CREDENTIALS_KEY_PREVIOUS opens them during a rotation')
})
