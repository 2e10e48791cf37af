// Host discovery before the port scan: a few TCP connects per address to ports that are commonly
// open, where an accepted or a refused connect both mean the host is up. A dead address then
// costs one short timeout instead of the port scan's two per port. No raw sockets: like nmap's
// unprivileged discovery, a host that drops every one of these ports reads down (the scan option
// `discovery: false` scans every address anyway, as nmap's -Pn does).

import { scanPorts, type PortScanOptions } from './portscan'

/** Ports tried on each address: the usual web, remote-access, file-sharing and mail services. */
export const DISCOVERY_PORTS: readonly number[] = Object.freeze([80, 443, 22, 445, 3389, 139, 21, 25])

export const DISCOVERY_DEFAULTS = {
  /** One fixed wait: a live host far away must not be called down because near ones answered fast. */
  timeoutMs: 1000,
  /** Below this many addresses discovery costs more than it saves. */
  minHosts: 2
}

export interface DiscoveryOptions {
  hosts: string[]
  ports?: readonly number[]
  timeoutMs?: number
  concurrency?: number
  threads?: number
  signal?: AbortSignal
  /** Called per address as soon as it is settled. */
  onHost?: (address: string, up: boolean) => void
  /** Replaces the socket layer (tests only). */
  connect?: PortScanOptions['connect']
}

/** Which of `hosts` answered a connect on any discovery port; resolves with the up addresses in input order. */
export async function discoverHosts (opts: DiscoveryOptions): Promise<Set<string>> {
  const timeout = opts.timeoutMs ?? DISCOVERY_DEFAULTS.timeoutMs
  const up = new Set<string>()
  await scanPorts({
    hosts: opts.hosts,
    ports: [...(opts.ports ?? DISCOVERY_PORTS)],
    retries: 0,
    initialTimeoutMs: timeout,
    minTimeoutMs: timeout,
    maxTimeoutMs: timeout,
    concurrency: opts.concurrency,
    threads: opts.threads,
    signal: opts.signal,
    connect: opts.connect,
    onHost: (h) => {
      if (h.up) up.add(h.address)
      opts.onHost?.(h.address, h.up)
    }
  })
  return up
}
