// /admin/webhook on both backends: the secret shown once, URLs checked against the deny list, admin only, the
// delivery log and the test delivery.
import { test } from 'tap'
import { createHmac } from 'node:crypto'
import { backends, build, SERVICE_KEY } from '../../helper'
import { startReceiver } from '../../support/webhook-receiver'

const auth = { 'x-api-key': SERVICE_KEY }
type Json = Record<string, any>

test('webhooks: create, read, change, test delivery, deliveries, delete', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const rx = await startReceiver([204])
      t.teardown(() => rx.close())
      const { app } = await build(t, backend, { WEBHOOK_ALLOW: '127.0.0.0/8' })

      const created = await app.inject({ method: 'POST', url: '/admin/webhook', headers: auth, payload: { url: rx.url, events: ['scan.completed', 'finding.new'], filter: { minSeverity: 'high', kevOnly: true }, description: 'ops' } })
      t.equal(created.statusCode, 201)
      const w = created.json() as Json
      t.match(w, { url: rx.url, events: ['scan.completed', 'finding.new'], filter: { minSeverity: 'high', kevOnly: true }, format: 'json', enabled: true, description: 'ops' })
      t.match(w.secret, /^whsec_[A-Za-z0-9_-]{43}$/, 'a secret, once')
      const read = (await app.inject({ url: `/admin/webhook/${String(w.id)}`, headers: auth })).json() as Json
      t.notOk('secret' in read || 'createdBy' in read, 'never again')
      t.notOk(JSON.stringify((await app.inject({ url: '/admin/webhook', headers: auth })).json()).includes(w.secret), 'nor in the list')

      const test1 = await app.inject({ method: 'POST', url: `/admin/webhook/${String(w.id)}/test`, headers: auth })
      t.equal(test1.statusCode, 200)
      t.match(test1.json(), { event: 'webhook.test', attempt: 1, statusCode: 204, error: null, ok: true, willRetry: false })
      const [got] = await rx.waitFor(1)
      t.equal(got.headers['x-vulnscan-signature-256'], `sha256=${createHmac('sha256', w.secret as string).update(got.body).digest('hex')}`, 'signed with the secret shown at creation')
      t.match(JSON.parse(got.body), { event: 'webhook.test', id: test1.json().eventId })

      const slack = await app.inject({ method: 'PATCH', url: `/admin/webhook/${String(w.id)}`, headers: auth, payload: { format: 'slack', enabled: true } })
      t.match(slack.json(), { format: 'slack', filter: { minSeverity: 'high' } })
      await app.inject({ method: 'POST', url: `/admin/webhook/${String(w.id)}/test`, headers: auth })
      t.match(JSON.parse((await rx.waitFor(2))[1].body), { text: /^vulnscan: test delivery/ }, 'a Slack-compatible message')
      t.equal(Object.keys(JSON.parse(rx.received[1].body)).join(), 'text')

      const log = (await app.inject({ url: `/admin/webhook/${String(w.id)}/deliveries`, headers: auth })).json() as Json
      t.equal(log.total, 2)
      t.match(log.items[0], { event: 'webhook.test', statusCode: 204, ok: true })
      t.ok(typeof log.items[0].durationMs === 'number' && log.items[0].durationMs >= 0)

      t.equal((await app.inject({ method: 'DELETE', url: `/admin/webhook/${String(w.id)}`, headers: auth })).statusCode, 204)
      for (const req of [{ url: `/admin/webhook/${String(w.id)}` }, { url: `/admin/webhook/${String(w.id)}/deliveries` }, { method: 'POST' as const, url: `/admin/webhook/${String(w.id)}/test` }, { method: 'DELETE' as const, url: `/admin/webhook/${String(w.id)}` }]) {
        const r = await app.inject({ ...req, headers: auth })
        t.equal(r.statusCode, 404, `${req.url} after delete`)
        t.equal(r.json().code, 'VULNSCAN_NOT_FOUND')
      }
    })
  }
})

test('webhooks: denied addresses, bad bodies, roles', async (t) => {
  const rx = await startReceiver([204])
  t.teardown(() => rx.close())
  const { app } = await build(t, 'memory')
  const post = (payload: Json, headers: Record<string, string> = auth) => app.inject({ method: 'POST', url: '/admin/webhook', headers, payload })
  const refused: [string, RegExp][] = [
    [rx.url, /is a loopback address; webhooks go only to public addresses unless WEBHOOK_ALLOW names it/],
    ['http://10.1.2.3/x', /private/],
    ['http://169.254.169.254/latest/meta-data', /link-local/],
    ['http://100.64.1.1/x', /carrier-grade NAT/],
    ['http://[fd12::1]/x', /unique local/],
    ['http://localhost:9000/x', /names this machine/],
    ['gopher://93.184.216.34/x', /http or https/]
  ]
  for (const [url, error] of refused) {
    const r = await post({ url, events: ['scan.failed'] })
    t.equal(r.statusCode, 400, url)
    t.match(r.json(), { error, code: 'VULNSCAN_WEBHOOK_URL_REFUSED' })
  }
  t.match((await post({ url: 'https://hooks.example.com/x', events: [] })).json(), { error: /events must have at least 1 item/, code: 'VULNSCAN_VALIDATION' })
  t.match((await post({ url: 'https://hooks.example.com/x', events: ['scan.started'] })).json(), { error: /events\[0\] must be one of: scan\.completed, scan\.failed, scan\.cancelled, finding\.new/ })
  t.match((await post({ url: 'https://hooks.example.com/x', events: ['finding.new'], filter: { minSeverity: 'urgent' } })).json(), { error: /filter\.minSeverity must be one of/ })
  t.equal((await post({ url: 'https://hooks.example.com/x', events: ['finding.new', 'finding.new'] })).statusCode, 400, 'an event named twice')
  const ok = (await post({ url: 'https://hooks.example.com/x', events: ['finding.new'] })).json() as Json
  t.match((await app.inject({ method: 'PATCH', url: `/admin/webhook/${String(ok.id)}`, headers: auth, payload: { url: 'http://192.168.0.10/' } })).json(), { code: 'VULNSCAN_WEBHOOK_URL_REFUSED' })

  const operator = (await app.inject({ method: 'POST', url: '/admin/keys', headers: auth, payload: { label: 'op', role: 'operator' } })).json().key as string
  t.equal((await post({ url: 'https://hooks.example.com/x', events: ['scan.failed'] }, { 'x-api-key': operator })).statusCode, 403, 'admin only')
  t.equal((await app.inject({ url: '/admin/webhook', headers: { 'x-api-key': operator } })).statusCode, 403, 'reading too: the URLs may hold tokens')
  const audit = (await app.inject({ url: '/admin/audit?limit=100', headers: auth })).json() as Json
  t.ok(audit.items.some((e: Json) => e.route === '/admin/webhook' && e.status === 201 && e.targetId === ok.id), 'creation is in the audit log')
})
