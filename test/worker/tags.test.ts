// Tags through real scans on both backends: a scan's `tags` land on the hosts it finds (keeping theirs), a scan's
// `targetTags` cover the hosts tagged when it is planned (held to the key's scope like any target), and a schedule's
// runs carry both and look the tagged hosts up each time.
import { test } from 'tap'
import { createServer, type Server } from 'node:net'
import { backends, build, SERVICE_KEY } from '../helper'
import { freePort, loopbackAddress } from '../support/loopback'
import { createScanRunner } from '../../lib/worker/runner'

const auth = { 'x-api-key': SERVICE_KEY }
type Json = Record<string, any>
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
const TERMINAL = ['completed', 'failed', 'cancelled']

/** A TCP listener on a loopback address of its own: the one open port of the host. */
async function listener (t: { teardown(fn: () => unknown): void }): Promise<{ host: string, port: number }> {
  const host = loopbackAddress()
  const port = await freePort(host)
  // The scanner may reset the connection: that is no error of the test's.
  const server: Server = createServer((socket) => { socket.on('error', () => {}); socket.end() })
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(port, host, resolve) })
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { host, port }
}

test('scans add their tags to the hosts they find and scan the hosts their targetTags name', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend, { WORKER_ENABLED: true })
      const settled = async (id: string, key = SERVICE_KEY): Promise<Json> => {
        for (let i = 0; ; i++) {
          const scan = (await app.inject({ url: `/app/scan/${id}`, headers: { 'x-api-key': key } })).json() as Json
          if (TERMINAL.includes(scan.status) || i > 300) return scan
          await sleep(100)
        }
      }
      const one = await listener(t)
      const other = await listener(t)
      const options = { template: 'discovery', ports: `${one.port},${other.port}` }
      const post = (payload: Json, key = SERVICE_KEY) => app.inject({ method: 'POST', url: '/app/scan', headers: { 'x-api-key': key }, payload })

      // The first host exists with a tag of its own; a scan of both with tags tags both and keeps that tag.
      t.equal((await post({ id: 'first', targets: [{ value: one.host, type: 'single_ip' }], options })).statusCode, 200)
      t.equal((await settled('first')).status, 'completed')
      t.equal((await app.inject({ method: 'PUT', url: `/host/${one.host}/tags`, headers: auth, payload: { tags: ['lab'] } })).statusCode, 200)
      t.equal((await post({ id: 'tagging', targets: [{ value: one.host, type: 'single_ip' }, { value: other.host, type: 'single_ip' }], options, tags: ['seen:weekly'] })).statusCode, 200)
      t.equal((await settled('tagging')).status, 'completed')
      t.same((await app.inject({ url: `/host/${one.host}`, headers: auth })).json().tags, ['lab', 'seen:weekly'], 'added beside the tag it had')
      t.same((await app.inject({ url: `/host/${other.host}`, headers: auth })).json().tags, ['seen:weekly'], 'a host found for the first time carries them')
      t.same((await app.inject({ url: '/host?tag=seen:weekly&sort=address', headers: auth })).json().total, 2)

      // A re-scan without tags keeps them all.
      t.equal((await post({ id: 'again', targets: [{ value: other.host, type: 'single_ip' }], options })).statusCode, 200)
      t.equal((await settled('again')).status, 'completed')
      t.same((await app.inject({ url: `/host/${other.host}`, headers: auth })).json().tags, ['seen:weekly'])

      // targetTags alone: the host tagged lab (and only it) is scanned.
      t.equal((await post({ id: 'by-tag', targetTags: ['lab'], options })).statusCode, 200)
      const byTag = await settled('by-tag')
      t.match(byTag, { status: 'completed', targets: [], targetTags: ['lab'], progress: { hostsTotal: 1 }, summary: { hostsUp: 1, openPorts: 1 } })
      t.equal((await app.inject({ url: `/host/${one.host}`, headers: auth })).json().lastScanId, 'by-tag', 'the tagged host was scanned')
      t.not((await app.inject({ url: `/host/${other.host}`, headers: auth })).json().lastScanId, 'by-tag', 'the other was not')

      t.equal((await post({ id: 'nobody', targetTags: ['unknown-tag'], options })).statusCode, 400, 'tags that name no host now: a 400 at POST')

      // Scope: to a key scoped elsewhere, a tag only hosts outside its scope carry names no host (it may not read them).
      const scoped = (await app.inject({ method: 'POST', url: '/admin/keys', headers: auth, payload: { label: 'elsewhere', scope: ['192.0.2.0/24'] } })).json().key as string
      const refused = await post({ id: 'scoped', targetTags: ['lab'], options }, scoped)
      t.equal(refused.statusCode, 400)
      t.match(refused.json().error, /no known host carries the tag lab/)
      t.not((await app.inject({ url: `/host/${one.host}`, headers: auth })).json().lastScanId, 'scoped', 'not scanned')
    })
  }
})

test('targetTags are looked up when the scan is planned: tags taken off after the POST leave the scan failing, saying why', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      // No worker in the app: the planning job is run here, after the host lost its tag.
      const { app, config } = await build(t, backend)
      const host = loopbackAddress()
      await app.results.recordHost({ scanId: 's0', at: new Date().toISOString(), host: { address: host, hostnames: [], up: true, ports: [], closedCount: 0 }, scannedPorts: [], findings: [], settledPorts: [] })
      await app.results.setHostTags(host, ['lab'])
      const posted = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'late', targetTags: ['lab', 'rack-2'], options: { template: 'discovery', ports: '1' } } })
      t.equal(posted.statusCode, 200)
      await app.results.setHostTags(host, [])
      const log = { info: () => {}, warn: () => {}, error: () => {} }
      const runner = createScanRunner({ store: app.store, results: app.results, queue: app.scanQueue, nvd: app.nvd, config, log, attempts: 1 })
      await runner.handle({ id: 'late', data: { scanId: 'late' }, priority: 3, attemptsMade: 0 }, new AbortController().signal)
      t.match((await app.inject({ url: '/app/scan/late', headers: auth })).json(), {
        status: 'failed', reason: 'targetTags: no known host carries any of the tags lab, rack-2, and the scan names no targets'
      })

      // Tagged again before planning: the host is planned into the scan.
      await app.results.setHostTags(host, ['rack-2'])
      t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'late-2', targetTags: ['lab', 'rack-2'], options: { template: 'discovery', ports: '1' } } })).statusCode, 200)
      await runner.handle({ id: 'late-2', data: { scanId: 'late-2' }, priority: 3, attemptsMade: 0 }, new AbortController().signal)
      t.match((await app.inject({ url: '/app/scan/late-2', headers: auth })).json(), { status: 'running', progress: { hostsTotal: 1 } })
    })
  }
})

test('a schedule\'s runs carry its tags and target the hosts tagged at each run', async (t) => {
  const { app } = await build(t, 'memory', { WORKER_ENABLED: true, SCHEDULE_MIN_INTERVAL: 1 })
  const one = await listener(t)
  await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'seed', targets: [{ value: one.host, type: 'single_ip' }], options: { template: 'discovery', ports: String(one.port) } } })
  for (let i = 0; i < 100 && !TERMINAL.includes((await app.inject({ url: '/app/scan/seed', headers: auth })).json().status); i++) await sleep(100)
  await app.results.setHostTags(one.host, ['nightly-target'])
  const s = (await app.inject({
    method: 'POST',
    url: '/app/schedule',
    headers: auth,
    payload: { cron: '* * * * * *', scan: { targetTags: ['nightly-target'], tags: ['scheduled'], options: { template: 'discovery', ports: String(one.port) } } }
  })).json() as Json
  let runs: Json[] = []
  for (let i = 0; i < 100; i++) {
    await sleep(100)
    runs = ((await app.inject({ url: '/app/scan?limit=100', headers: auth })).json() as Json).items.filter((x: Json) => x.scheduleId === s.id && x.status === 'completed')
    if (runs.length > 0) break
  }
  await app.inject({ method: 'PATCH', url: `/app/schedule/${String(s.id)}`, headers: auth, payload: { enabled: false } })
  t.ok(runs.length > 0, 'a run completed')
  t.match(runs[0], { targetTags: ['nightly-target'], tags: ['scheduled'], progress: { hostsTotal: 1 } })
  t.same((await app.inject({ url: `/host/${one.host}`, headers: auth })).json().tags, ['nightly-target', 'scheduled'])
})

// A scan of a scoped key that follows a tag: hosts carrying it outside the key's scope are neither scanned nor named
// in its summary (before, each was listed under `excluded`, telling the key of hosts it may not read).
test('tagged hosts outside the key\'s scope are left out of a scan and of its summary', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app, config } = await build(t, backend)
      const net = `127.${1 + Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`
      const inside = `${net}.10`
      const outside = loopbackAddress()
      for (const address of [inside, outside]) {
        await app.results.recordHost({ scanId: 's0', at: new Date().toISOString(), host: { address, hostnames: [], up: true, ports: [], closedCount: 0 }, scannedPorts: [], findings: [], settledPorts: [] })
        await app.results.setHostTags(address, ['lab'])
      }
      const key = (await app.inject({ method: 'POST', url: '/admin/keys', headers: auth, payload: { label: 'lab', scope: [`${net}.0/24`] } })).json().key as string
      const posted = await app.inject({ method: 'POST', url: '/app/scan', headers: { 'x-api-key': key }, payload: { id: 'lab', targetTags: ['lab'], options: { template: 'discovery', ports: '1' } } })
      t.equal(posted.statusCode, 200)
      const log = { info: () => {}, warn: () => {}, error: () => {} }
      const runner = createScanRunner({ store: app.store, results: app.results, queue: app.scanQueue, nvd: app.nvd, config, log, attempts: 1 })
      await runner.handle({ id: 'lab', data: { scanId: 'lab' }, priority: 3, attemptsMade: 0 }, new AbortController().signal)
      const scan = (await app.store.getScan('lab'))!
      t.match(scan, { status: 'running', progress: { hostsTotal: 1 } }, 'only the tagged host inside the scope is planned')
      t.same(scan.summary?.excluded ?? [], [], 'and the one outside is not named')
    })
  }
})
