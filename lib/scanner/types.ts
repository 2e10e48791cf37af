// Shapes shared by the scanner engine, the scan worker and the API. No Fastify imports here.

import type { TemplateHit } from '../templates/types'

export type TargetType = 'single_ip' | 'ip_range' | 'cidr' | 'dns_name'

export interface Target {
  value: string
  type: TargetType
}

import type { TemplateName } from '../vocabulary'

export type { TemplateName }

/** How much service detection a template asks for. */
export type DetectionLevel = 'none' | 'light' | 'full'

export interface Template {
  name: TemplateName
  ports: number[]
  /** UDP ports scanned when `udp` is set (the template's default list, or the scan's own). */
  udpPorts: number[]
  /** Whether the scan covers UDP too (off by default: silent UDP ports cost retries and timeouts). */
  udp: boolean
  detection: DetectionLevel
  /** Whether detected products are matched against the NVD index. */
  nvd: boolean
  /**
   * Whether the exposure checks (lib/scanner/checks/catalogue.ts) run on the detected services. Some log in or
   * read data to prove an exposure (read-only): a template without them never does.
   */
  checks: boolean
}

/** `open|filtered`: a UDP port that neither answered nor was refused (a firewall, or a server that ignored the request). */
export type PortState = 'open' | 'closed' | 'filtered' | 'open|filtered'

export type Transport = 'tcp' | 'udp'

export interface TlsInfo {
  protocol?: string
  subject?: string
  issuer?: string
  notBefore?: string
  notAfter?: string
  selfSigned?: boolean
}

/** What service detection learned about one open port. */
export interface ServiceInfo {
  /** Protocol name, lower case: ssh, http, https, redis, postgresql, mysql, amqp, mqtt, nats, … or 'unknown'. */
  service: string
  product?: string
  version?: string
  /**
   * The wire shows only the leading parts of the version (InspIRCd's major release, Varnish's major.minor in
   * `Via`, CUPS's major.minor in `Server`): a range bound that begins with them cannot be decided.
   */
  versionPrefix?: boolean
  extraInfo?: string
  /** Distribution packaging tag seen in the banner, e.g. 'deb12u3' or 'Ubuntu'. */
  distro?: string
  /** Raw banner or reply, bounded in size, printable. */
  banner?: string
  /** CPE 2.3 formatted strings naming the product (several when NVD lists it under several vendors). */
  cpe: string[]
  tls?: TlsInfo
}

/** An exposure an exposure check proved on a port: the check's catalogue id and what the server said. */
export interface PortExposure {
  check: string
  evidence: string
  /** Set when a template (lib/templates/) proved it: `check` is then the template's id. */
  template?: TemplateHit
}

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

export interface ScanProgress {
  hostsTotal: number
  hostsDone: number
  portsTotal: number
  portsDone: number
}
