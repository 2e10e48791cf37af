// The port scan's parts on their own: the RTT/timeout model, the host scheduler driven by made-up
// outcomes (no sockets), and the local and worker-thread lanes against real loopback sockets.

import * as net from 'node:net'
import { test } from 'tap'
import { TimeoutModel, RttEstimate } from '../../../lib/scanner/portscan-rtt'
import { HostScheduler, ID_BASE, type Dispatcher, type PortScanHost, type SchedulerOptions } from '../../../lib/scanner/portscan-scheduler'
import { idleWorkerCount, localLane, workerLane, type Lane, type LaneSink } from '../../../lib/scanner/portscan-lanes'
import { createExecutor, OUTCOME, rawAvailable } from '../../../lib/scanner/portscan-thread.cjs'
import { loopbackAddress } from '../../support/loopback'

test('timeout model: initial, smoothed per RFC 6298, bounded, and the scan-wide estimate for unmeasured hosts', async (t) => {
  const m = new TimeoutModel({ initialMs: 1000, minMs: 1, maxMs: 3000 })
  const a = new RttEstimate()
  const b = new RttEstimate()
  t.equal(m.timeoutFor(a), 1000, 'nothing measured: the initial timeout')
  m.sample(a, 10_000)
  t.equal(m.timeoutFor(a), 30, 'first sample: srtt 10 + 4 * rttvar 5')
  m.sample(a, 20_000)
  t.equal(a.srtt, 11.25)
  t.equal(a.rttvar, 6.25)
  t.equal(m.timeoutFor(a), 36.25)
  t.equal(m.timeoutFor(b), m.global.srtt + 4 * m.global.rttvar, 'an unmeasured host borrows the scan-wide estimate')
  const bounded = new TimeoutModel({ initialMs: 1000, minMs: 100, maxMs: 300 })
  const c = new RttEstimate()
  bounded.sample(c, 1000)
  t.equal(bounded.timeoutFor(c), 100, 'never below the minimum')
  bounded.sample(c, 5_000_000)
  t.equal(bounded.timeoutFor(c), 300, 'never above the maximum')
})

interface Sent { id: number, host: number, port: number, timeoutMs: number }

function harness (over: Partial<SchedulerOptions> = {}): {
  s: HostScheduler, sent: Sent[], aborted: number[], retimed: Array<[number, number]>, done: Promise<PortScanHost[]>, hosts: PortScanHost[]
} {
  const sent: Sent[] = []
  const aborted: number[] = []
  const retimed: Array<[number, number]> = []
  const hosts: PortScanHost[] = []
  let resolve!: (r: PortScanHost[]) => void
  let reject!: (e: Error) => void
  const done = new Promise<PortScanHost[]>((res, rej) => { resolve = res; reject = rej })
  const s = new HostScheduler({
    hosts: ['192.0.2.1', '192.0.2.2'],
    ports: [1, 2, 3, 4, 5],
    maxConcurrency: 4,
    perHostConcurrency: 3,
    timeouts: { initialMs: 1000, minMs: 1, maxMs: 3000 },
    retries: 1,
    onHost: (h) => hosts.push(h),
    onDone: resolve,
    onFail: reject,
    ...over
  })
  const d: Dispatcher = {
    send (id, host, port, timeoutMs) { sent.push({ id, host, port, timeoutMs }) },
    flush () {},
    retime (host, timeoutMs) { retimed.push([host, timeoutMs]) },
    abortHost (host) { aborted.push(host) }
  }
  s.start(d)
  return { s, sent, aborted, retimed, done, hosts }
}

const take = (sent: Sent[]): Sent[] => sent.splice(0, sent.length)

test('scheduler: per-host and global bounds, hosts admitted in order', async (t) => {
  const { s, sent } = harness()
  t.same(sent.map((x) => [x.host, x.port]), [[0, 1], [0, 2], [0, 3], [1, 1]], 'three for the first host (its bound), the fourth for the next')
  t.ok(sent.every((x) => x.id === x.host * ID_BASE + x.port && x.timeoutMs === 1000), 'ids carry host and port; initial timeout')
  t.equal(s.inflight, 4)
  take(sent)
  s.onResult(0 * ID_BASE + 1, OUTCOME.CLOSED, 2000, 0)
  t.same(sent.map((x) => [x.host, x.port]), [[1, 2]], 'one answer frees one slot, taken round-robin')
  t.equal(sent[0].timeoutMs, 6, 'an unmeasured host borrows the measured round trip (2 ms + 4 * 1 ms)')
})

test('scheduler: outcomes become port states; a timeout is retried once, then filtered', async (t) => {
  const { s, sent, done, hosts } = harness({ hosts: ['192.0.2.1'], ports: [21, 22, 23], perHostConcurrency: 8 })
  t.equal(sent.length, 3)
  s.onResult(21, OUTCOME.OPEN, 1000, 0)
  s.onResult(22, OUTCOME.CLOSED, 1000, 0)
  take(sent)
  s.onResult(23, OUTCOME.TIMEOUT, 0, 0)
  t.same(sent.map((x) => x.port), [23], 'retried')
  s.onResult(23, OUTCOME.TIMEOUT, 0, 0)
  const [r] = await done
  t.match(r, { address: '192.0.2.1', up: true, open: [21], filtered: [23], closedCount: 1 })
  t.type(r.rttMs, 'number')
  t.same(hosts, [r], 'onHost once')
  t.equal(s.counters.timeouts, 2)
})

test('scheduler: unreachable before any answer takes the host down and aborts its attempts', async (t) => {
  const { s, sent, aborted, done } = harness({ ports: [1, 2, 3, 4, 5, 6], perHostConcurrency: 2 })
  t.same(sent.map((x) => [x.host, x.port]), [[0, 1], [0, 2], [1, 1], [1, 2]])
  take(sent)
  s.onResult(1, OUTCOME.UNREACH, 0, 0)
  t.same(aborted, [0], 'the down host\'s attempts are abandoned')
  t.ok(sent.every((x) => x.host === 1), 'nothing more is sent to the down host')
  s.onResult(2, OUTCOME.ABORTED, 0, 0)
  // The other host answers everything as closed.
  s.batch(() => { for (const port of [1, 2]) s.onResult(ID_BASE + port, OUTCOME.CLOSED, 500, 0) })
  for (let guard = 0; guard < 10 && sent.length > 0; guard++) {
    const batch = take(sent)
    s.batch(() => { for (const x of batch) s.onResult(x.id, OUTCOME.CLOSED, 500, 0) })
  }
  const [down, up] = await done
  t.match(down, { up: false, downReason: 'host unreachable', open: [], closedCount: 0 })
  t.match(up, { up: true, closedCount: 6 })
})

test('scheduler: descriptor exhaustion lowers the bound and requeues; a lost attempt is made again', async (t) => {
  const { s, sent } = harness({ hosts: ['192.0.2.1'], ports: [1, 2, 3, 4], maxConcurrency: 4, perHostConcurrency: 4 })
  t.equal(sent.length, 4)
  take(sent)
  s.onResult(1, OUTCOME.RESOURCE, 0, 0)
  t.equal(s.limit, 2, 'bound cut to 80 % of what is in flight')
  t.equal(s.counters.resourceBackoffs, 1)
  t.same(sent, [], 'nothing sent while three attempts already exceed the bound')
  s.giveBack(2)
  s.onResult(3, OUTCOME.CLOSED, 100, 0)
  t.same(sent.map((x) => x.port), [2], 'under the lowered bound one goes out')
  s.onResult(4, OUTCOME.CLOSED, 100, 0)
  t.same(sent.map((x) => x.port), [2, 1], 'the lost and the refused attempt are both made again')
})

test('scheduler: our own crossed sockets are not reported open; retime follows fast answers', async (t) => {
  const { s, sent, retimed, done } = harness({ hosts: ['127.0.0.1'], ports: [40000, 40001, 22], perHostConcurrency: 8 })
  t.equal(sent.length, 3)
  s.onResult(22, OUTCOME.OPEN, 100, 0)
  t.same(retimed, [[0, 1]], 'in-flight attempts are told of a much shorter timer')
  s.onResult(40000, OUTCOME.OPEN, 100, 40001)
  s.onResult(40001, OUTCOME.OPEN, 100, 40000)
  const [r] = await done
  t.same(r.open, [22])
  t.equal(r.closedCount, 2)
  t.equal(s.counters.selfConnects, 2)
})

test('scheduler: an empty scan finishes at once', async (t) => {
  const { sent, done } = harness({ ports: [] })
  t.same(sent, [])
  t.same((await done).map((h) => h.up), [false, false])
})

function collectingSink (): { sink: LaneSink, results: Map<number, number>, lost: number[], ready: Promise<void> } {
  const results = new Map<number, number>()
  const lost: number[] = []
  let onReady!: () => void
  const ready = new Promise<void>((resolve) => { onReady = resolve })
  const sink: LaneSink = {
    result (_lane, id, outcome) { results.set(id, outcome) },
    batch (fn) { fn() },
    ready () { onReady() },
    lost (_lane, ids) { lost.push(...ids) }
  }
  return { sink, results, lost, ready }
}

async function until (cond: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms
  while (!cond() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 10))
  return cond()
}

async function listener (host: string): Promise<{ port: number, close: () => Promise<void> }> {
  const server = net.createServer((s) => { s.on('error', () => {}); s.destroy() })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  return { port: (server.address() as net.AddressInfo).port, close: async () => await new Promise<void>((resolve) => server.close(() => resolve())) }
}

test('local lane: real connects in this thread, one outcome per attempt, outstanding counted down', async (t) => {
  const host = loopbackAddress()
  const open = await listener(host)
  t.teardown(open.close)
  const closedPort = (await listener(host))
  await closedPort.close()
  const { sink, results } = collectingSink()
  const lane: Lane = localLane(sink, [{ address: host, family: 4 }])
  lane.outstanding += 2
  lane.send(open.port, 0, open.port, 1000)
  lane.send(closedPort.port, 0, closedPort.port, 1000)
  lane.flush()
  t.ok(await until(() => results.size === 2))
  t.equal(results.get(open.port), OUTCOME.OPEN)
  t.equal(results.get(closedPort.port), OUTCOME.CLOSED)
  t.equal(lane.outstanding, 0)
  await lane.close()
})

test('executor: a refused socket connected again for the next port gives the outcomes new sockets give', { skip: !rawAvailable || process.platform !== 'linux' ? 'raw handles on Linux only' : false }, async (t) => {
  const hosts = [loopbackAddress(), loopbackAddress()]
  // Below the ephemeral range, so that none of our own sockets can meet another (self-connects).
  const base = 20000 + Math.floor(Math.random() * 20000)
  const ports = Array.from({ length: 300 }, (_, i) => base + i)
  const servers: net.Server[] = []
  for (const [h, host] of hosts.entries()) {
    for (const p of [ports[0], ports[1 + h], ports[150], ports[299 - h]]) {
      const server = net.createServer((s) => { s.on('error', () => {}); s.destroy() })
      await new Promise<void>((resolve, reject) => { server.once('error', reject).listen(p, host, resolve) })
      servers.push(server)
    }
  }
  t.teardown(async () => { await Promise.all(servers.map(async (s) => await new Promise((resolve) => s.close(resolve)))) })
  const sweep = async (reuse: boolean): Promise<{ outcomes: Map<number, number>, reused: number }> => {
    const outcomes = new Map<number, number>()
    const ex = createExecutor((id, outcome) => { outcomes.set(id, outcome) }, { reuse })
    ex.setHosts(hosts.map((address) => ({ address, family: 4 })))
    // A few at a time, both hosts interleaved, so that refused sockets are there to be taken.
    for (let i = 0; i < ports.length; i += 8) {
      for (const p of ports.slice(i, i + 8)) for (let h = 0; h < hosts.length; h++) ex.start(h * ID_BASE + p, h, p, 2000)
      await until(() => ex.inflight === 0)
    }
    const reused = ex.reused
    ex.abortAll()
    return { outcomes, reused }
  }
  const fresh = await sweep(false)
  const again = await sweep(true)
  t.equal(fresh.reused, 0)
  t.ok(again.reused > ports.length, `${again.reused} attempts on refused sockets`)
  t.equal(again.outcomes.size, ports.length * hosts.length)
  t.same([...again.outcomes].sort((a, b) => a[0] - b[0]), [...fresh.outcomes].sort((a, b) => a[0] - b[0]))
  const open = (h: number): number[] => ports.filter((p) => again.outcomes.get(h * ID_BASE + p) === OUTCOME.OPEN)
  t.same(open(0), [ports[0], ports[1], ports[150], ports[299]])
  t.same(open(1), [ports[0], ports[2], ports[150], ports[298]])
})

test('local lane: an injected socket layer and abortHost', async (t) => {
  const { sink, results } = collectingSink()
  const cancelled: number[] = []
  const lane = localLane(sink, [{ address: '192.0.2.1', family: 4 }], (_a, port, _f, cb) => {
    if (port === 1) setImmediate(() => cb('ECONNREFUSED'))
    return () => { cancelled.push(port) }
  })
  lane.outstanding += 2
  lane.send(1, 0, 1, 1000)
  lane.send(2, 0, 2, 1000)
  t.ok(await until(() => results.size === 1))
  t.equal(results.get(1), OUTCOME.CLOSED)
  lane.abortHost(0)
  t.ok(await until(() => results.size === 2))
  t.equal(results.get(2), OUTCOME.ABORTED)
  t.ok(cancelled.includes(2), 'the pending attempt was abandoned')
})

test('worker lane: same outcomes from a pooled thread; the thread returns to the pool; a dead thread gives its attempts back', async (t) => {
  const host = loopbackAddress()
  const open = await listener(host)
  t.teardown(open.close)
  const { sink, results, ready, lost } = collectingSink()
  const lane = workerLane(sink, [{ address: host, family: 4 }])
  if (!lane.ready) await ready
  t.ok(lane.ready, 'online')
  const ports = [open.port, open.port === 65535 ? 65534 : open.port + 1]
  lane.outstanding += 2
  for (const p of ports) lane.send(p, 0, p, 1000)
  lane.flush()
  t.ok(await until(() => results.size === 2))
  t.equal(results.get(open.port), OUTCOME.OPEN)
  t.equal(lane.outstanding, 0)
  const before = idleWorkerCount()
  await lane.close()
  t.equal(idleWorkerCount(), before + 1, 'kept for the next scan')

  // A second lane reuses that thread; killing it hands back whatever it had not answered.
  const second = collectingSink()
  const lane2 = workerLane(second.sink, [{ address: host, family: 4 }])
  t.equal(idleWorkerCount(), before, 'leased from the pool')
  lane2.outstanding += 1
  lane2.send(open.port, 0, open.port, 1000)
  lane2.flush()
  await lane2.thread.terminate()
  t.ok(await until(() => second.results.size + second.lost.length === 1), 'each attempt is answered or given back, once')
  t.same(lost, [])
})
