// `vulnscan webhook …` against the real app on both backends: a webhook created by the CLI gets a signed test delivery
// at a receiver of the test's own (on a random loopback address that WEBHOOK_ALLOW names), the filter flags are laid
// over the current filter, refused addresses and failing receivers exit non-zero. Usage errors: schedule-webhook-usage.test.ts.
import { test } from 'tap'
import { createHmac } from 'node:crypto'
import { backends, build, SERVICE_KEY } from '../helper'
import { cli, listen } from '../support/cli'
import { loopbackAddress } from '../support/loopback'
import { startReceiver } from '../support/webhook-receiver'

const auth = { 'x-api-key': SERVICE_KEY }
type Json = Record<string, any>

for (const backend of ['memory', 'redis'] as const) {
  test(`webhooks through the CLI (${backend})`, async (t) => {
    if (!(await backends()).includes(backend)) {
      t.comment('Redis or PostgreSQL does not answer: skipped')
      return
    }
    const rx = await startReceiver([204])
    const failing = await startReceiver([500])
    t.teardown(async () => { await Promise.all([rx.close(), failing.close()]) })
    // The receivers' loopback addresses alone are allowed; every other private address stays refused.
    const { app } = await build(t, backend, { WEBHOOK_ALLOW: `${rx.host}/32,${failing.host}/32` })
    const { url } = await listen(app)
    const env = { VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY }
    const get = async (id: string): Promise<Json> => (await app.inject({ url: `/admin/webhook/${id}`, headers: auth })).json()

    const created = await cli(['webhook', 'create', rx.url, '--event', 'scan.completed', '-e', 'finding.new,scan.failed', '--min-severity', 'high', '--min-confidence', 'medium', '--description', 'ops channel'], env)
    t.equal(created.code, 0, created.stderr)
    const m = /^Created webhook ([0-9a-f-]{36}) → (\S+): scan\.completed, finding\.new, scan\.failed \(finding\.new: high or worse, medium confidence or more\), json, enabled; ops channel\.\nIts signing secret is shown only now: store it, it cannot be read again\.\n\n {2}(whsec_\S+)\n/.exec(created.stdout)
    t.ok(m, created.stdout)
    if (m === null) return
    const [, id, shownUrl, secret] = m
    t.equal(shownUrl, rx.url)
    t.match(await get(id), { url: rx.url, events: ['scan.completed', 'finding.new', 'scan.failed'], filter: { minSeverity: 'high', minConfidence: 'medium' }, format: 'json', enabled: true, description: 'ops channel' }, 'the API holds it')

    t.test('a signed test delivery reaches the receiver; the log shows it', async (t) => {
      const sent = await cli(['webhook', 'test', id], env)
      t.equal(sent.code, 0, sent.stderr)
      t.match(sent.stdout, new RegExp(`^Test delivery to webhook ${id} answered 204 in \\d+ ms \\(event [0-9a-f]+\\)\\.\\n$`))
      const [got] = await rx.waitFor(1)
      t.equal(got.headers['x-vulnscan-signature-256'], `sha256=${createHmac('sha256', secret).update(got.body).digest('hex')}`, 'signed with the secret the CLI printed')
      t.match(JSON.parse(got.body), { event: 'webhook.test' })

      // Four reads at once: each CLI run is a process of its own that spends most of its time starting.
      const [log, logJsonRun, show, list] = await Promise.all([['webhook', 'deliveries', id], ['webhook', 'deliveries', id, '--json'], ['webhook', 'show', id], ['webhook', 'list']].map((args) => cli(args, env)))
      t.equal(log.code, 0, log.stderr)
      t.match(log.stdout, /webhook\.test .* 1 .* 204 .* ok /)
      t.match(log.stdout, /\n1 of 1 delivery attempts\n$/)
      const logJson = JSON.parse(logJsonRun.stdout) as Json
      t.match(logJson, { total: 1, items: [{ event: 'webhook.test', statusCode: 204, ok: true, attempt: 1, willRetry: false }] })

      t.equal(show.code, 0, show.stderr)
      t.match(show.stdout, new RegExp(`^Webhook ${id} → ${rx.url.replace(/\./g, '\\.')}: `))
      t.match(show.stdout, /webhook\.test .* 204 .* ok /)
      t.notMatch(show.stdout, secret, 'never the secret again')
      t.match(list.stdout, new RegExp(`${id} .*${rx.host.replace(/\./g, '\\.')}`))
      t.match(list.stdout, /\n1 of 1 webhooks\n$/)
      t.notMatch(list.stdout, secret)
    })

    t.test('update lays the filter flags over the current filter', async (t) => {
      const kev = await cli(['webhook', 'update', id, '--kev-only'], env)
      t.equal(kev.code, 0, kev.stderr)
      t.same((await get(id)).filter, { minSeverity: 'high', minConfidence: 'medium', kevOnly: true }, 'the other filter fields kept')
      const slack = await cli(['webhook', 'update', id, '--no-kev-only', '--min-severity', 'critical', '--format', 'slack', '--json'], env)
      t.equal(slack.code, 0, slack.stderr)
      t.match(JSON.parse(slack.stdout), { format: 'slack', filter: { minSeverity: 'critical', minConfidence: 'medium' } })
      t.same((await get(id)).filter, { minSeverity: 'critical', minConfidence: 'medium' })
      const cleared = await cli(['webhook', 'update', id, '--clear-filter', '--event', 'scan.failed', '--disable'], env)
      t.equal(cleared.code, 0, cleared.stderr)
      t.match(cleared.stdout, /: scan\.failed, slack, disabled; ops channel\.\n$/)
      t.match(await get(id), { filter: {}, events: ['scan.failed'], enabled: false })
      t.same((await get(id)).filter, {})
      const on = await cli(['webhook', 'update', id, '--enable'], env)
      t.equal(on.code, 0)
      t.equal((await get(id)).enabled, true)
      const refused = await cli(['webhook', 'update', id, '--webhook-url', 'http://10.1.2.3/hook'], env)
      t.equal(refused.code, 2)
      t.match(refused.stderr, /Rejected: .*private/)
      t.equal((await get(id)).url, rx.url, 'the URL stays')
    })

    t.test('a failing receiver, a refused address, a key that is not admin', async (t) => {
      const created = await cli(['webhook', 'create', failing.url, '--event', 'scan.failed', '--json'], env)
      t.equal(created.code, 0, created.stderr)
      t.match(created.stderr, /shown only once/, 'the warning goes to stderr beside the JSON')
      const w = JSON.parse(created.stdout) as Json
      t.match(w.secret, /^whsec_/)
      const sent = await cli(['webhook', 'test', w.id], env)
      t.equal(sent.code, 3, 'a failed test delivery exits 3')
      t.match(sent.stderr, new RegExp(`Test delivery to webhook ${String(w.id)} failed after \\d+ ms: .*500`))
      await failing.waitFor(1)
      t.match(JSON.parse((await cli(['webhook', 'deliveries', w.id, '--json'], env)).stdout), { items: [{ statusCode: 500, ok: false }] })

      const [refused, loopback] = await Promise.all([cli(['webhook', 'create', 'http://10.1.2.3/hook', '--event', 'scan.failed'], env), cli(['webhook', 'create', `http://${loopbackAddress()}:9/hook`, '--event', 'scan.failed'], env)])
      t.equal(refused.code, 2)
      t.match(refused.stderr, /Rejected: .*10\.1\.2\.3.*private/)
      t.equal(loopback.code, 2, 'a loopback address WEBHOOK_ALLOW does not name')
      t.match(loopback.stderr, /loopback address/)

      const key = (await app.inject({ method: 'POST', url: '/admin/keys', headers: auth, payload: { label: 'ops', role: 'operator' } })).json() as Json
      const denied = await cli(['webhook', 'list'], { ...env, VULNSCAN_API_KEY: key.key })
      t.equal(denied.code, 3)
      t.match(denied.stderr, /answered 403/)

      const deleted = await cli(['webhook', 'delete', w.id], env)
      t.equal(deleted.code, 0, deleted.stderr)
      t.equal(deleted.stdout, `Deleted webhook ${String(w.id)} and its delivery log.\n`)
      t.equal((await app.inject({ url: `/admin/webhook/${String(w.id)}`, headers: auth })).statusCode, 404)
      const gone = await cli(['webhook', 'test', w.id], env)
      t.equal(gone.code, 3)
      t.match(gone.stderr, /answered 404/)
    })
  })
}
