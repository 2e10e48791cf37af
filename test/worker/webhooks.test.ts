// Webhooks end to end, on both backends: a scan that completes is posted to a local receiver with a valid signature,
// retried after a 500 with the same body; a cancelled scan is told too; on Redis the worker process delivers.
import { test } from 'tap'
import { createHmac } from 'node:crypto'
import { backends, build, SERVICE_KEY } from '../helper'
import { spawnWorker } from '../support/worker-process'
import { freePort, loopbackAddress } from '../support/loopback'
import { startReceiver } from '../support/webhook-receiver'

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
          REDIS_URL: config.REDIS_URL, REDIS_PREFIX: config.REDIS_PREFIX, QUEUE_PREFIX: config.QUEUE_PREFIX, NVD_INDEX_FILE: '', SOURCES_FILE: '',
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
  const rx = await startReceiver([204])
  t.teardown(() => rx.close())
  // Allowed when the webhook was made, denied when the event comes: the address is checked again at delivery.
  const { app } = await build(t, 'memory', { WEBHOOK_ALLOW: '127.0.0.0/8', WEBHOOK_DENY: rx.host, WORKER_ENABLED: true, WEBHOOK_BACKOFF_MS: 50 })
  const at = new Date().toISOString()
  await app.store.createWebhook({ id: 'wh-1', url: rx.url, events: ['scan.cancelled'], filter: {}, format: 'json', enabled: true, description: '', secret: 's', createdAt: at, updatedAt: at, createdBy: 'service' })
  await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'c1', targets: [{ value: loopbackAddress(), type: 'single_ip' }], options: { template: 'full' } } })
  await app.inject({ method: 'DELETE', url: '/app/scan/c1', headers: auth })
  await new Promise((resolve) => setTimeout(resolve, 500))
  t.equal(rx.received.length, 0, 'nothing sent')
  const log = (await app.inject({ url: '/admin/webhook/wh-1/deliveries', headers: auth })).json() as Json
  t.equal(log.total, 1, 'one attempt, no retry')
  t.match(log.items[0], { event: 'scan.cancelled', ok: false, statusCode: null, willRetry: false, error: new RegExp(`^refused: ${rx.host.replace(/\./g, '\\.')} is in WEBHOOK_DENY`) })
})
