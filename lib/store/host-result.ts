// A stored host as the scan engine would have reported it: for matching its services again, and for
// writing prepared hosts through the same path a scan uses.
import type { HostRecord, HostResult, PortResult } from '../domain/hosts'

export function hostRecordToResult (h: HostRecord): HostResult {
  return {
    address: h.address,
    hostnames: h.hostnames,
    up: h.up,
    rttMs: h.rttMs,
    closedCount: 0,
    ports: h.ports.map((p): PortResult => ({
      port: p.port,
      protocol: p.protocol === 'udp' ? 'udp' : 'tcp',
      state: p.state,
      ...(p.service !== undefined
        ? { service: { service: p.service, product: p.product, version: p.version, extraInfo: p.extraInfo, distro: p.distro, banner: p.banner, cpe: p.cpe ?? [], tls: p.tls } }
        : {})
    }))
  }
}
