// TCP connect scan. The policy lives in portscan-scheduler.ts (which port next, what an outcome means,
// when a host is down) with its connect timer in portscan-rtt.ts; the sockets live in
// portscan-thread.cjs, driven through the lanes of portscan-lanes.ts: in this thread and, for big
// scans, in worker threads too, because on loopback and fast LANs the kernel's per-connect work is
// the bottleneck and a second core halves it. This file wires them together.

import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import ipaddr from 'ipaddr.js'
import { localLane, workerLane, type Lane, type LaneSink } from './portscan-lanes'
import { HostScheduler, type Dispatcher, type PortScanHost, type PortScanProgress } from './portscan-scheduler'
import { rawAvailable, type ConnectFn } from './portscan-thread.cjs'

export type { ConnectFn } from './portscan-thread.cjs'
export type { PortScanHost, PortScanProgress } from './portscan-scheduler'

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

/**
 * Connect-scan every port of every host. Open = connected, closed = refused, filtered = no answer
 * after the retries, host down = unreachable before it ever answered. Resolves with one entry per
 * host in input order; rejects with the signal's reason when aborted, or when sockets cannot be
 * opened at all for a long time.
 */
export async function scanPorts (opts: PortScanOptions): Promise<PortScanHost[]> {
  const t0 = performance.now()
  const ports = validPorts(opts.ports)
  const hostTable = opts.hosts.map((a) => canonicalAddress(a))
  if (opts.signal?.aborted === true) throw abortReason(opts.signal)

  const maxConcurrency = Math.max(1, Math.min(opts.concurrency ?? PORTSCAN_DEFAULTS.concurrency, concurrencyCap()))
  const minTimeout = opts.minTimeoutMs ?? PORTSCAN_DEFAULTS.minTimeoutMs
  const totalAttempts = hostTable.length * ports.length
  const threads = opts.connect !== undefined || !rawAvailable || totalAttempts < PORTSCAN_DEFAULTS.threadMinAttempts
    ? 1
    : Math.max(1, Math.min(opts.threads ?? availableParallelism() + 1, PORTSCAN_DEFAULTS.maxThreads))
  const stats: PortScanStats = {
    attempts: 0, timeouts: 0, selfConnects: 0, resourceBackoffs: 0, threads, rawHandles: false,
    concurrency: maxConcurrency, wallMs: 0
  }
  if (hostTable.length === 0 || ports.length === 0) {
    opts.onProgress?.({ portsDone: 0, portsTotal: 0, hostsDone: hostTable.length, hostsTotal: hostTable.length })
    return hostTable.map((h) => ({ address: h.address, up: false, open: [], filtered: [], closedCount: 0 }))
  }

  return await new Promise<PortScanHost[]>((resolve, reject) => {
    const lanes: Lane[] = []
    let closed = false
    const onAbort = (): void => { fail(abortReason(opts.signal as AbortSignal)) }

    function teardown (): void {
      if (closed) return
      closed = true
      scheduler.stop()
      opts.signal?.removeEventListener('abort', onAbort)
      for (const lane of lanes) lane.abortAll()
      for (const lane of lanes) void lane.close()
    }

    function fail (err: Error): void {
      if (closed) return
      teardown()
      reject(err)
    }

    const scheduler = new HostScheduler({
      hosts: hostTable.map((h) => h.address),
      ports,
      maxConcurrency,
      perHostConcurrency: Math.max(1, opts.perHostConcurrency ?? PORTSCAN_DEFAULTS.perHostConcurrency),
      timeouts: {
        initialMs: opts.initialTimeoutMs ?? PORTSCAN_DEFAULTS.initialTimeoutMs,
        minMs: minTimeout,
        maxMs: Math.max(minTimeout, opts.maxTimeoutMs ?? PORTSCAN_DEFAULTS.maxTimeoutMs)
      },
      retries: Math.max(0, opts.retries ?? PORTSCAN_DEFAULTS.retries),
      onHost: opts.onHost,
      onProgress: opts.onProgress,
      onDone: (results) => {
        Object.assign(stats, scheduler.counters)
        stats.wallMs = Math.round(performance.now() - t0)
        teardown()
        opts.onStats?.(stats)
        resolve(results)
      },
      onFail: fail
    })

    // Attempts go to the ready lane with the fewest outstanding (the local lane is always ready).
    const dispatcher: Dispatcher = {
      send (id, host, port, timeoutMs) {
        let best = lanes[0]
        for (let i = 1; i < lanes.length; i++) {
          const l = lanes[i]
          if (l.ready && l.outstanding < best.outstanding) best = l
        }
        best.outstanding++
        best.send(id, host, port, timeoutMs)
      },
      flush () { for (const lane of lanes) lane.flush() },
      retime (host, timeoutMs) { for (const lane of lanes) lane.retime(host, timeoutMs) },
      abortHost (host) { for (const lane of lanes) lane.abortHost(host) }
    }

    const sink: LaneSink = {
      result (_lane, id, outcome, rttUs, localPort) { scheduler.onResult(id, outcome, rttUs, localPort) },
      batch (fn) { scheduler.batch(fn) },
      ready () { scheduler.pump() },
      lost (lane, ids) {
        if (closed) return
        // The thread is gone: hand what it held back to the queue, untried, and carry on without it.
        const idx = lanes.indexOf(lane)
        if (idx >= 0) lanes.splice(idx, 1)
        for (const id of ids) scheduler.giveBack(id)
        scheduler.pump()
      }
    }

    opts.signal?.addEventListener('abort', onAbort, { once: true })
    try {
      const local = localLane(sink, hostTable, opts.connect)
      lanes.push(local)
      stats.rawHandles = local.raw
      for (let i = 1; i < threads; i++) lanes.push(workerLane(sink, hostTable))
    } catch (err) {
      fail(err as Error)
      return
    }
    scheduler.start(dispatcher)
  })
}
