// What a scan is asked to do (targets, templates) and how far it has come, shared by the scanner engine, the scan
// worker and the API. What it finds (hosts, ports, services) is lib/domain/.

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

export interface ScanProgress {
  hostsTotal: number
  hostsDone: number
  portsTotal: number
  portsDone: number
}
