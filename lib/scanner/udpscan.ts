// UDP scan without raw sockets. A connected UDP socket (`connect()` on a datagram socket) is told by
// the kernel when an ICMP port-unreachable comes back for it: the next receive fails with
// ECONNREFUSED. So each port gets its own connected socket and its protocol's request (an empty
// datagram where no probe knows the port), and reads:
// - a reply: open, and the reply is what identifies the service (the probe registry reads it);
// - ECONNREFUSED: closed;
// - nothing after the retries: open|filtered (a firewall drops it, or a server ignored the request).
// The wait per try follows the host's measured round trip (replies and refusals), as the TCP scan does.
// Hosts that sit behind ICMP rate limits (Linux answers one port-unreachable per second per peer,
// loopback excepted) show closed ports as open|filtered once their burst is spent.

import dgram from 'node:dgram'
import { isIP } from 'node:net'
import { cpesFor } from '../cpe/aliases'
import { printable } from './probes/common'
import { UDP_REGISTRY, type UdpRegistry } from './probes/udp/index'
import { RttEstimate, TimeoutModel } from './portscan-rtt'
import type { ServiceInfo } from '../domain/services'

export interface UdpOpenPort {
  port: number
  service: ServiceInfo
}

export interface UdpScanHost {
  address: string
  /** Some port answered (a reply or a port-unreachable). */
  up: boolean
  rttMs?: number
  open: UdpOpenPort[]
  openFiltered: number[]
  closedCount: number
}

export interface UdpScanProgress {
  portsDone: number
  portsTotal: number
}

export interface UdpScanOptions {
  hosts: string[]
  ports: number[]
  /** Sockets in flight across all hosts. */
  concurrency?: number
  /** Sockets in flight per host. */
  perHostConcurrency?: number
  initialTimeoutMs?: number
  minTimeoutMs?: number
  maxTimeoutMs?: number
  /** Requests sent again after a silent wait before a port is called open|filtered. */
  retries?: number
  signal?: AbortSignal
  onHost?: (h: UdpScanHost) => void
  onProgress?: (p: UdpScanProgress) => void
  /** The probes (tests); the UDP registry by default. */
  registry?: UdpRegistry
}

export const UDPSCAN_DEFAULTS = {
  concurrency: 256,
  perHostConcurrency: 64,
  initialTimeoutMs: 1000,
  minTimeoutMs: 250,
  maxTimeoutMs: 2000,
  retries: 2
}

type Outcome = { kind: 'open', reply: Buffer, rttMs: number } | { kind: 'closed', rttMs: number } | { kind: 'silent' }

interface HostState {
  result: UdpScanHost
  rtt: RttEstimate
  remaining: number
  inflight: number
  next: number
}

/** One port: a connected socket, the request sent up to 1 + retries times, each followed by a wait. */
async function probePort (host: string, port: number, payload: Buffer, tries: number, waitMs: () => number, signal: AbortSignal): Promise<Outcome> {
  return await new Promise<Outcome>((resolve) => {
    const sock = dgram.createSocket(isIP(host) === 6 ? 'udp6' : 'udp4')
    let done = false
    let timer: NodeJS.Timeout | undefined
    let sentAt = 0
    let left = tries
    const finish = (o: Outcome): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      try { sock.close() } catch {}
      resolve(o)
    }
    const onAbort = (): void => finish({ kind: 'silent' })
    const send = (): void => {
      if (done) return
      if (left-- <= 0) return finish({ kind: 'silent' })
      sentAt = performance.now()
      try {
        sock.send(payload, (err) => {
          if ((err as NodeJS.ErrnoException | null)?.code === 'ECONNREFUSED') finish({ kind: 'closed', rttMs: performance.now() - sentAt })
        })
      } catch {
        return finish({ kind: 'silent' })
      }
      timer = setTimeout(send, waitMs())
    }
    sock.on('message', (msg) => finish({ kind: 'open', reply: msg, rttMs: performance.now() - sentAt }))
    let connected = false
    sock.on('error', (err: NodeJS.ErrnoException) => {
      // A port-unreachable for this socket; other errors (no route) are a silent try, and a socket
      // that could not even connect is silent at once.
      if (err.code === 'ECONNREFUSED') finish({ kind: 'closed', rttMs: performance.now() - sentAt })
      else if (!connected) finish({ kind: 'silent' })
    })
    signal.addEventListener('abort', onAbort, { once: true })
    sock.connect(port, host, () => {
      connected = true
      send()
    })
  })
}

function serviceOf (registry: UdpRegistry, reply: Buffer, port: number): ServiceInfo {
  const m = registry.recognise(reply, port)
  const banner = printable(reply)
  if (!m) return { service: 'unknown', cpe: [], banner }
  return { ...m, cpe: m.product ? cpesFor(m.product, m.version) : [], banner }
}

/**
 * UDP-scan every port of every host. Resolves with one entry per host in input order (each also
 * given to `onHost` as soon as its ports are done); rejects with the signal's reason when aborted.
 */
export async function scanUdp (opts: UdpScanOptions): Promise<UdpScanHost[]> {
  const registry = opts.registry ?? UDP_REGISTRY
  const ports = [...new Set(opts.ports)]
  for (const p of ports) if (!Number.isInteger(p) || p < 1 || p > 65535) throw new RangeError(`UDP port ${p} is not in 1..65535`)
  const signal = opts.signal ?? new AbortController().signal
  const concurrency = Math.max(1, opts.concurrency ?? UDPSCAN_DEFAULTS.concurrency)
  const perHost = Math.max(1, opts.perHostConcurrency ?? UDPSCAN_DEFAULTS.perHostConcurrency)
  const minMs = opts.minTimeoutMs ?? UDPSCAN_DEFAULTS.minTimeoutMs
  const model = new TimeoutModel({
    initialMs: opts.initialTimeoutMs ?? UDPSCAN_DEFAULTS.initialTimeoutMs,
    minMs,
    maxMs: Math.max(minMs, opts.maxTimeoutMs ?? UDPSCAN_DEFAULTS.maxTimeoutMs)
  })
  const tries = 1 + Math.max(0, opts.retries ?? UDPSCAN_DEFAULTS.retries)
  const payloads = new Map(ports.map((p) => [p, registry.forPort(p)?.request({ host: '', port: p }) ?? Buffer.alloc(0)]))
  const hosts: HostState[] = opts.hosts.map((address) => ({
    result: { address, up: false, open: [], openFiltered: [], closedCount: 0 },
    rtt: new RttEstimate(),
    remaining: ports.length,
    inflight: 0,
    next: 0
  }))
  const progress: UdpScanProgress = { portsDone: 0, portsTotal: hosts.length * ports.length }
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('The scan was cancelled')

  const finishHost = (h: HostState): void => {
    const r = h.result
    r.open.sort((a, b) => a.port - b.port)
    r.openFiltered.sort((a, b) => a - b)
    if (h.rtt.samples > 0) r.rttMs = Math.round(h.rtt.srtt * 100) / 100
    opts.onHost?.(r)
  }
  for (const h of hosts) if (h.remaining === 0) finishHost(h)

  return await new Promise<UdpScanHost[]>((resolve, reject) => {
    let inflight = 0
    let hostCursor = 0
    let settled = false
    const onAbort = (): void => {
      if (settled) return
      settled = true
      reject(signal.reason instanceof Error ? signal.reason : Object.assign(new Error('The scan was cancelled'), { name: 'AbortError' }))
    }
    signal.addEventListener('abort', onAbort, { once: true })
    const pump = (): void => {
      if (settled) return
      // Hosts are taken in order, several at once only when one host cannot use all the sockets.
      for (let i = hostCursor; i < hosts.length && inflight < concurrency; i++) {
        const h = hosts[i]
        while (h.next < ports.length && h.inflight < perHost && inflight < concurrency) {
          const port = ports[h.next++]
          h.inflight++
          inflight++
          const wait = (): number => model.timeoutFor(h.rtt)
          void probePort(h.result.address, port, payloads.get(port) as Buffer, tries, wait, signal).then((o) => {
            h.inflight--
            inflight--
            if (settled) return
            if (o.kind === 'open') {
              h.result.up = true
              model.sample(h.rtt, o.rttMs * 1000)
              h.result.open.push({ port, service: serviceOf(registry, o.reply, port) })
            } else if (o.kind === 'closed') {
              h.result.up = true
              model.sample(h.rtt, o.rttMs * 1000)
              h.result.closedCount++
            } else {
              h.result.openFiltered.push(port)
            }
            progress.portsDone++
            opts.onProgress?.({ ...progress })
            if (--h.remaining === 0) finishHost(h)
            if (progress.portsDone === progress.portsTotal) {
              settled = true
              signal.removeEventListener('abort', onAbort)
              resolve(hosts.map((x) => x.result))
              return
            }
            pump()
          })
        }
        if (i === hostCursor && h.next >= ports.length) hostCursor++
      }
    }
    if (progress.portsTotal === 0) {
      settled = true
      signal.removeEventListener('abort', onAbort)
      resolve(hosts.map((x) => x.result))
      return
    }
    pump()
  })
}
