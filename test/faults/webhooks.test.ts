// Webhook events through failures (issue 29, item 6): a receiver down past every attempt, a process that dies
// between ending a scan and queueing its event, and a host write that committed before its process died. Every event
// of a completed scan is delivered or kept for redelivery, with the same delivery id.
import { test } from 'tap'
import type { DeliveryJobData, DeliveryQueue } from '../../lib/queue/types'
import { createNotifier } from '../../lib/webhooks/events'
import { newScanRecord } from '../../lib/scans'
import { backends, build, openBackendsIn, SERVICE_KEY } from '../helper'
import { finding, write } from '../support/results'
import { startReceiver } from '../support/webhook-receiver'
import { loopbackAddress } from '../support/loopback'
import { until } from '../support/fault-deployment'

const auth = { 'x-api-key': SERVICE_KEY }
type Json = Record<string, any>
const webhookEnv = { WORKER_ENABLED: true, WEBHOOK_ALLOW: '127.0.0.0/8', WEBHOOK_ATTEMPTS: 2, WEBHOOK_BACKOFF_MS: 100 }

test('a receiver down past every attempt: the event is kept, listed, and delivered again with the same delivery id', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis or PostgreSQL answers (required under CI=true)')
  const receiver = await startReceiver([503, 503, 204])
  t.teardown(() => receiver.close())
  const { app } = await build(t, 'redis', webhookEnv)
  const created = await app.inject({ method: 'POST', url: '/admin/webhook', headers: auth, payload: { url: receiver.url, events: ['scan.completed'] } })
  t.equal(created.statusCode, 201, created.body)
  const hook = created.json().id as string
  t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'down', targets: [{ value: loopbackAddress(), type: 'single_ip' }], options: { template: 'discovery', ports: '9' } } })).statusCode, 200)

  const tried = await receiver.waitFor(2, 60_000)
  const failed = await until('the delivery kept as failed', async () => {
    const r = await app.inject({ url: `/admin/webhook/${hook}/deliveries?failed=true`, headers: auth })
    return r.statusCode === 200 && r.json().total === 1 ? r.json() as Json : undefined
  }, 30_000)
  const delivery = failed.items[0].eventId as string
  t.equal(failed.items[0].event, 'scan.completed')
  t.equal(tried[0].headers['x-vulnscan-delivery'], delivery, 'the kept delivery is the one the receiver refused')

  const retried = await app.inject({ method: 'POST', url: `/admin/webhook/${hook}/deliveries/${delivery}/retry`, headers: auth })
  t.equal(retried.statusCode, 200, retried.body)
  t.match(retried.json(), { status: 'queued', delivery, event: 'scan.completed' })
  const all = await receiver.waitFor(3, 30_000)
  t.equal(all[2].headers['x-vulnscan-delivery'], delivery, 'delivered again with the same delivery id')
  t.equal(all[2].body, all[0].body, 'and the same body')
  await until('the failed list is empty once delivered', async () => (await app.inject({ url: `/admin/webhook/${hook}/deliveries?failed=true`, headers: auth })).json().total === 0, 30_000)
  t.equal((await app.inject({ method: 'POST', url: `/admin/webhook/${hook}/deliveries/${delivery}/retry`, headers: auth })).statusCode, 404, 'nothing left to retry')
})

test('a process that dies between ending a scan and queueing its event: the outbox relay delivers it', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis or PostgreSQL answers (required under CI=true)')
  const receiver = await startReceiver([204])
  t.teardown(() => receiver.close())
  const { app } = await build(t, 'redis', webhookEnv)
  const created = await app.inject({ method: 'POST', url: '/admin/webhook', headers: auth, payload: { url: receiver.url, events: ['scan.completed'] } })
  t.equal(created.statusCode, 201)
  // The worker's last step, and nothing after it: the scan is completed in the store, no event was queued.
  const record = newScanRecord({ id: 'ended', targets: [{ value: loopbackAddress(), type: 'single_ip' }], options: { template: 'discovery', ports: '9' } }, 'service')
  await app.store.createScan(record)
  const r = await app.store.updateScan('ended', { status: 'completed', finishedAt: new Date().toISOString() })
  t.equal(r?.applied, true)
  const [got] = await receiver.waitFor(1, 60_000)
  t.match(JSON.parse(got.body), { event: 'scan.completed', scan: { id: 'ended', status: 'completed' } }, 'the relay queued it, and it arrived')
})

class Captured implements DeliveryQueue {
  readonly kind = 'memory' as const
  readonly jobs = new Map<string, DeliveryJobData>()
  async add (id: string, job: DeliveryJobData): Promise<void> { if (!this.jobs.has(id)) this.jobs.set(id, job) }
  async process (): Promise<void> {}
  async close (): Promise<void> {}
}

test('a host write that committed before its process died still reports its finding.new', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { store, results } = await openBackendsIn(t, backend)
      const q = new Captured()
      const notifier = createNotifier({ store, results, deliveries: q, log: { warn: () => {} } })
      const at = new Date().toISOString()
      await store.createWebhook({ id: 'all', url: 'http://127.0.0.2/x', events: ['finding.new'], filter: {}, format: 'json', enabled: true, description: '', secret: 's', createdAt: at, updatedAt: at, createdBy: 'service' })
      const host = '127.0.0.2'
      const w = write({ address: host, at, scanId: 's1', services: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }], findings: [finding(host, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1', 'medium')] })
      // What the worker does before the write, then the write; it dies before telling anyone.
      await notifier.recordFindings({ id: 's1' }, [{ address: host, at, candidates: w.findings }])
      t.equal((await results.recordHost(w)).newFindings, 1)
      t.equal(q.jobs.size, 0, 'nothing queued yet')
      // Its retry writes the same host again, later: nothing is new for that write.
      t.equal((await results.recordHost({ ...w, at: new Date(Date.now() + 1000).toISOString() })).newFindings, 0)
      t.equal(await notifier.relay(0), 1, 'the relay took the kept entry')
      const bodies = [...q.jobs.values()].map((j) => JSON.parse(j.body) as Json)
      t.match(bodies, [{ event: 'finding.new', host, findings: [{ cveId: 'CVE-2024-6387' }] }], 'and queued the finding.new')
      t.equal(await notifier.relay(0), 0, 'once')
    })
  }
})
