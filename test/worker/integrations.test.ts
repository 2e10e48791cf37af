// Issue-tracker sync end to end, on both backends and against each fake tracker: a scan opens tickets, a re-scan
// updates the re-seen ones, closes the fixed one and opens the new one, a decision closes its ticket, and a later scan
// that sees a fixed finding again reopens its ticket. In the re-scan the tracker loses the answer to a create (it made
// the issue) and the service restarts (Redis: a new app on the same Redis and PostgreSQL; memory: the queue's retry,
// since the embedded default keeps nothing across a restart): the ticket is found by its key, never made twice.
import { test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { backends, build, SERVICE_KEY, type Backend } from '../helper'
import { finding, write } from '../support/results'
import { startFakeTracker, type FakeKind, type FakeTracker } from '../support/fake-trackers'
import { createSyncHandler } from '../../lib/integrations/jobs'
import type { ScanRecord } from '../../lib/store/types'

const auth = { 'x-api-key': SERVICE_KEY }
const A = '10.77.0.1'
const B = '10.77.0.2'
const T0 = Date.parse('2026-05-01T00:00:00.000Z')
const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const HTTPD = { port: 80, service: 'http', product: 'Apache', version: '2.4.49' }
const NGINX = { port: 80, service: 'http', product: 'nginx', version: '1.20.0' }
const PROJECT: Record<FakeKind, string> = { github: 'example/security', gitlab: 'sec/vulns', 'jira-cloud': 'SEC', 'jira-dc': 'SEC' }
/** A decision comment (it goes into the ticket text) trying every kind of markup the trackers read. */
const INJECTION = 'behind the VPN [click](https://evil.example) <img src=x> @admin #1 {color:red}x{color} !pic.png!'
const CREATE_PATH: Record<FakeKind, string> = { github: '/issues', gitlab: '/issues', 'jira-cloud': '/rest/api/3/issue', 'jira-dc': '/rest/api/2/issue' }

async function until (what: string, ok: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

async function scanEnds (app: FastifyInstance, id: string): Promise<void> {
  await app.notifier.scanEnded({ id, status: 'completed', targets: [], template: 'quick', priority: 3, requestHash: id, createdAt: new Date().toISOString(), finishedAt: new Date().toISOString(), progress: { percent: 100 }, createdBy: 'service' } as unknown as ScanRecord)
}

/** The app with the integrations queue running, as the worker set runs it. */
async function start (t: Parameters<typeof build>[0], backend: Backend, same?: Record<string, string>): Promise<{ app: FastifyInstance, prefixes: Record<string, string> }> {
  const { app, config } = await build(t, backend, { WEBHOOK_ALLOW: '127.0.0.0/8', WEBHOOK_BACKOFF_MS: 100, WEBHOOK_ATTEMPTS: 10, INTEGRATION_BACKOFF_MS: 10, ...same })
  await app.backends.integrationSyncs.process(createSyncHandler(app.integrationSync.deps))
  return { app, prefixes: { REDIS_PREFIX: config.REDIS_PREFIX, QUEUE_PREFIX: config.QUEUE_PREFIX, DATABASE_SCHEMA: config.DATABASE_SCHEMA } }
}

test('scan, re-scan (one fixed, one new, a lost answer and a restart), decision, reopening: exactly the expected tickets', async (t) => {
  for (const backend of await backends()) {
    for (const kind of ['github', 'gitlab', 'jira-cloud', 'jira-dc'] as FakeKind[]) {
      t.test(`${backend} ${kind}`, async (t) => {
        const fake: FakeTracker = await startFakeTracker(kind, PROJECT[kind], { username: 'sec@example.com' })
        t.teardown(() => fake.close())
        let { app, prefixes } = await start(t, backend)
        const created = await app.inject({
          method: 'POST', url: '/admin/integrations', headers: auth,
          payload: { name: kind, kind, url: fake.url, project: PROJECT[kind], token: fake.token, ...(kind === 'jira-cloud' ? { username: 'sec@example.com' } : {}), grouping: 'finding' }
        })
        t.equal(created.statusCode, 201, created.body)
        const id = created.json().id as string

        // Scan 1: three findings, three tickets.
        await app.results.recordHosts([
          write({ address: A, at: T0, scanId: 's1', services: [SSH, HTTPD], findings: [finding(A, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1'), finding(A, 80, 'CVE-2021-41773', 'Apache', '2.4.49')] }),
          write({ address: B, at: T0, scanId: 's1', services: [SSH], findings: [finding(B, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] })
        ])
        await scanEnds(app, 's1')
        await until('three tickets', () => fake.count('create') === 3)
        await until('scan 1 settled', async () => (await app.backends.integrations.listTickets(id)).filter((x) => x.ref !== null).length === 3)
        t.same([fake.count('update'), fake.count('close'), fake.count('reopen'), fake.count('comment')], [0, 0, 0, 0])

        // Scan 2: A re-seen (two updates), B's SSH finding fixed (closed with a comment), nginx on B new; the tracker
        // makes that issue but its answer is lost, and the service restarts.
        fake.inject({ method: 'POST', path: CREATE_PATH[kind], drop: true })
        await app.results.recordHosts([
          write({ address: A, at: T0 + 60_000, scanId: 's2', services: [SSH, HTTPD], findings: [finding(A, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1'), finding(A, 80, 'CVE-2021-41773', 'Apache', '2.4.49')] }),
          write({ address: B, at: T0 + 60_000, scanId: 's2', services: [{ ...SSH, version: '9.8p1' }, NGINX], findings: [finding(B, 80, 'CVE-2021-23017', 'nginx', '1.20.0')] })
        ])
        await scanEnds(app, 's2')
        await until('the lost create reached the tracker', () => fake.count('create') === 4)
        if (backend === 'redis') {
          await app.close()
          ;({ app } = await start(t, backend, prefixes))
        }
        await until('scan 2 settled', async () => (await app.backends.integrations.listTickets(id)).filter((x) => x.ref !== null).length === 4 && fake.count('close') === 1)
        await until('the updates', () => fake.count('update') >= 3)
        t.equal(fake.issues.length, 4, 'four issues: the lost answer made no second one')
        t.equal(fake.count('create'), 4)
        t.equal(fake.count('close'), 1, 'the fixed finding\'s ticket closed')
        t.equal(fake.count('comment'), 1, 'with a comment saying why')
        t.equal(fake.count('update'), 3, 'two re-seen tickets updated, and the fixed one\'s text before it closed')
        const failed = (await app.inject({ url: `/admin/integrations/${id}/deliveries?failed=true`, headers: auth })).json()
        t.ok(failed.total >= 1, 'the lost answer is in the deliveries')
        t.match(failed.items.at(-1), { action: 'create', method: 'POST', ok: false })

        // A decision: the Apache finding accepted; its ticket is closed as not planned, with a comment.
        const apache = (await app.results.listFindings({ limit: 10, offset: 0, host: A, cveId: 'CVE-2021-41773' })).items[0]
        const decided = await app.inject({ method: 'PATCH', url: `/vulnerability/finding/${apache.id}`, headers: auth, payload: { status: 'accepted', comment: INJECTION } })
        t.equal(decided.statusCode, 200)
        await until('the decision mirrored', () => fake.count('close') === 2)
        await until('its comment', () => fake.count('comment') === 2)

        // Scan 3: B's SSH finding seen again: its ticket reopens.
        await app.results.recordHosts([
          write({ address: B, at: T0 + 120_000, scanId: 's3', services: [SSH], findings: [finding(B, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] })
        ])
        await scanEnds(app, 's3')
        await until('the reopening', () => fake.count('reopen') === 1)
        await until('scan 3 settled', async () => (await app.backends.integrations.listTickets(id)).every((x) => x.state === (fake.issues.find((i) => i.ref === x.ref)?.open === true ? 'open' : 'closed')))
        // On demand, nothing left to change: no request but reads.
        const before = fake.ops.length
        t.equal((await app.inject({ method: 'POST', url: `/admin/integrations/${id}/sync`, headers: auth })).statusCode, 202)
        await new Promise((resolve) => setTimeout(resolve, 300))
        t.equal(fake.ops.length, before, 'a sync with nothing new changes nothing')

        t.same([fake.count('create'), fake.count('close'), fake.count('reopen')], [4, 2, 1], 'creations, closures, reopenings')
        t.equal(fake.issues.length, 4, 'never a duplicate')
        t.equal(new Set(fake.issues.map((i) => i.labels.find((l) => l.startsWith('vulnscan-')))).size, 4, 'each ticket its own stable key')
        t.same(fake.refused, [], 'every request had the documented shape')
        const byRef = new Map(fake.issues.map((i) => [i.ref, i]))
        const tickets = await app.backends.integrations.listTickets(id)
        t.equal(tickets.length, 4)
        for (const tk of tickets) {
          const open = tk.group !== apache.id
          t.equal(byRef.get(tk.ref ?? '')?.open, open, `${tk.group}: ${open ? 'open (seen, new or reopened)' : 'closed by the decision'}`)
          t.equal(tk.state, open ? 'open' : 'closed', 'as vulnscan last set it')
        }
        // The decision's comment is in the accepted finding's ticket text, as text only.
        const body = byRef.get(tickets.find((tk) => tk.group === apache.id)?.ref ?? '')?.body
        const raw = typeof body === 'string' ? body : JSON.stringify(body)
        t.ok(raw.includes('evil'), 'the comment is there')
        if (kind === 'github' || kind === 'gitlab') {
          t.notMatch(raw, /(?<!\\)\[click(?<!\\)\]\(/, 'no Markdown link')
          t.notOk(raw.includes('<img'), 'no HTML')
          t.notMatch(raw, /(?<!\\)@admin/, 'no mention')
          t.notMatch(raw, /(?<!\\)#1/, 'no issue reference')
        } else if (kind === 'jira-dc') {
          t.notMatch(raw, /(?<!\\)\[click/, 'no wiki link')
          t.notMatch(raw, /(?<!\\)\{color/, 'no wiki macro')
          t.notMatch(raw, /(?<!\\)!pic/, 'no wiki image')
        } else {
          t.notOk(raw.includes('"marks"') || raw.includes('"link"') || raw.includes('"mention"'), 'ADF text nodes only')
        }
      })
    }
  }
})
