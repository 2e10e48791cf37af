// The UDP probe registry: one request per port, chosen by the port (a UDP server that gets a request
// it does not understand stays silent, so there is no banner to wait for and no fallback to race).
// A reply is read by the port's own probe first, then by every other one.

import type { ProbeMatch } from '../common'
import type { UdpProbeDescriptor } from './descriptor'
import { udpProbe as dns } from './dns'
import { udpProbe as memcached } from './memcached'
import { udpProbe as ntp } from './ntp'
import { udpProbe as snmp } from './snmp'

export type { UdpProbeDescriptor } from './descriptor'

export const UDP_PROBES: readonly UdpProbeDescriptor[] = [dns, ntp, snmp, memcached]

export interface UdpRegistry {
  probes: readonly UdpProbeDescriptor[]
  /** The probe whose request goes to a port (none: an empty datagram). */
  forPort (port: number): UdpProbeDescriptor | undefined
  /** What a reply says, by the port's probe first, then by any other; null when none reads it. */
  recognise (reply: Buffer, port: number): ProbeMatch | null
}

export function buildUdpRegistry (probes: readonly UdpProbeDescriptor[]): UdpRegistry {
  const names = new Set<string>()
  const byPort = new Map<number, UdpProbeDescriptor>()
  for (const p of probes) {
    if (names.has(p.name)) throw new Error(`two UDP probes are named ${p.name}`)
    names.add(p.name)
    for (const port of p.ports) if (!byPort.has(port)) byPort.set(port, p)
  }
  return {
    probes,
    forPort: (port) => byPort.get(port),
    recognise (reply, port) {
      if (reply.length === 0) return null
      const own = byPort.get(port)
      for (const p of own ? [own, ...probes.filter((x) => x !== own)] : probes) {
        const m = p.parse(reply, port)
        if (m) return m
      }
      return null
    }
  }
}

export const UDP_REGISTRY = buildUdpRegistry(UDP_PROBES)
