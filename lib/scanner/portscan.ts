// TCP connect scan. The policy lives here (which port next, how long to wait, what an outcome means,
// when a host is down); the sockets live in portscan-thread.cjs, run in this thread and, for big
// scans, in worker threads too, because on loopback and fast LANs the kernel's per-connect work is
// the bottleneck and a second core halves it.

import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import * as path from 'node:path'
import { Worker } from 'node:worker_threads'
import ipaddr from 'ipaddr.js'
import { createExecutor, OUTCOME, rawAvailable, type ConnectExecutor, type ConnectFn } from './portscan-thread.cjs'

export type { ConnectFn } from './portscan-thread.cjs'

export interface PortScanHost {
  address: string
  /** The host answered at least one connect (open or refused). */
  up: boolean
  /** Smoothed connect round-trip time in milliseconds, when measured. */
  rttMs?: number
  open: number[]
  filtered: number[]
  closedCount: number
  /** Why the scan of this host stopped early (unreachable), when it did. */
  downReason?: string
}

export interface PortScanProgress {
  portsDone: number
  portsTotal: number
  hostsDone: number
  hostsTotal: number
}

export interface PortScanStats {
  attempts: number
  timeouts: number
  selfConnects: number
  /** Times the scan lowered its concurrency because the process ran out of descriptors or ports. */
  resourceBackoffs: number
  threads: number
  rawHandles: boolean
  concurrency: number
  wallMs: number
}

export interface PortScanOptions {
  hosts: string[]
  ports: number[]
  /** Connects in flight across all hosts; capped below the process's descriptor limit. */
  concurrency?: number
  perHostConcurrency?: number
  /** Connect timeout before any round trip was measured. */
  initialTimeoutMs?: number
  minTimeoutMs?: number
  maxTimeoutMs?: number
  /** Extra attempts after a timeout before a port is called filtered. */
  retries?: number
  /** Threads that open sockets, this one included (default: cores + 1, at most 4, since this thread
   * also runs the scan's bookkeeping); 1 keeps everything in this thread. */
  threads?: number
  signal?: AbortSignal
  onProgress?: (p: PortScanProgress) => void
  onHost?: (h: PortScanHost) => void
  onStats?: (s: PortScanStats) => void
  /** Replaces the socket layer (tests only); forces a single thread. */
  connect?: ConnectFn
}

export const PORTSCAN_DEFAULTS = {
  concurrency: 1024,
  perHostConcurrency: 512,
  initialTimeoutMs: 1000,
  minTimeoutMs: 100,
  maxTimeoutMs: 3000,
  retries: 1,
  maxThreads: 4,
  // Below this many connects a worker thread costs more to start than it saves.
  threadMinAttempts: 4096
}

const PROGRESS_EVERY_MS = 100
const RESOURCE_GIVE_UP_MS = 15_000
const ID_BASE = 65536

/** The soft RLIMIT_NOFILE of this process (Linux); 1024 when it cannot be read. */
export function fdLimit (): number {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'))
    if (m !== null) return m[1] === 'unlimited' ? 1 << 20 : Number(m[1])
  } catch {}
  return 1024
}

/** Connects we allow in flight: half of what the descriptor limit leaves after a reserve for the
 * rest of the process (Redis, detection sockets, files). */
export function concurrencyCap (limit = fdLimit()): number {
  return Math.max(4, Math.floor((limit - 48) / 2))
}

interface HostState {
  index: number
  address: string
  family: number
  next: number
  redo: number[]
  inflight: number
  remaining: number
  listed: boolean
  alive: boolean
  done: boolean
  downReason?: string
  samples: number
  srtt: number
  rttvar: number
  retried: Set<number>
  /** The timeout the in-flight attempts of this host were last told about. */
  announcedTimeout: number
  open: number[]
  filtered: number[]
  closed: number
  /** Open port → the local port we connected from, when that was on the target's own address. */
  openFrom: Map<number, number> | null
}

interface Lane {
  ready: boolean
  outstanding: number
  send (id: number, host: number, port: number, timeoutMs: number): void
  flush (): void
  abortHost (host: number): void
  retime (host: number, timeoutMs: number): void
  abortAll (): void
  close (): Promise<void>
}

/** The address as the scan reports it (IPv6 in RFC 5952 form); throws on anything but an IP literal. */
export function canonicalAddress (address: string): { address: string, family: number } {
  const family = isIP(address)
  if (family === 0) throw new TypeError(`'${address}' is not an IPv4 or IPv6 address`)
  if (family === 6 && !address.includes('%')) return { address: ipaddr.parse(address).toString(), family }
  return { address, family }
}

function validPorts (ports: number[]): number[] {
  const seen = new Set<number>()
  const out: number[] = []
  for (const p of ports) {
    if (!Number.isInteger(p) || p < 1 || p > 65535) throw new RangeError(`port ${p} is not in 1..65535`)
    if (!seen.has(p)) { seen.add(p); out.push(p) }
  }
  return out
}

/** Why a scan stopped: the signal's reason when it is an Error, else an AbortError. */
export function abortReason (signal: AbortSignal): Error {
  const r: unknown = signal.reason
  if (r instanceof Error) return r
  const e = new Error('The scan was cancelled')
  e.name = 'AbortError'
  return e
}

interface PooledWorker {
  thread: Worker
  online: boolean
  dead: boolean
  idleTimer: NodeJS.Timeout | null
}

// Connect threads outlive a scan for a while: a worker process runs scan after scan, and starting a
// thread costs tens of milliseconds. Idle threads do not keep the process alive.
const idleWorkers: PooledWorker[] = []
const WORKER_IDLE_MS = 30_000
let epochs = 0

function nextEpoch (): number {
  epochs = (epochs % 1e9) + 1
  return epochs
}

function leaseWorker (): PooledWorker {
  while (idleWorkers.length > 0) {
    const w = idleWorkers.pop() as PooledWorker
    if (w.idleTimer !== null) clearTimeout(w.idleTimer)
    w.idleTimer = null
    if (w.dead) continue
    w.thread.ref()
    return w
  }
  const thread = new Worker(path.join(__dirname, 'portscan-thread.cjs'), {
    workerData: { vulnscanPortscan: true },
    // The worker runs plain CommonJS: inheriting a TypeScript loader would only slow its start.
    execArgv: [],
    stdout: false,
    stderr: false
  })
  const w: PooledWorker = { thread, online: false, dead: false, idleTimer: null }
  thread.once('online', () => { w.online = true })
  thread.once('exit', () => { w.dead = true })
  thread.on('error', () => { w.dead = true })
  return w
}

function releaseWorker (w: PooledWorker): void {
  if (w.dead) return
  if (idleWorkers.length >= PORTSCAN_DEFAULTS.maxThreads * 2) {
    void w.thread.terminate()
    return
  }
  w.thread.postMessage({ op: 'abortAll' })
  w.thread.unref()
  w.idleTimer = setTimeout(() => {
    const i = idleWorkers.indexOf(w)
    if (i >= 0) idleWorkers.splice(i, 1)
    void w.thread.terminate()
  }, WORKER_IDLE_MS)
  w.idleTimer.unref()
  idleWorkers.push(w)
}

/**
 * Connect-scan every port of every host. Open = connected, closed = refused, filtered = no answer
 * after the retries, host down = unreachable before it ever answered. Resolves with one entry per
 * host in input order; rejects with the signal's reason when aborted, or when sockets cannot be
 * opened at all for a long time.
 */
export async function scanPorts (opts: PortScanOptions): Promise<PortScanHost[]> {
  const t0 = performance.now()
  const ports = validPorts(opts.ports)
  const hosts: HostState[] = opts.hosts.map((a, index) => {
    const { address, family } = canonicalAddress(a)
    return {
      index, address, family, next: 0, redo: [], inflight: 0, remaining: ports.length, listed: false,
      alive: false, done: false, samples: 0, srtt: 0, rttvar: 0, retried: new Set<number>(), announcedTimeout: Infinity,
      open: [], filtered: [], closed: 0, openFrom: null
    }
  })
  if (opts.signal?.aborted === true) throw abortReason(opts.signal)

  const cap = concurrencyCap()
  const maxConcurrency = Math.max(1, Math.min(opts.concurrency ?? PORTSCAN_DEFAULTS.concurrency, cap))
  const perHost = Math.max(1, opts.perHostConcurrency ?? PORTSCAN_DEFAULTS.perHostConcurrency)
  const initialTimeout = opts.initialTimeoutMs ?? PORTSCAN_DEFAULTS.initialTimeoutMs
  const minTimeout = opts.minTimeoutMs ?? PORTSCAN_DEFAULTS.minTimeoutMs
  const maxTimeout = Math.max(minTimeout, opts.maxTimeoutMs ?? PORTSCAN_DEFAULTS.maxTimeoutMs)
  const retries = Math.max(0, opts.retries ?? PORTSCAN_DEFAULTS.retries)
  const totalAttempts = hosts.length * ports.length
  const threads = opts.connect !== undefined || !rawAvailable || totalAttempts < PORTSCAN_DEFAULTS.threadMinAttempts
    ? 1
    : Math.max(1, Math.min(opts.threads ?? availableParallelism() + 1, PORTSCAN_DEFAULTS.maxThreads))

  const stats: PortScanStats = {
    attempts: 0, timeouts: 0, selfConnects: 0, resourceBackoffs: 0, threads, rawHandles: false,
    concurrency: maxConcurrency, wallMs: 0
  }
  const results: PortScanHost[] = new Array(hosts.length)
  if (hosts.length === 0 || ports.length === 0) {
    for (const h of hosts) results[h.index] = { address: h.address, up: false, open: [], filtered: [], closedCount: 0 }
    opts.onProgress?.({ portsDone: 0, portsTotal: 0, hostsDone: hosts.length, hostsTotal: hosts.length })
    return results
  }

  return await new Promise<PortScanHost[]>((resolve, reject) => {
    let finished = false
    let limit = maxConcurrency
    let inflight = 0
    let portsDone = 0
    let hostsDone = 0
    let nextHost = 0
    let pumping = false
    let paused = false
    let backoffMs = 10
    let successesSinceRaise = 0
    let resourceSince = 0
    let lastProgress = 0
    let globalSamples = 0
    let globalSrtt = 0
    let globalRttvar = 0
    const active: HostState[] = []
    const lanes: Lane[] = []

    const hostTable = hosts.map((h) => ({ address: h.address, family: h.family }))

    const onAbort = (): void => { fail(abortReason(opts.signal as AbortSignal)) }
    opts.signal?.addEventListener('abort', onAbort, { once: true })

    function teardown (): void {
      finished = true
      opts.signal?.removeEventListener('abort', onAbort)
      for (const lane of lanes) lane.abortAll()
      for (const lane of lanes) void lane.close()
    }

    function fail (err: Error): void {
      if (finished) return
      teardown()
      reject(err)
    }

    function progress (force: boolean): void {
      if (opts.onProgress === undefined) return
      const now = performance.now()
      if (!force && now - lastProgress < PROGRESS_EVERY_MS) return
      lastProgress = now
      opts.onProgress({ portsDone, portsTotal: totalAttempts, hostsDone, hostsTotal: hosts.length })
    }

    function timeoutFor (h: HostState): number {
      let t: number
      if (h.samples > 0) t = h.srtt + 4 * h.rttvar
      else if (globalSamples > 0) t = globalSrtt + 4 * globalRttvar
      else return initialTimeout
      return Math.min(maxTimeout, Math.max(minTimeout, t))
    }

    // RFC 6298 smoothing, the estimator nmap uses too; kept per host and for the whole scan.
    function sample (h: HostState, rttUs: number): void {
      const r = rttUs / 1000
      if (h.samples === 0) {
        h.srtt = r
        h.rttvar = r / 2
      } else {
        h.rttvar = 0.75 * h.rttvar + 0.25 * Math.abs(h.srtt - r)
        h.srtt = 0.875 * h.srtt + 0.125 * r
      }
      h.samples++
      if (globalSamples === 0) {
        globalSrtt = r
        globalRttvar = r / 2
      } else {
        globalRttvar = 0.75 * globalRttvar + 0.25 * Math.abs(globalSrtt - r)
        globalSrtt = 0.875 * globalSrtt + 0.125 * r
      }
      globalSamples++
      const t = timeoutFor(h)
      if (t < h.announcedTimeout * 0.5 && h.inflight > 0) {
        h.announcedTimeout = t
        for (const lane of lanes) lane.retime(h.index, t)
      }
    }

    function hostResult (h: HostState): PortScanHost {
      const r: PortScanHost = {
        address: h.address,
        up: h.alive,
        open: h.open.sort((a, b) => a - b),
        filtered: h.filtered.sort((a, b) => a - b),
        closedCount: h.closed
      }
      if (h.samples > 0) r.rttMs = Math.round(h.srtt * 1000) / 1000
      if (h.downReason !== undefined) r.downReason = h.downReason
      return r
    }

    // Two of our own sockets, X→Y and Y→X on one address, meet in a simultaneous open and both look
    // open although nobody listens: drop such pairs, as self-connects are dropped.
    function dropCrossConnects (h: HostState): void {
      const from = h.openFrom
      if (from === null) return
      const crossed = new Set<number>()
      for (const [port, local] of from) if (from.get(local) === port) crossed.add(port)
      if (crossed.size === 0) return
      h.open = h.open.filter((p) => !crossed.has(p))
      h.closed += crossed.size
      stats.selfConnects += crossed.size
    }

    function hostFinished (h: HostState): void {
      h.done = true
      dropCrossConnects(h)
      hostsDone++
      const r = hostResult(h)
      results[h.index] = r
      opts.onHost?.(r)
      progress(true)
      if (hostsDone === hosts.length && !finished) {
        stats.wallMs = Math.round(performance.now() - t0)
        teardown()
        opts.onStats?.(stats)
        resolve(results)
      }
    }

    function settle (h: HostState): void {
      h.remaining--
      portsDone++
      if (h.remaining === 0) hostFinished(h)
      else progress(false)
    }

    function hostDown (h: HostState, reason: string): void {
      if (h.done) return
      h.downReason = reason
      portsDone += h.remaining
      h.remaining = 0
      h.redo.length = 0
      h.next = ports.length
      hostFinished(h)
      // After hostFinished, so the ABORTED reports this triggers find the host already done.
      if (!finished) for (const lane of lanes) lane.abortHost(h.index)
    }

    function requeue (h: HostState, port: number): void {
      h.redo.push(port)
      if (!h.listed) {
        h.listed = true
        active.push(h)
      }
    }

    function resourceTrouble (): void {
      stats.resourceBackoffs++
      successesSinceRaise = 0
      const now = performance.now()
      if (resourceSince === 0) resourceSince = now
      else if (now - resourceSince > RESOURCE_GIVE_UP_MS) {
        fail(new Error('cannot open sockets: the process keeps running out of file descriptors or local ports'))
        return
      }
      limit = Math.max(1, Math.floor(inflight * 0.8))
      if (inflight === 0 && !paused) {
        // Nothing in flight will free a descriptor for us: wait, then try again, a little longer each time.
        paused = true
        const delay = backoffMs
        backoffMs = Math.min(backoffMs * 2, 500)
        setTimeout(() => { paused = false; pump() }, delay)
      }
    }

    function recovered (): void {
      resourceSince = 0
      backoffMs = 10
      if (limit < maxConcurrency && ++successesSinceRaise >= limit) {
        successesSinceRaise = 0
        limit++
      }
    }

    function onResult (lane: Lane, id: number, outcome: number, rttUs: number, localPort: number): void {
      lane.outstanding--
      inflight--
      if (finished) return
      const h = hosts[Math.floor(id / ID_BASE)]
      const port = id % ID_BASE
      h.inflight--
      if (!h.done) {
        switch (outcome) {
          case OUTCOME.OPEN:
            h.alive = true
            sample(h, rttUs)
            h.open.push(port)
            if (localPort > 0) (h.openFrom ??= new Map()).set(port, localPort)
            recovered()
            settle(h)
            break
          case OUTCOME.SELF:
            // Simultaneous open with our own socket: nobody listens there, so the port is closed.
            stats.selfConnects++
            h.alive = true
            h.closed++
            recovered()
            settle(h)
            break
          case OUTCOME.CLOSED:
            h.alive = true
            sample(h, rttUs)
            h.closed++
            recovered()
            settle(h)
            break
          case OUTCOME.TIMEOUT:
            stats.timeouts++
            if (h.retried.has(port) || retries === 0) {
              h.filtered.push(port)
              settle(h)
            } else {
              h.retried.add(port)
              requeue(h, port)
            }
            break
          case OUTCOME.UNREACH:
            // Once a host has answered, an unreachable for one port is a filter (ICMP prohibited).
            if (h.alive) {
              h.filtered.push(port)
              settle(h)
            } else {
              hostDown(h, 'host unreachable')
            }
            break
          case OUTCOME.RESOURCE:
            requeue(h, port)
            resourceTrouble()
            break
          case OUTCOME.ABORTED:
            break
          default:
            h.filtered.push(port)
            settle(h)
        }
      }
      if (!pumping) pump()
    }

    function pickLane (): Lane {
      let best = lanes[0]
      for (let i = 1; i < lanes.length; i++) {
        const l = lanes[i]
        if (l.ready && l.outstanding < best.outstanding) best = l
      }
      return best
    }

    let rr = 0
    function hasWork (h: HostState): boolean {
      return !h.done && (h.redo.length > 0 || h.next < ports.length)
    }

    // Round-robin over admitted hosts that have work and room under the per-host bound; hosts out
    // of unsent work leave the list (a retry puts them back).
    function pickHost (): HostState | null {
      for (let k = 0; k < active.length;) {
        if (rr >= active.length) rr = 0
        const h = active[rr]
        if (!hasWork(h)) {
          h.listed = false
          active[rr] = active[active.length - 1]
          active.pop()
          continue
        }
        if (h.inflight < perHost) return h
        rr++
        k++
      }
      return null
    }

    function pump (): void {
      if (finished || paused || pumping) return
      pumping = true
      try {
        while (inflight < limit && !finished && !paused) {
          const h = pickHost()
          if (h === null) {
            if (nextHost >= hosts.length) break
            const n = hosts[nextHost++]
            if (!n.done && !n.listed) {
              n.listed = true
              active.push(n)
            }
            continue
          }
          const port = h.redo.length > 0 ? h.redo.pop() as number : ports[h.next++]
          h.inflight++
          inflight++
          stats.attempts++
          const lane = pickLane()
          lane.outstanding++
          const timeout = timeoutFor(h)
          if (timeout < h.announcedTimeout) h.announcedTimeout = timeout
          lane.send(h.index * ID_BASE + port, h.index, port, timeout)
        }
      } finally {
        pumping = false
        for (const lane of lanes) lane.flush()
      }
    }

    function localLane (): Lane {
      let ex: ConnectExecutor | null = null
      const lane: Lane = {
        ready: true,
        outstanding: 0,
        send (id, host, port, timeoutMs) { (ex as ConnectExecutor).start(id, host, port, timeoutMs) },
        flush () {},
        abortHost (host) { ex?.abortHost(host) },
        retime (host, timeoutMs) { ex?.retime(host, timeoutMs) },
        abortAll () { ex?.abortAll() },
        async close () {}
      }
      ex = createExecutor((id, outcome, rtt, localPort) => { onResult(lane, id, outcome, rtt, localPort) }, { connect: opts.connect })
      ex.setHosts(hostTable)
      stats.rawHandles = ex.raw
      return lane
    }

    function workerLane (): Lane {
      const worker = leaseWorker()
      const epoch = nextEpoch()
      let batch: number[] = []
      const sent = new Set<number>()
      let closed = false
      const lane: Lane = {
        ready: worker.online,
        outstanding: 0,
        send (id, host, port, timeoutMs) {
          sent.add(id)
          batch.push(id, host, port, timeoutMs)
        },
        flush () {
          if (batch.length === 0 || closed) return
          const msg = Float64Array.from(batch)
          batch = []
          worker.thread.postMessage(msg, [msg.buffer])
        },
        abortHost (host) { if (!closed) worker.thread.postMessage({ op: 'abortHost', host }) },
        retime (host, timeoutMs) {
          lane.flush()
          if (!closed) worker.thread.postMessage({ op: 'retime', host, timeoutMs })
        },
        abortAll () { if (!closed) worker.thread.postMessage({ op: 'abortAll' }) },
        async close () {
          if (closed) return
          closed = true
          detach()
          releaseWorker(worker)
        }
      }
      const onOnline = (): void => { lane.ready = true; pump() }
      const onMessage = (m: unknown): void => {
        if (!(m instanceof Float64Array) || m[0] !== epoch || closed) return
        pumping = true
        try {
          for (let i = 1; i + 3 < m.length; i += 4) {
            sent.delete(m[i])
            onResult(lane, m[i], m[i + 1], m[i + 2], m[i + 3])
          }
        } finally {
          pumping = false
        }
        pump()
      }
      const lost = (): void => {
        if (closed) return
        closed = true
        detach()
        if (finished) return
        // The thread is gone: hand what it held back to the queue, untried, and carry on without it.
        const idx = lanes.indexOf(lane)
        if (idx >= 0) lanes.splice(idx, 1)
        for (const id of sent) {
          inflight--
          const h = hosts[Math.floor(id / ID_BASE)]
          h.inflight--
          if (!h.done) requeue(h, id % ID_BASE)
        }
        sent.clear()
        lane.outstanding = 0
        pump()
      }
      const detach = (): void => {
        worker.thread.off('online', onOnline)
        worker.thread.off('message', onMessage)
        worker.thread.off('error', lost)
        worker.thread.off('exit', lost)
      }
      worker.thread.on('online', onOnline)
      worker.thread.on('message', onMessage)
      worker.thread.on('error', lost)
      worker.thread.on('exit', lost)
      worker.thread.postMessage({ op: 'hosts', hosts: hostTable, epoch })
      return lane
    }

    try {
      lanes.push(localLane())
      for (let i = 1; i < threads; i++) lanes.push(workerLane())
    } catch (err) {
      fail(err as Error)
      return
    }
    progress(true)
    pump()
  })
}
