// Hosts and their ports: what a scan hands on (HostResult, PortResult), and a host as the results store keeps it
// across scans (HostRecord, HostPort).
import type { PortExposure, ServiceInfo, TlsInfo } from './services'

/** `open|filtered`: a UDP port that neither answered nor was refused (a firewall, or a server that ignored the request). */
export type PortState = 'open' | 'closed' | 'filtered' | 'open|filtered'

export type Transport = 'tcp' | 'udp'

export interface PortResult {
  port: number
  protocol: Transport
  state: PortState
  service?: ServiceInfo
  /** What the exposure checks proved (when the template runs them). */
  exposures?: PortExposure[]
  /** The exposure checks ran and every one reached a conclusion: a check not in `exposures` found nothing. */
  checked?: boolean
}

export interface HostResult {
  address: string
  hostnames: string[]
  up: boolean
  /** Smoothed connect round-trip time in milliseconds, when measured. */
  rttMs?: number
  /** Open and filtered ports (closed ones are only counted). */
  ports: PortResult[]
  closedCount: number
}

/** A port of a stored host: the scan's PortResult with the service's fields laid flat. */
export interface HostPort extends Omit<PortResult, 'service'> {
  service?: string
  product?: string
  version?: string
  extraInfo?: string
  distro?: string
  cpe?: string[]
  banner?: string
  tls?: TlsInfo
}

export interface HostRecord {
  address: string
  hostnames: string[]
  up: boolean
  firstSeen: string
  lastSeen: string
  lastScanId: string
  rttMs?: number
  ports: HostPort[]
  findingsCount: number
  maxSeverity: string | null
  /** The host's tags (lib/tags.ts), in code-unit order; set by users, added to by scans, never dropped by one. */
  tags: string[]
}
