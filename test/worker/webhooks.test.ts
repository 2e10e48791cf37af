// Webhooks end to end, on both backends: a scan that completes is posted to a local receiver with a valid signature,
// retried after a 500 with the same body; a cancelled scan is told too; on Redis the worker process delivers.
import { test } from 'tap'
import { createHmac } from 'node:crypto'
import { backends, build, SERVICE_KEY } from '../helper'
import { spawnWorker } from '../support/worker-process'
import { freePort, loopbackAddress } from '../support/loopback'
import { startReceiver } from '../support/webhook-receiver'
import { startFakeNvd } from '../support/fake-nvd'
import { createServer } from 'node:net'

const auth = { 'x-api-key': SERVICE_KEY }
type Json = Record<string, any>
const BACKOFF_MS = 300

test('scan events reach a webhook, signed, retried after a 500', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const rx = await startReceiver([500, 204])
      t.teardown(() => rx.close())
      const settings = { WEBHOOK_ALLOW: '127.0.0.0/8', WEBHOOK_BACKOFF_MS: BACKOFF_MS, WEBHOOK_ATTEMPTS: 3 }
      // On Redis the API only queues; a separate worker process scans and delivers.
      const { app, config } = await build(t, backend, { ...settings, WORKER_ENABLED: backend === 'memory' })
      if (backend === 'redis') {
        const worker = spawnWorker({
          REDIS_URL: config.REDIS_URL, DATABASE_URL: config.DATABASE_URL, DATABASE_SCHEMA: config.DATABASE_SCHEMA, REDIS_PREFIX: config.REDIS_PREFIX, QUEUE_PREFIX: config.QUEUE_PREFIX, NVD_INDEX_FILE: '', SOURCES_FILE: '',
          WEBHOOK_ALLOW: settings.WEBHOOK_ALLOW, WEBHOOK_BACKOFF_MS: String(BACKOFF_MS), WEBHOOK_ATTEMPTS: '3'
        })
        t.teardown(() => worker.kill())
        await worker.ready()
      }
      const w = (await app.inject({ method: 'POST', url: '/admin/webhook', headers: auth, payload: { url: rx.url, events: ['scan.completed', 'scan.cancelled'] } })).json() as Json
      const target = loopbackAddress()
      const scanId = `hooked-${backend}`
      await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: scanId, targets: [{ value: target, type: 'single_ip' }], options: { template: 'discovery', ports: String(await freePort(target)) } } })

      const [first, second] = await rx.waitFor(2)
      for (const r of [first, second]) {
        t.equal(r.headers['x-vulnscan-signature-256'], `sha256=${createHmac('sha256', w.secret as string).update(r.body).digest('hex')}`, 'valid signature')
        t.equal(r.headers['x-vulnscan-event'], 'scan.completed')
      }
      t.equal(second.body, first.body, 'the retry sends the same bytes')
      t.ok(second.at - first.at >= BACKOFF_MS * 0.9, `retried after the backoff (${second.at - first.at} ms)`)
      const event = JSON.parse(first.body) as Json
      t.match(event, { event: 'scan.completed', id: first.headers['x-vulnscan-delivery'], scan: { id: scanId, status: 'completed', summary: { hostsUp: 1, openPorts: 0 } } })
      t.notOk('requestHash' in event.scan || 'createdBy' in event.scan, 'nothing internal in the event')

      const deadline = Date.now() + 5000
      let log: Json
      do {
        log = (await app.inject({ url: `/admin/webhook/${String(w.id)}/deliveries`, headers: auth })).json() as Json
      } while (log.total < 2 && Date.now() < deadline && await new Promise((resolve) => setTimeout(resolve, 50)) === undefined)
      t.match(log.items, [
        { event: 'scan.completed', attempt: 2, statusCode: 204, ok: true, error: null, willRetry: false },
        { event: 'scan.completed', attempt: 1, statusCode: 500, ok: false, error: 'answered 500', willRetry: true }
      ], 'the delivery log has both attempts, newest first')

      // A cancel is told from the API process (queued there, delivered by whichever process runs deliveries).
      await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: `${scanId}-2`, targets: [{ value: loopbackAddress(), type: 'single_ip' }], options: { template: 'full' } } })
      await app.inject({ method: 'DELETE', url: `/app/scan/${scanId}-2`, headers: auth })
      const cancelled = (await rx.waitFor(3))[2]
      t.match(JSON.parse(cancelled.body), { event: 'scan.cancelled', scan: { id: `${scanId}-2`, status: 'cancelled' } })
      await new Promise((resolve) => setTimeout(resolve, BACKOFF_MS * 3))
      t.equal(rx.received.length, 3, 'each event delivered once')
    })
  }
})

test('a webhook whose address is refused at delivery is not retried and says why', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const rx = await startReceiver([204])
      t.teardown(() => rx.close())
      // Allowed when the webhook was made, denied when the event comes: the address is checked again at delivery.
      const { app } = await build(t, backend, { WEBHOOK_ALLOW: '127.0.0.0/8', WEBHOOK_DENY: rx.host, WORKER_ENABLED: true, WEBHOOK_BACKOFF_MS: 50 })
      const at = new Date().toISOString()
      await app.store.createWebhook({ id: 'wh-1', url: rx.url, events: ['scan.cancelled'], filter: {}, format: 'json', enabled: true, description: '', secret: 's', createdAt: at, updatedAt: at, createdBy: 'service' })
      await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'c1', targets: [{ value: loopbackAddress(), type: 'single_ip' }], options: { template: 'full' } } })
      await app.inject({ method: 'DELETE', url: '/app/scan/c1', headers: auth })
      let log: Json = { total: 0 }
      for (let i = 0; i < 100 && log.total === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        log = (await app.inject({ url: '/admin/webhook/wh-1/deliveries', headers: auth })).json() as Json
      }
      await new Promise((resolve) => setTimeout(resolve, 500))
      log = (await app.inject({ url: '/admin/webhook/wh-1/deliveries', headers: auth })).json() as Json
      t.equal(rx.received.length, 0, 'nothing sent')
      t.equal(log.total, 1, 'one attempt, no retry')
      t.match(log.items[0], { event: 'scan.cancelled', ok: false, statusCode: null, willRetry: false, error: new RegExp(`^refused: ${rx.host.replace(/\./g, '\\.')} is in WEBHOOK_DENY`) })
    })
  }
})

test('finding.new from a real scan: told once, for the findings the first scan found', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(() => nvd.close())
  // An SSH server that shows the OpenSSH 9.2p1 banner, on a random loopback address. It drains what clients send
  // (the SSH exposure check's identification line): unread bytes would keep its sockets, and close(), from ending.
  const host = loopbackAddress()
  const ssh = createServer((socket) => { socket.on('error', () => {}); socket.resume(); socket.end('SSH-2.0-OpenSSH_9.2p1\r\n') })
  await new Promise<void>((resolve) => ssh.listen(0, host, () => resolve()))
  t.teardown(() => new Promise<void>((resolve) => ssh.close(() => resolve())))
  const port = (ssh.address() as { port: number }).port
  const rx = await startReceiver([204])
  t.teardown(() => rx.close())
  const { app } = await build(t, 'memory', { WORKER_ENABLED: true, NVD_API_URL: nvd.baseUrl, WEBHOOK_ALLOW: '127.0.0.0/8' })
  await app.inject({ method: 'POST', url: '/admin/webhook', headers: auth, payload: { url: rx.url, events: ['finding.new'], filter: { minSeverity: 'high' } } })
  const waitEnd = async (id: string): Promise<Json> => {
    for (let i = 0; i < 600; i++) {
      const scan = (await app.inject({ url: `/app/scan/${id}`, headers: auth })).json() as Json
      if (['completed', 'failed', 'cancelled'].includes(scan.status)) return scan
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(`scan ${id} did not end`)
  }
  for (const id of ['first', 'second']) {
    await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id, targets: [{ value: host, type: 'single_ip' }], options: { template: 'standard', ports: String(port) } } })
    t.equal((await waitEnd(id)).status, 'completed')
  }
  const findings = (await app.inject({ url: `/vulnerability?host=${host}&limit=500`, headers: auth })).json() as Json
  const high = (findings.items as Json[]).filter((f) => ['high', 'critical'].includes(f.severity) && f.status === 'open').map((f) => f.cveId).sort()
  t.ok(high.length > 0, `the scan found high or critical findings (${high.length} of ${String(findings.total)})`)
  await rx.waitFor(1)
  await new Promise((resolve) => setTimeout(resolve, 500))
  t.equal(rx.received.length, 1, 'one event: the second scan found nothing new')
  const event = JSON.parse(rx.received[0].body) as Json
  t.match(event, { event: 'finding.new', host, scan: { id: 'first' } })
  t.same((event.findings as Json[]).map((f) => f.cveId).sort(), high, 'exactly the high and critical findings')
  t.ok((event.findings as Json[]).every((f) => f.port === port && f.product === 'OpenSSH'))
})
