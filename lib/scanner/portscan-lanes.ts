// The lanes of the port scan: where connects are made. The local lane runs the socket executor
// (portscan-thread.cjs) in this thread; a worker lane runs the same executor in a pooled worker
// thread and talks to it in batches of Float64Arrays. Both report every attempt's outcome back
// through the same sink, so the scheduler cannot tell them apart.

import * as path from 'node:path'
import { Worker } from 'node:worker_threads'
import { createExecutor, type ConnectExecutor, type ConnectFn } from './portscan-thread.cjs'

export interface Lane {
  /** Can take attempts now (a worker lane is not until its thread is online). */
  ready: boolean
  /** Attempts sent and not yet answered. */
  outstanding: number
  send (id: number, host: number, port: number, timeoutMs: number): void
  flush (): void
  abortHost (host: number): void
  retime (host: number, timeoutMs: number): void
  abortAll (): void
  close (): Promise<void>
}

export interface LaneSink {
  /** One attempt's outcome (the lane has already counted it off `outstanding`). */
  result (lane: Lane, id: number, outcome: number, rttUs: number, localPort: number): void
  /** Run a burst of results together (one scheduling pass after all of them). */
  batch (fn: () => void): void
  /** The lane became ready. */
  ready (lane: Lane): void
  /** The lane's thread died: these attempts were never answered and must be made again. */
  lost (lane: Lane, ids: number[]): void
}

export interface HostEntry { address: string, family: number }

export interface LocalLane extends Lane {
  /** Whether the executor uses raw socket handles (faster) rather than net.Socket. */
  readonly raw: boolean
}

/** A lane in this thread. `connect` replaces the socket layer (tests). */
export function localLane (sink: LaneSink, hosts: HostEntry[], connect?: ConnectFn): LocalLane {
  let ex: ConnectExecutor | null = null
  const lane: LocalLane = {
    ready: true,
    outstanding: 0,
    get raw () { return ex?.raw ?? false },
    send (id, host, port, timeoutMs) { (ex as ConnectExecutor).start(id, host, port, timeoutMs) },
    flush () {},
    abortHost (host) { ex?.abortHost(host) },
    retime (host, timeoutMs) { ex?.retime(host, timeoutMs) },
    abortAll () { ex?.abortAll() },
    async close () {}
  }
  ex = createExecutor((id, outcome, rtt, localPort) => {
    lane.outstanding--
    sink.result(lane, id, outcome, rtt, localPort)
  }, { connect })
  ex.setHosts(hosts)
  return lane
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
/** Idle threads kept at most. */
export const MAX_IDLE_WORKERS = 8
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
  if (idleWorkers.length >= MAX_IDLE_WORKERS) {
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

/** Threads idle in the pool (tests). */
export function idleWorkerCount (): number {
  return idleWorkers.filter((w) => !w.dead).length
}

export interface WorkerLane extends Lane {
  /** The thread behind the lane (tests). */
  readonly thread: Worker
}

/**
 * A lane in a pooled worker thread. Messages carry an epoch so a thread reused from an earlier
 * scan cannot report that scan's attempts into this one.
 */
export function workerLane (sink: LaneSink, hosts: HostEntry[]): WorkerLane {
  const worker = leaseWorker()
  const epoch = nextEpoch()
  let batch: number[] = []
  const sent = new Set<number>()
  let closed = false
  const lane: WorkerLane = {
    thread: worker.thread,
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
  const onOnline = (): void => { lane.ready = true; sink.ready(lane) }
  const onMessage = (m: unknown): void => {
    if (!(m instanceof Float64Array) || m[0] !== epoch || closed) return
    sink.batch(() => {
      for (let i = 1; i + 3 < m.length; i += 4) {
        sent.delete(m[i])
        lane.outstanding--
        sink.result(lane, m[i], m[i + 1], m[i + 2], m[i + 3])
      }
    })
  }
  const lost = (): void => {
    if (closed) return
    closed = true
    detach()
    const ids = [...sent]
    sent.clear()
    lane.outstanding = 0
    sink.lost(lane, ids)
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
  worker.thread.postMessage({ op: 'hosts', hosts, epoch })
  return lane
}
