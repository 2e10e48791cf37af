// Faults: a worker killed mid-scan, Redis restarted under queued scans, targets that never speak,
// scans that cannot finish in time, and plans that cannot be made. Every scan must still end.
import { test } from 'tap'
import { silentServers } from '../support/silent-servers'
import { backends, build, SERVICE_KEY } from '../helper'
import { startFakeNvd } from '../support/fake-nvd'
import { localDaemons } from '../support/daemons'
import { expectedCves } from '../support/expected-cves'
import { redisServerAvailable, startPrivateRedis } from '../support/redis-server'
import { countByScan, spawnWorker } from '../support/worker-process'
import { aliasesFor } from '../../lib/cpe/aliases'
import { loopbackAddress } from '../support/loopback'
import { listenOnLoopback } from '../support/raw-http'

const auth = { 'x-api-key': SERVICE_KEY, 'content-type': 'application/json' }
type Json = Record<string, any>


async function until<T> (what: string, fn: () => Promise<T | undefined | false>, ms: number): Promise<T> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const v = await fn()
    if (v !== undefined && v !== false) return v
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${what}: not within ${ms} ms`)
}

const ended = (s: Json): boolean => ['completed', 'failed', 'cancelled'].includes(s.status)

test('a worker killed with SIGKILL mid-scan: another finishes it, every host there, no finding twice', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis answers (required under CI=true)')
  const mosquitto = (await localDaemons()).find((d) => d.port === 1883)
  if (!mosquitto) return t.pass('skipped: no Mosquitto on 127.0.0.1:1883 to give a real finding')
  const expected = expectedCves(aliasesFor(mosquitto.product).map((a) => `${a.vendor}:${a.product}`), mosquitto.version)
  t.ok(expected.length > 0, `the fixture records give Mosquitto ${mosquitto.version} a CVE to find`)

  // 127.0.0.1 answers fast with a real finding; the other addresses each hold full detection on a silent
  // port for several seconds, so a batch is still running after 127.0.0.1's findings are written.
  const first = await silentServers([{ address: '127.0.0.2', port: 0 }])
  const port = first.ports[0]
  const rest = await silentServers([{ address: '127.0.0.3', port }, { address: '127.0.0.4', port }])
  t.teardown(async () => { await first.close(); await rest.close() })
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(() => nvd.close())
  const { app, config } = await build(t, 'redis', { NVD_API_URL: nvd.baseUrl })
  const listening = await listenOnLoopback(app)
  const base = `http://${listening.host}:${listening.port}`
  const get = async (path: string): Promise<Json> => await (await fetch(`${base}${path}`, { headers: auth })).json() as Json

  const env = {
    REDIS_URL: config.REDIS_URL,
    DATABASE_URL: config.DATABASE_URL,
    DATABASE_SCHEMA: config.DATABASE_SCHEMA,
    REDIS_PREFIX: config.REDIS_PREFIX,
    QUEUE_PREFIX: config.QUEUE_PREFIX,
    NVD_API_URL: nvd.baseUrl,
    QUEUE_LOCK_MS: '2000',
    SCAN_BATCH_HOSTS: '2',
    WORKER_CONCURRENCY: '1'
  }
  const w1 = spawnWorker(env)
  t.teardown(() => w1.kill())
  await w1.ready()

  const targets = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'].map((value) => ({ value, type: 'single_ip' }))
  const posted = await fetch(`${base}/app/scan`, { method: 'POST', headers: auth, body: JSON.stringify({ id: 'killed', targets, options: { template: 'standard', ports: `1883,${port}` } }) })
  t.equal(posted.status, 200)

  // Kill once the first batch wrote 127.0.0.1's finding and is still waiting on 127.0.0.2.
  await until('a finding written', async () => (await get('/vulnerability')).total > 0, 60_000)
  t.ok(first.connections() > 0, 'the first batch is still talking to the silent 127.0.0.2')
  const mid = await get('/app/scan/killed')
  t.equal(mid.status, 'running')
  await w1.kill()
  t.notOk(countByScan(w1.lines, 'scan finished').has('killed'), 'the killed worker did not finish the scan')

  const w2 = spawnWorker(env)
  t.teardown(() => w2.kill())
  await w2.ready()
  const scan = await until('the scan ends', async () => { const s = await get('/app/scan/killed'); return ended(s) ? s : undefined }, 90_000)
  t.equal(scan.status, 'completed', scan.reason ?? '')
  t.equal(scan.progress.hostsDone, 4)
  t.equal(scan.progress.percent, 100)
  t.equal(scan.summary.hostsUp, 4)
  t.equal(countByScan(w2.lines, 'scan finished').get('killed'), 1, 'the second worker finished it, once')

  const hosts = await get('/host?limit=50')
  t.same(hosts.items.map((h: Json) => h.address).sort(), ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'], 'every host is there, once')
  for (const h of hosts.items) t.ok(h.ports.some((p: Json) => p.state === 'open'), `${String(h.address)} has its open port`)

  const vulns = await get('/vulnerability?limit=500')
  const distinct = new Set(vulns.items.map((f: Json) => `${String(f.address)}|${String(f.port)}|${String(f.cveId)}`))
  t.equal(vulns.total, distinct.size, 'no finding is duplicated')
  t.equal(vulns.items.length, vulns.total)
  // The broker lets anonymous clients in, an exposure finding of its own (source vulnscan) beside the CVEs.
  const cves = vulns.items.filter((f: Json) => f.source !== 'vulnscan')
  t.same([...new Set(cves.map((f: Json) => f.cveId))].sort(), [...expected].sort(), 'exactly the fixture CVEs for that version')
  t.ok(vulns.items.filter((f: Json) => f.source === 'vulnscan').every((f: Json) => /^VULNSCAN-/.test(String(f.cveId))), 'every other finding is an exposure check')
  const f = scan.summary.findings
  t.equal(f.critical + f.high + f.medium + f.low + f.none + f.unknown, vulns.total, 'the summary counts each finding once')
})

test('a scan cancelled mid-scan on a separate worker process stops its sockets within 2 seconds', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis answers (required under CI=true)')
  const target = loopbackAddress()
  const silent = await silentServers(Array.from({ length: 40 }, () => ({ address: target, port: 0 })))
  t.teardown(() => silent.close())
  const { app, config } = await build(t, 'redis')
  const worker = spawnWorker({ REDIS_URL: config.REDIS_URL, DATABASE_URL: config.DATABASE_URL, DATABASE_SCHEMA: config.DATABASE_SCHEMA, REDIS_PREFIX: config.REDIS_PREFIX, QUEUE_PREFIX: config.QUEUE_PREFIX, QUEUE_LOCK_MS: '2000' })
  t.teardown(() => worker.kill())
  await worker.ready()
  await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'stop', targets: [{ value: target, type: 'single_ip' }], options: { template: 'standard', ports: silent.ports.join(',') } } })
  await until('detection talks to the silent ports', async () => silent.connections() > 0, 30_000)
  const cancelled = await app.inject({ method: 'DELETE', url: '/app/scan/stop', headers: { 'x-api-key': SERVICE_KEY } })
  t.equal(cancelled.statusCode, 200)
  const at = Date.now()
  await until('sockets closed', async () => silent.connections() === 0, 5000)
  t.ok(Date.now() - at < 2000, `sockets closed ${Date.now() - at} ms after the cancel`)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  t.equal((await app.inject({ url: '/app/scan/stop', headers: auth })).json().status, 'cancelled', 'stays cancelled')
  t.notOk(countByScan(worker.lines, 'scan finished').has('stop'), 'the worker did not finish it after all')
})

test('Redis restarted while scans are queued: none is lost', async (t) => {
  if (!redisServerAvailable()) return t.pass('skipped: no redis-server binary to run a private Redis')
  const redis = await startPrivateRedis({ appendOnly: true })
  const { app, config } = await build(t, 'redis', { REDIS_URL: redis.url })
  t.teardown(async () => { await app.close(); await redis.destroy() })

  const ids = Array.from({ length: 20 }, (_, i) => `restart-${i}`)
  for (const [i, id] of ids.entries()) {
    const r = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id, priority: 1 + (i % 5), targets: [{ value: '127.0.0.1', type: 'single_ip' }], options: { template: 'discovery', ports: '6379' } } })
    t.equal(r.statusCode, 200, `${id} accepted`)
  }
  await redis.stop()
  await redis.start()

  const worker = spawnWorker({ REDIS_URL: redis.url, DATABASE_URL: config.DATABASE_URL, DATABASE_SCHEMA: config.DATABASE_SCHEMA, REDIS_PREFIX: config.REDIS_PREFIX, QUEUE_PREFIX: config.QUEUE_PREFIX, WORKER_CONCURRENCY: '4', QUEUE_LOCK_MS: '2000' })
  t.teardown(() => worker.kill())
  await worker.ready()
  const list = await until('every scan ends', async () => {
    const page = (await app.inject({ url: '/app/scan?limit=100', headers: auth })).json() as Json
    return page.items.every(ended) && page.total === ids.length ? page : undefined
  }, 60_000)
  t.same(list.items.map((s: Json) => s.id).sort(), [...ids].sort(), 'every scan is still there')
  t.ok(list.items.every((s: Json) => s.status === 'completed'), 'every scan completed')
  const finished = countByScan(worker.lines, 'scan finished')
  t.ok(ids.every((id) => finished.get(id) === 1), 'each finished once')

  // The API's own connections came back too: a scan posted after the restart runs.
  const after = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'after-restart', targets: [{ value: '127.0.0.1', type: 'single_ip' }], options: { template: 'discovery', ports: '6379' } } })
  t.equal(after.statusCode, 200)
  const scan = await until('the scan posted after the restart ends', async () => { const s = (await app.inject({ url: '/app/scan/after-restart', headers: auth })).json() as Json; return ended(s) ? s : undefined }, 30_000)
  t.equal(scan.status, 'completed')
})

test('a target that accepts and never speaks does not stall a scan past its limit', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis answers (required under CI=true)')
  const target = loopbackAddress()
  const silent = await silentServers([{ address: target, port: 0 }])
  t.teardown(() => silent.close())
  const { app } = await build(t, 'redis', { WORKER_ENABLED: true, SCAN_TIMEOUT: 10, QUEUE_LOCK_MS: 2000 })
  const at = Date.now()
  await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'mute', targets: [{ value: target, type: 'single_ip' }], options: { template: 'quick', ports: String(silent.ports[0]) } } })
  const scan = await until('the scan ends', async () => { const s = (await app.inject({ url: '/app/scan/mute', headers: auth })).json() as Json; return ended(s) ? s : undefined }, 30_000)
  t.equal(scan.status, 'completed', scan.reason ?? '')
  const ran = Date.parse(scan.finishedAt) - Date.parse(scan.startedAt)
  t.ok(ran <= 10_000, `ran ${ran} ms, within the 10 s limit`)
  t.ok(Date.now() - at < 25_000, 'ended soon after it was posted')
  const host = (await app.inject({ url: `/host/${target}`, headers: auth })).json() as Json
  const p = host.ports.find((x: Json) => x.port === silent.ports[0])
  t.equal(p?.state, 'open')
  t.equal(p?.service, 'unknown')
  await until('sockets closed', async () => silent.connections() === 0, 2000)
  t.pass('no connection left open')
})

test('a scan that cannot finish within SCAN_TIMEOUT ends failed, naming the time limit', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis answers (required under CI=true)')
  // Full detection gives each silent port several seconds, 32 ports at a time: 80 of them take
  // three rounds, well past 10 s.
  const target = loopbackAddress()
  const silent = await silentServers(Array.from({ length: 80 }, () => ({ address: target, port: 0 })))
  t.teardown(() => silent.close())
  const { app } = await build(t, 'redis', { WORKER_ENABLED: true, SCAN_TIMEOUT: 10, QUEUE_LOCK_MS: 2000 })
  await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'slow', targets: [{ value: target, type: 'single_ip' }], options: { template: 'standard', ports: silent.ports.join(',') } } })
  const scan = await until('the scan ends', async () => { const s = (await app.inject({ url: '/app/scan/slow', headers: auth })).json() as Json; return ended(s) ? s : undefined }, 40_000)
  t.equal(scan.status, 'failed')
  t.match(scan.reason, /time limit of 10 s/)
  const ran = Date.parse(scan.finishedAt) - Date.parse(scan.startedAt)
  t.ok(ran >= 10_000 && ran < 16_000, `failed ${ran} ms after it started`)
  await until('sockets closed', async () => silent.connections() === 0, 3000)
  t.pass('the scan\'s sockets are closed')
})

for (const backend of ['memory', 'redis'] as const) {
  test(`a plan that fails for good ends the scan failed with the reason (${backend})`, async (t) => {
    if (!(await backends()).includes(backend)) return t.pass('skipped: no Redis answers (required under CI=true)')
    const { app } = await build(t, backend, { WORKER_ENABLED: true })
    const r = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'nxdomain', targets: [{ value: 'no-such-host.invalid', type: 'dns_name' }], options: { template: 'discovery' } } })
    t.equal(r.statusCode, 200)
    const scan = await until('the scan ends', async () => { const s = (await app.inject({ url: '/app/scan/nxdomain', headers: auth })).json() as Json; return ended(s) ? s : undefined }, 20_000)
    t.equal(scan.status, 'failed')
    t.match(scan.reason, /no-such-host\.invalid.*does not resolve/)
    t.ok(scan.finishedAt)
  })
}
