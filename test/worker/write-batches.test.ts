// The worker writes the hosts of a batch job through recordHosts in batches, in the order they were scanned, and
// acknowledges the job only once every batch has committed: a failed write fails the job (to be retried), and
// the retry stores every host.
import { createServer, type Server } from 'node:net'
import { test } from 'tap'
import { build, SERVICE_KEY } from '../helper'
import { createScanRunner, type ScanJobData } from '../../lib/worker/runner'
import type { HostScanWrite, ResultsStore } from '../../lib/store/results-types'
import type { QueueJob } from '../../lib/queue/types'
import { freePort, loopbackAddress } from '../support/loopback'
import { silentServers } from '../support/silent-servers'

const auth = { 'x-api-key': SERVICE_KEY }

function listen (host: string, port: number): Promise<Server> {
  const server = createServer((socket) => { socket.on('error', () => {}); socket.end() })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve(server))
  })
}

test('a batch job\'s hosts go to the store in recordHosts batches, and the job ends only once they committed', async (t) => {
  const addresses = Array.from({ length: 6 }, () => loopbackAddress())
  const port = await freePort(addresses[0])
  const servers = await Promise.all(addresses.map((a) => listen(a, port)))
  t.teardown(() => Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))))
  const { app } = await build(t, 'memory')

  const batches: string[][] = []
  let singles = 0
  let failNext = false
  const inner = app.results
  const results: ResultsStore = Object.assign(Object.create(inner) as ResultsStore, {
    recordHost: async (w: HostScanWrite) => { singles++; return await inner.recordHost(w) },
    recordHosts: async (ws: HostScanWrite[]) => {
      if (failNext) {
        failNext = false
        throw new Error('database went away')
      }
      batches.push(ws.map((w) => w.host.address))
      return await inner.recordHosts(ws)
    }
  })
  const runner = createScanRunner({
    store: app.store, results, queue: app.scanQueue, nvd: app.nvd, config: app.config, log: app.log, attempts: 2,
    writeBatchHosts: 4, writeBatchMs: 60_000
  })

  const posted = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'b', targets: addresses.map((value) => ({ value, type: 'single_ip' })), options: { template: 'discovery', ports: String(port), discovery: false } } })
  t.equal(posted.statusCode, 200, posted.body)
  const job = (data: ScanJobData, attemptsMade = 0): QueueJob<ScanJobData> => ({ id: 'j', data, priority: 3, attemptsMade })
  await runner.handle(job({ scanId: 'b' }), new AbortController().signal)
  const hosts = addresses.map((address) => ({ address, hostnames: [] }))
  const batch = { scanId: 'b', batch: 0, hosts }

  failNext = true
  await t.rejects(runner.handle(job(batch), new AbortController().signal), /database went away/, 'a failed write fails the job, to be retried')
  t.equal((await app.inject({ url: '/app/scan/b', headers: auth })).json().status, 'running', 'the scan is not finished by a job whose writes failed')

  batches.length = 0
  await runner.handle(job(batch, 1), new AbortController().signal)
  t.equal(singles, 0, 'no host written one by one')
  t.same(batches.map((b) => b.length), [4, 2], 'four hosts, then the last two when the job ends')
  t.same(batches.flat().sort(), [...addresses].sort(), 'every host written once')
  const scan = (await app.inject({ url: '/app/scan/b', headers: auth })).json()
  t.equal(scan.status, 'completed')
  const listed = (await app.inject({ url: '/host?limit=50', headers: auth })).json()
  t.same(listed.items.map((h: { address: string }) => h.address).sort(), [...addresses].sort(), 'every host stored by the retry')
})

test('a host waits at most writeBatchMs for its batch to fill, not for the job to end', async (t) => {
  const fast = loopbackAddress()
  const port = await freePort(fast)
  const server = await listen(fast, port)
  t.teardown(() => { server.close() })
  // A host whose port accepts and never speaks: service detection waits on it for seconds.
  const slow = loopbackAddress()
  const silent = await silentServers([{ address: slow, port: 0 }])
  t.teardown(() => silent.close())
  const { app } = await build(t, 'memory')
  let ended = false
  const writes: { hosts: string[], jobEnded: boolean }[] = []
  const inner = app.results
  const results: ResultsStore = Object.assign(Object.create(inner) as ResultsStore, {
    recordHosts: async (ws: HostScanWrite[]) => { writes.push({ hosts: ws.map((w) => w.host.address), jobEnded: ended }); return await inner.recordHosts(ws) }
  })
  const runner = createScanRunner({
    store: app.store, results, queue: app.scanQueue, nvd: app.nvd, config: app.config, log: app.log, attempts: 1,
    writeBatchHosts: 64, writeBatchMs: 100
  })
  const ports = `${port},${silent.ports[0]}`
  await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'w', targets: [{ value: fast, type: 'single_ip' }, { value: slow, type: 'single_ip' }], options: { template: 'standard', ports, discovery: false } } })
  const job = (data: ScanJobData): QueueJob<ScanJobData> => ({ id: 'j', data, priority: 3, attemptsMade: 0 })
  await runner.handle(job({ scanId: 'w' }), new AbortController().signal)
  await runner.handle(job({ scanId: 'w', batch: 0, hosts: [{ address: fast, hostnames: [] }, { address: slow, hostnames: [] }] }), new AbortController().signal)
  ended = true
  t.same(writes.map((w) => w.hosts), [[fast], [slow]], 'each host in a batch of its own, in the order they were scanned')
  t.equal(writes[0].jobEnded, false, 'the first host was written while the slow one was still being scanned')
  t.equal((await app.inject({ url: '/app/scan/w', headers: auth })).json().status, 'completed')
})

test('with a batch in flight the next one waits for its commit: one at a time, in order, and the job ends after the last', async (t) => {
  const addresses = Array.from({ length: 6 }, () => loopbackAddress())
  const port = await freePort(addresses[0])
  const servers = await Promise.all(addresses.map((a) => listen(a, port)))
  t.teardown(() => Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve)))))
  const { app } = await build(t, 'memory')
  const calls: { hosts: string[], committedBefore: number }[] = []
  let committed = 0
  let inFlight = 0
  let most = 0
  const inner = app.results
  const results: ResultsStore = Object.assign(Object.create(inner) as ResultsStore, {
    recordHosts: async (ws: HostScanWrite[]) => {
      inFlight++
      most = Math.max(most, inFlight)
      calls.push({ hosts: ws.map((w) => w.host.address), committedBefore: committed })
      // A slow commit: the hosts scanned meanwhile are matched and queued for the next batch.
      await new Promise((resolve) => setTimeout(resolve, 300))
      const out = await inner.recordHosts(ws)
      committed++
      inFlight--
      return out
    }
  })
  const runner = createScanRunner({
    store: app.store, results, queue: app.scanQueue, nvd: app.nvd, config: app.config, log: app.log, attempts: 1,
    writeBatchHosts: 2, writeBatchMs: 60_000
  })
  await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: 'o', targets: addresses.map((value) => ({ value, type: 'single_ip' })), options: { template: 'discovery', ports: String(port), discovery: false } } })
  const job = (data: ScanJobData): QueueJob<ScanJobData> => ({ id: 'j', data, priority: 3, attemptsMade: 0 })
  await runner.handle(job({ scanId: 'o' }), new AbortController().signal)
  await runner.handle(job({ scanId: 'o', batch: 0, hosts: addresses.map((address) => ({ address, hostnames: [] })) }), new AbortController().signal)
  t.equal(most, 1, 'one batch in flight at a time')
  t.same(calls.map((c) => c.hosts.length), [2, 2, 2])
  t.same(calls.map((c) => c.committedBefore), [0, 1, 2], 'each batch started once the one before it had committed')
  t.same(calls.flatMap((c) => c.hosts).sort(), [...addresses].sort(), 'every host written once')
  t.equal(committed, 3, 'the job ended after its last commit')
  t.equal((await app.inject({ url: '/app/scan/o', headers: auth })).json().status, 'completed')
})
