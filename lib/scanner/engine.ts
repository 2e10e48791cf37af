// The scan pipeline shared by the worker and the CLI: expand targets, find which addresses are up
// (when there are several), connect-scan the TCP ports, identify the service on every open port and,
// when the template asks, UDP-scan the host (a UDP reply is its own service detection). Hosts flow
// through one at a time: a host's detection and UDP scan start as soon as its TCP scan ends, and it
// is reported as soon as both end.

import { setMaxListeners } from 'node:events'
import { detectService, type DetectOptions } from './detect'
import { runChecks, type CheckTarget, type PortChecks } from './checks/index'
import { discoverHosts, DISCOVERY_DEFAULTS } from './discovery'
import { abortReason, canonicalAddress, scanPorts, type PortScanHost } from './portscan'
import { scanUdp, type UdpScanHost, type UdpScanOptions } from './udpscan'
import { expandTargets, parseScope, type ExcludedAddress, type ExpandedHost, type Scope } from './targets'
import type { HostResult, PortResult } from '../domain/hosts'
import type { ScanProgress, Target, Template } from './types'
import type { ServiceInfo } from '../domain/services'

export interface ScanHostsOptions {
  template: Template
  signal?: AbortSignal
  onProgress?: (p: ScanProgress) => void
  /** Called once per host, when its port scan and service detection are both done. */
  onHost?: (h: HostResult) => void
  /** At the end, how long each stage took (wall time; detection overlaps the port scan, host by host). */
  onStages?: (s: ScanStages) => void
  /** Connects in flight for the port scan (global) and per host. */
  concurrency?: number
  perHostConcurrency?: number
  /** Threads opening sockets for the port scan (see scanPorts). */
  threads?: number
  /** Service detections in flight at once, across hosts. */
  detectConcurrency?: number
  /** Budget of one port's detection; the detection level's default when unset. */
  detectTimeoutMs?: number
  /** Replaces service detection (tests of the pipeline itself). */
  detect?: (opts: DetectOptions) => Promise<ServiceInfo>
  /** Replaces the exposure checks (tests of the pipeline itself). */
  checks?: (target: CheckTarget) => Promise<PortChecks>
  /**
   * The templates (lib/templates/) of a port, run beside its exposure checks when the template runs checks: their
   * hits are exposures too, and the port is concluded only when both concluded.
   */
  templates?: (target: CheckTarget) => Promise<PortChecks>
  /**
   * Host discovery before the port scan when there are several addresses (default true): addresses
   * that answer no discovery connect are reported down without a port scan. false scans every address.
   */
  discovery?: boolean
  /** Run the intrusive checks too (default logins); off unless the scan asks. */
  intrusive?: boolean
  /** Discovery's connect timeout (see discovery.ts). */
  discoveryTimeoutMs?: number
  /** Tuning of the UDP scan (timeouts, retries, probes). */
  udp?: Omit<UdpScanOptions, 'hosts' | 'ports' | 'signal' | 'onHost' | 'onProgress'>
}

export interface RunScanOptions extends ScanHostsOptions {
  maxHosts: number
  scope?: Scope
  resolve?: (name: string) => Promise<string[]>
}

export interface RunScanResult {
  hosts: HostResult[]
  /** Resolved addresses that the scope kept out of the scan, with the reason. */
  excluded: ExcludedAddress[]
}

export const ENGINE_DEFAULTS = {
  detectConcurrency: 32,
  /** Hosts UDP-scanned at once (each with the UDP scan's own per-host socket bound). */
  udpHosts: 4
}

/** A counting semaphore: at most `n` holders at once, served in arrival order. */
function limiter (n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0
  const waiting: (() => void)[] = []
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= n) await new Promise<void>((resolve) => waiting.push(resolve))
    active++
    try {
      return await fn()
    } finally {
      active--
      waiting.shift()?.()
    }
  }
}

// A function, not an inline test: the compiler narrows `signal.aborted` to false after the first check.
function aborted (signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true
}


export interface ScanStages {
  /** Host discovery, 0 when it did not run. */
  discoveryMs: number
  /** From the end of discovery to the last port of the TCP (and UDP) port scan. */
  portScanMs: number
  /** From the end of the port scan to the last detection and check. */
  detectionMs: number
}

/**
 * Port-scan the hosts with the template's ports, then detect services on the open ports unless the
 * template says 'none'. Resolves with one HostResult per host, in input order; rejects with the
 * signal's reason when cancelled.
 */
export async function scanHosts (hosts: ExpandedHost[], opts: ScanHostsOptions): Promise<HostResult[]> {
  const { template, signal } = opts
  if (signal?.aborted === true) throw abortReason(signal)
  const detect = opts.detect ?? detectService
  const check = opts.checks ?? runChecks
  const level = template.detection
  const limit = limiter(Math.max(1, opts.detectConcurrency ?? ENGINE_DEFAULTS.detectConcurrency))
  const udpLimit = limiter(ENGINE_DEFAULTS.udpHosts)
  const udpPorts = template.udp ? [...new Set(template.udpPorts)] : []
  const tcpPorts = new Set(template.ports).size
  // Several entries may name one address (callers other than expandTargets do not dedupe).
  const byAddress = new Map<string, number[]>()
  const addresses = hosts.map((h) => canonicalAddress(h.address).address)
  addresses.forEach((a, i) => byAddress.set(a, [...(byAddress.get(a) ?? []), i]))
  const results: HostResult[] = new Array(hosts.length)
  const pending: Promise<void>[] = []
  const perHost = tcpPorts + udpPorts.length
  const progress: ScanProgress = { hostsTotal: hosts.length, hostsDone: 0, portsTotal: byAddress.size * perHost, portsDone: 0 }
  const emit = (): void => { opts.onProgress?.({ ...progress }) }
  // Ports settled outside the TCP scan's own count: UDP ports, and every port of an address found down.
  let tcpDone = 0
  let extraDone = 0
  const advance = (): void => {
    const done = Math.min(progress.portsTotal, tcpDone + extraDone)
    if (done > progress.portsDone) {
      progress.portsDone = done
      emit()
    }
  }

  // Detection runs inside a child controller so a failure elsewhere can stop it too.
  const inner = new AbortController()
  // Every detection in flight listens on this one signal (several sockets and timers each): that many
  // listeners are expected, not a leak.
  setMaxListeners(8 * (opts.detectConcurrency ?? ENGINE_DEFAULTS.detectConcurrency) + 512, inner.signal)
  const onAbort = (): void => inner.abort(signal?.reason)
  signal?.addEventListener('abort', onAbort, { once: true })

  const finishHost = (scanned: PortScanHost, services: Map<number, ServiceInfo>, udp: UdpScanHost | null, checked = new Map<number, PortChecks>()): void => {
    const ports: PortResult[] = []
    const up = scanned.up || udp?.up === true
    if (up) {
      for (const port of scanned.open) {
        const r: PortResult = { port, protocol: 'tcp', state: 'open' }
        const s = services.get(port)
        if (s !== undefined) r.service = s
        const c = checked.get(port)
        if (c !== undefined) {
          r.exposures = c.exposures
          r.checked = c.concluded
        }
        ports.push(r)
      }
      for (const port of scanned.filtered) ports.push({ port, protocol: 'tcp', state: 'filtered' })
      for (const o of udp?.open ?? []) ports.push(level === 'none' ? { port: o.port, protocol: 'udp', state: 'open' } : { port: o.port, protocol: 'udp', state: 'open', service: o.service })
      for (const port of udp?.openFiltered ?? []) ports.push({ port, protocol: 'udp', state: 'open|filtered' })
      // TCP before UDP on one number, as nmap lists them.
      ports.sort((a, b) => a.port - b.port || (a.protocol === b.protocol ? 0 : a.protocol === 'tcp' ? -1 : 1))
    }
    const closedCount = scanned.closedCount + (udp?.closedCount ?? 0)
    const rttMs = scanned.rttMs ?? udp?.rttMs
    // A host that never answered tells nothing port by port: its silence is not listed.
    for (const index of byAddress.get(scanned.address) ?? []) {
      const result: HostResult = { address: scanned.address, hostnames: [...hosts[index].hostnames], up, ports, closedCount }
      if (rttMs !== undefined) result.rttMs = rttMs
      results[index] = result
      if (inner.signal.aborted) return
      progress.hostsDone++
      opts.onHost?.(result)
    }
    emit()
  }

  /** The UDP scan of one host: hosts the TCP scan (or discovery) found up, or all when no TCP port was scanned. */
  const udpScan = async (scanned: PortScanHost): Promise<UdpScanHost | null> => {
    if (udpPorts.length === 0) return null
    if (!scanned.up && tcpPorts > 0) {
      extraDone += udpPorts.length
      advance()
      return null
    }
    let counted = 0
    const [r] = await udpLimit(async () => await scanUdp({
      ...opts.udp,
      hosts: [scanned.address],
      ports: udpPorts,
      signal: inner.signal,
      onProgress: (p) => {
        extraDone += p.portsDone - counted
        counted = p.portsDone
        advance()
      }
    }))
    return r
  }

  const onPortsDone = (scanned: PortScanHost): void => {
    const udp = udpScan(scanned)
    if (level === 'none' || scanned.open.length === 0) {
      pending.push(udp.then((u) => { finishHost(scanned, new Map(), u) }))
      return
    }
    const services = new Map<number, ServiceInfo>()
    const checked = new Map<number, PortChecks>()
    // The names the scan was given for this address: the certificate check holds the certificate to them.
    const hostnames = [...new Set((byAddress.get(scanned.address) ?? []).flatMap((i) => hosts[i].hostnames))]
    const detected = Promise.all(scanned.open.map(async (port) => await limit(async () => {
      if (inner.signal.aborted) return
      let info: ServiceInfo
      try {
        info = await detect({ host: scanned.address, port, level, signal: inner.signal, timeoutMs: opts.detectTimeoutMs })
      } catch {
        info = { service: 'unknown', cpe: [] }
      }
      services.set(port, info)
      if (template.checks && !inner.signal.aborted) {
        try {
          const target = { host: scanned.address, port, service: info, hostnames, signal: inner.signal, intrusive: opts.intrusive === true }
          const [c, t] = await Promise.all([check(target), opts.templates?.(target) ?? null])
          checked.set(port, t === null ? c : { exposures: [...c.exposures, ...t.exposures], concluded: c.concluded && t.concluded })
        } catch {
          checked.set(port, { exposures: [], concluded: false })
        }
      }
    })))
    pending.push(Promise.all([detected, udp]).then(([, u]) => { finishHost(scanned, services, u, checked) }))
  }

  const started = performance.now()
  let discovered = started
  try {
    let scanList = [...byAddress.keys()]
    if (opts.discovery !== false && scanList.length >= DISCOVERY_DEFAULTS.minHosts && perHost > 0) {
      const up = await discoverHosts({
        hosts: scanList,
        timeoutMs: opts.discoveryTimeoutMs,
        concurrency: opts.concurrency,
        threads: opts.threads,
        signal: inner.signal,
        onHost: (address, isUp) => {
          if (isUp) return
          // Down: reported as such at once, every port counted done.
          extraDone += perHost
          advance()
          finishHost({ address, up: false, open: [], filtered: [], closedCount: 0 }, new Map(), null)
        }
      })
      scanList = scanList.filter((a) => up.has(a))
      discovered = performance.now()
    }
    if (tcpPorts === 0) {
      // UDP only: every address goes straight to the UDP scan.
      for (const address of scanList) onPortsDone({ address, up: false, open: [], filtered: [], closedCount: 0 })
    } else if (scanList.length > 0) {
      await scanPorts({
        hosts: scanList,
        ports: template.ports,
        concurrency: opts.concurrency,
        perHostConcurrency: opts.perHostConcurrency,
        threads: opts.threads,
        signal: inner.signal,
        onProgress: (p) => {
          tcpDone = p.portsDone
          advance()
        },
        onHost: onPortsDone
      })
    }
    const scanned = performance.now()
    await Promise.all(pending)
    if (aborted(signal)) throw abortReason(signal as AbortSignal)
    opts.onStages?.({ discoveryMs: discovered - started, portScanMs: scanned - discovered, detectionMs: performance.now() - scanned })
    return results
  } catch (err) {
    inner.abort(err)
    throw aborted(signal) ? abortReason(signal as AbortSignal) : err
  } finally {
    signal?.removeEventListener('abort', onAbort)
  }
}

/** expandTargets then scanHosts: the whole scan of a request's targets. */
export async function runScan (targets: Target[], opts: RunScanOptions): Promise<RunScanResult> {
  const { hosts, excluded } = await expandTargets(targets, {
    maxHosts: opts.maxHosts,
    scope: opts.scope ?? parseScope('', ''),
    resolve: opts.resolve
  })
  return { hosts: await scanHosts(hosts, opts), excluded }
}
