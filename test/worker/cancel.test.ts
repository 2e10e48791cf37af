// Cancelling a running scan stops its sockets within 2 seconds; events stream progress and the end.
import { test } from 'tap'
import { silentServers } from '../support/silent-servers'
import { build, SERVICE_KEY } from '../helper'
import { createScanRunner, type ScanJobData } from '../../lib/worker/runner'
import { loopbackAddress } from '../support/loopback'
import { listenOnLoopback } from '../support/raw-http'

const auth = { 'x-api-key': SERVICE_KEY }


test('DELETE /app/scan/{id} stops a running scan\'s sockets within 2 seconds', async (t) => {
  const target = loopbackAddress()
  const silent = await silentServers(Array.from({ length: 40 }, () => ({ address: target, port: 0 })))
  t.teardown(() => silent.close())
  const { app } = await build(t, 'memory', { WORKER_ENABLED: true })
  const post = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'long', targets: [{ value: target, type: 'single_ip' }], options: { template: 'standard', ports: silent.ports.join(',') } } })
  t.equal(post.statusCode, 200)
  const deadline = Date.now() + 20_000
  while (silent.connections() === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  t.ok(silent.connections() > 0, 'detection is talking to the silent ports')
  t.equal((await app.inject({ url: '/app/scan/long', headers: auth })).json().status, 'running')

  const cancelled = await app.inject({ method: 'DELETE', url: '/app/scan/long', headers: auth })
  t.equal(cancelled.statusCode, 200)
  t.match(cancelled.json(), { status: 'cancelled', reason: /cancelled by/ })
  const at = Date.now()
  while (silent.connections() > 0 && Date.now() - at < 5000) await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(silent.connections(), 0, 'no socket left open')
  t.ok(Date.now() - at < 2000, `sockets closed ${Date.now() - at} ms after the cancel`)

  const again = await app.inject({ method: 'DELETE', url: '/app/scan/long', headers: auth })
  t.equal(again.statusCode, 409)
  t.equal((await app.inject({ method: 'DELETE', url: '/app/scan/unknown', headers: auth })).statusCode, 404)
  await new Promise((resolve) => setTimeout(resolve, 600))
  t.equal((await app.inject({ url: '/app/scan/long', headers: auth })).json().status, 'cancelled', 'stays cancelled')
})

test('a queued scan cancelled before a worker takes it never runs', async (t) => {
  const { app } = await build(t, 'memory')
  await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'q', targets: [{ value: '127.0.0.1', type: 'single_ip' }] } })
  t.equal((await app.inject({ method: 'DELETE', url: '/app/scan/q', headers: auth })).json().status, 'cancelled')
  const runner = createScanRunner({ store: app.store, results: app.results, queue: app.scanQueue, nvd: app.nvd, config: app.config, log: app.log, attempts: 1 })
  const queue = app.scanQueue
  await queue.process<ScanJobData>((job, signal) => runner.handle(job, signal), { concurrency: 1, lockDurationMs: app.config.QUEUE_LOCK_MS })
  while ((await queue.counts()).completed === 0) await new Promise((resolve) => setTimeout(resolve, 20))
  const scan = (await app.inject({ url: '/app/scan/q', headers: auth })).json()
  t.equal(scan.status, 'cancelled')
  t.equal(scan.progress.hostsTotal, 0, 'it was never planned')
  t.equal((await app.inject({ url: '/host', headers: auth })).json().total, 0, 'nothing was scanned')
})

test('GET /app/scan/{id}/events streams progress, then the end, then closes', async (t) => {
  const { app } = await build(t, 'memory', { WORKER_ENABLED: true })
  const listening = await listenOnLoopback(app)
  const base = `http://${listening.host}:${listening.port}`
  await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'ev', targets: [{ value: '127.0.0.1', type: 'single_ip' }], options: { template: 'discovery', ports: '1-2000' } } })
  const res = await fetch(`${base}/app/scan/ev/events`, { headers: auth })
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /text\/event-stream/)
  const text = await res.text()
  const events = [...text.matchAll(/event: (\w+)\n(?:id: \S+\n)?data: (.*)\n\n/g)].map((m) => ({ event: m[1], data: JSON.parse(m[2]) }))
  t.ok(events.length >= 1)
  const last = events[events.length - 1]
  t.equal(last.event, 'end')
  t.equal(last.data.status, 'completed')
  t.equal(last.data.progress.percent, 100)
  t.ok(events.slice(0, -1).every((e) => e.event === 'progress'))
  const unknown = await fetch(`${base}/app/scan/nope/events`, { headers: auth })
  t.equal(unknown.status, 404)
  t.equal((await fetch(`${base}/app/scan/ev/events`)).status, 401)
})
