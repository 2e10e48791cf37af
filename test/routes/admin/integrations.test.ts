// /admin/integrations on both backends: the token sealed and never returned (nor in the store in the clear), tracker
// URLs checked like webhook URLs, bad bodies a 400 {error, code}, admin only; a rate-limited tracker honoured
// (Retry-After) and every request in the deliveries.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../../helper'
import { startFakeTracker } from '../../support/fake-trackers'
import { finding, write } from '../../support/results'
import { createSyncHandler } from '../../../lib/integrations/jobs'

const auth = { 'x-api-key': SERVICE_KEY }
type Json = Record<string, any>

test('integrations: create, read, change, delete; the token never leaves', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app, redis } = await build(t, backend, { WEBHOOK_ALLOW: '127.0.0.0/8' })
      const token = 'ghp_secret_token_never_shown_0123456789'
      const created = await app.inject({ method: 'POST', url: '/admin/integrations', headers: auth, payload: { name: 'sec', kind: 'github', url: 'http://127.0.0.9:1', project: 'example/security', token, filter: { minSeverity: 'high', kevOnly: true, tags: ['prod'] }, grouping: 'host' } })
      t.equal(created.statusCode, 201, created.body)
      const i = created.json() as Json
      t.match(i, { name: 'sec', kind: 'github', project: 'example/security', filter: { minSeverity: 'high', kevOnly: true, tags: ['prod'] }, grouping: 'host', enabled: true })
      t.notOk('token' in i || 'sealedToken' in i || 'createdBy' in i)
      const all = [
        await app.inject({ url: `/admin/integrations/${String(i.id)}`, headers: auth }),
        await app.inject({ url: '/admin/integrations', headers: auth }),
        await app.inject({ method: 'PATCH', url: `/admin/integrations/${String(i.id)}`, headers: auth, payload: { token: 'ghp_rotated_secret', description: 'rotated' } })
      ]
      for (const r of all) {
        t.equal(r.statusCode, 200)
        t.notOk(r.body.includes(token) || r.body.includes('ghp_rotated_secret') || r.body.includes('sealed'), 'no token in any answer')
      }
      t.equal(all[2].json().description, 'rotated')
      const stored = await app.backends.integrations.get(i.id as string)
      t.notOk(JSON.stringify(stored).includes('ghp_rotated_secret'), 'sealed at rest')
      t.equal(app.secretBox.open(stored?.sealedToken ?? '', `integration:${String(i.id)}`), 'ghp_rotated_secret', 'and opens for its own record only')
      t.throws(() => app.secretBox.open(stored?.sealedToken ?? '', 'integration:other'))
      if (redis !== undefined) {
        const keys = await redis.keys(`${app.config.REDIS_PREFIX}:integration*`)
        for (const k of keys) if (await redis.type(k) === 'string') t.notOk(String(await redis.get(k)).includes('ghp_'), 'Redis holds no token in the clear')
      }
      t.equal((await app.inject({ method: 'DELETE', url: `/admin/integrations/${String(i.id)}`, headers: auth })).statusCode, 204)
      const gone = await app.inject({ url: `/admin/integrations/${String(i.id)}`, headers: auth })
      t.equal(gone.statusCode, 404)
      t.equal(gone.json().code, 'VULNSCAN_NOT_FOUND')
    })
  }
})

test('integrations: bad bodies and refused URLs are a 400 {error, code}; admin only', async (t) => {
  const { app } = await build(t, 'memory')
  const post = (payload: Json, headers: Record<string, string> = auth) => app.inject({ method: 'POST', url: '/admin/integrations', headers, payload })
  const ok = { name: 'x', kind: 'gitlab', url: 'https://gitlab.example.com', project: 'group/project', token: 't' }
  const bad: [Json, string][] = [
    [{ ...ok, url: 'http://127.0.0.1:8080' }, 'VULNSCAN_INTEGRATION_INVALID'],
    [{ ...ok, url: 'ftp://gitlab.example.com' }, 'VULNSCAN_INTEGRATION_INVALID'],
    [{ ...ok, kind: 'github', project: 'no-slash' }, 'VULNSCAN_INTEGRATION_INVALID'],
    [{ ...ok, kind: 'jira-dc', project: 'lower' }, 'VULNSCAN_INTEGRATION_INVALID'],
    [{ ...ok, kind: 'jira-cloud', project: 'SEC' }, 'VULNSCAN_INTEGRATION_INVALID'],
    [{ ...ok, kind: 'trello' }, 'FST_ERR_VALIDATION'],
    [{ ...ok, grouping: 'team' }, 'FST_ERR_VALIDATION'],
    [{ ...ok, token: '' }, 'FST_ERR_VALIDATION'],
    [{ ...ok, extra: 1 }, 'FST_ERR_VALIDATION']
  ]
  for (const [payload, code] of bad) {
    const r = await post(payload)
    t.equal(r.statusCode, 400, JSON.stringify(payload))
    t.ok(typeof r.json().error === 'string')
    if (code !== 'FST_ERR_VALIDATION') t.equal(r.json().code, code)
    else t.match(r.json().code, /^VULNSCAN_|^FST_/)
  }
  const operator = await app.inject({ method: 'POST', url: '/admin/keys', headers: auth, payload: { label: 'op', role: 'operator' } })
  const r = await post(ok, { 'x-api-key': operator.json().key })
  t.equal(r.statusCode, 403)
})

test('integrations: a rate-limited tracker is waited for (Retry-After), and every try is in the deliveries', async (t) => {
  const fake = await startFakeTracker('github', 'example/security')
  t.teardown(() => fake.close())
  const { app } = await build(t, 'memory', { WEBHOOK_ALLOW: '127.0.0.0/8', INTEGRATION_BACKOFF_MS: 10 })
  await app.backends.integrationSyncs.process(createSyncHandler(app.integrationSync.deps))
  const i = (await app.inject({ method: 'POST', url: '/admin/integrations', headers: auth, payload: { name: 'gh', kind: 'github', url: fake.url, project: 'example/security', token: fake.token } })).json() as Json
  await app.results.recordHost(write({ address: '10.78.0.1', at: Date.now(), scanId: 'rl', services: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }], findings: [finding('10.78.0.1', 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] }))
  fake.inject({ method: 'POST', path: '/issues', status: 429, headers: { 'retry-after': '1' } })
  const started = Date.now()
  t.equal((await app.inject({ method: 'POST', url: `/admin/integrations/${String(i.id)}/sync`, headers: auth })).statusCode, 202)
  const deadline = Date.now() + 15_000
  while (fake.count('create') < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25))
  t.equal(fake.count('create'), 1, 'created once, after the wait')
  t.ok(Date.now() - started >= 1000, 'Retry-After: 1 was honoured')
  // The fake counts the create when it arrives; the delivery is recorded once its answer is read: wait for that.
  const deliveries = async (): Promise<Json> => (await app.inject({ url: `/admin/integrations/${String(i.id)}/deliveries`, headers: auth })).json() as Json
  let log = await deliveries()
  while (!(log.items as Json[]).some((d) => d.ok === true) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25))
    log = await deliveries()
  }
  t.match(log.items.slice(-2), [{ action: 'create', method: 'POST', attempt: 1, statusCode: 429, ok: false, willRetry: true }, { action: 'create', attempt: 2, statusCode: 201, ok: true }].reverse())
  t.notOk(JSON.stringify(log).includes(fake.token), 'no token in the deliveries')
  t.same(fake.refused, [])
})

test('integrations: a CREDENTIALS_KEY rotation seals tracker tokens again (Redis, two processes)', async (t) => {
  if (!(await backends()).includes('redis')) return
  const first = await build(t, 'redis')
  const i = (await first.app.inject({ method: 'POST', url: '/admin/integrations', headers: auth, payload: { name: 'gl', kind: 'gitlab', url: 'https://gitlab.example.com', project: '42', token: 'glpat-rotate-me' } })).json() as Json
  const newKey = 'a1b2c3d4'.repeat(8)
  const second = await build(t, 'redis', { REDIS_PREFIX: first.config.REDIS_PREFIX, QUEUE_PREFIX: first.config.QUEUE_PREFIX, DATABASE_SCHEMA: first.config.DATABASE_SCHEMA, CREDENTIALS_KEY: newKey, CREDENTIALS_KEY_PREVIOUS: first.config.CREDENTIALS_KEY ?? '' })
  const r = await second.app.inject({ method: 'POST', url: '/admin/credentials/rotate', headers: auth })
  t.same(r.json(), { resealed: 1, current: 0 }, 'the token counted with the credentials')
  const stored = await second.app.backends.integrations.get(i.id as string)
  t.ok(second.app.secretBox.isCurrent(stored?.sealedToken ?? ''), 'sealed under the new key')
  t.equal(second.app.secretBox.open(stored?.sealedToken ?? '', `integration:${String(i.id)}`), 'glpat-rotate-me')
  t.same((await second.app.inject({ method: 'POST', url: '/admin/credentials/rotate', headers: auth })).json(), { resealed: 0, current: 1 }, 'safe to repeat')
})
