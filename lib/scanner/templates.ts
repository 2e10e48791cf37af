// Scan templates: which ports, how much service detection, whether findings go to the NVD matcher, whether the
// exposure checks run (discovery runs none: it neither identifies services nor logs in anywhere).

import { allPorts, parsePortList, TOP_100, TOP_1000, UDP_COMMON, UDP_MORE, withExtras } from './ports'
import type { Template } from './types'
import { TEMPLATE_NAMES, type TemplateName } from '../vocabulary'

const QUICK_PORTS = Object.freeze(withExtras(TOP_100))
const STANDARD_PORTS = Object.freeze(withExtras(TOP_1000))
const QUICK_UDP = UDP_COMMON as number[]
const MORE_UDP = UDP_MORE as number[]

// Port arrays are frozen and shared: callers that need their own list copy it (getTemplate does).
export const TEMPLATES: Readonly<Record<TemplateName, Readonly<Template>>> = Object.freeze({
  quick: Object.freeze({ name: 'quick', ports: QUICK_PORTS as number[], udpPorts: QUICK_UDP, udp: false, detection: 'light', nvd: true, checks: true }),
  standard: Object.freeze({ name: 'standard', ports: STANDARD_PORTS as number[], udpPorts: MORE_UDP, udp: false, detection: 'full', nvd: true, checks: true }),
  full: Object.freeze({ name: 'full', ports: Object.freeze(allPorts()) as number[], udpPorts: MORE_UDP, udp: false, detection: 'full', nvd: true, checks: true }),
  discovery: Object.freeze({ name: 'discovery', ports: QUICK_PORTS as number[], udpPorts: QUICK_UDP, udp: false, detection: 'none', nvd: false, checks: false })
})

export { TEMPLATE_NAMES }

export function isTemplateName (name: string): name is TemplateName {
  return Object.prototype.hasOwnProperty.call(TEMPLATES, name)
}

/** What a scan asks of UDP: `udp` scans the template's UDP ports, `udpPorts` (a port spec) scans those instead. */
export interface UdpChoice {
  udp?: boolean
  udpPorts?: string
}

function portsOf (spec: string | number[]): number[] {
  return typeof spec === 'string' ? parsePortList(spec) : parsePortList(spec.join(','))
}

/**
 * The named template, with its port list replaced when `portsOverride` is given (a spec such as
 * "22,80,8000-8100" or a list of numbers), and UDP on as `udp` says. Throws an Error for an unknown
 * name or a bad port list.
 */
export function getTemplate (name: string, portsOverride?: string | number[], udp: UdpChoice = {}): Template {
  if (!isTemplateName(name)) {
    throw new Error(`unknown template '${name}' (known: ${TEMPLATE_NAMES.join(', ')})`)
  }
  const t = TEMPLATES[name]
  const ports = portsOverride === undefined ? [...t.ports] : portsOf(portsOverride)
  const udpPorts = udp.udpPorts === undefined ? [...t.udpPorts] : portsOf(udp.udpPorts)
  // A UDP port list is a request for UDP; `udp: false` with one says otherwise.
  const udpOn = udp.udp ?? udp.udpPorts !== undefined
  return { name: t.name, ports, udpPorts, udp: udpOn, detection: t.detection, nvd: t.nvd, checks: t.checks }
}
