// What each scan saw of each host, beside the merged host record: the per-scan snapshot behind `scanId` filters
// and scan diffs. Both results backends apply the same rules here and store the outcome their own way.
import { addressSortKey } from '../addresses'
import type { HostScanWrite, ScanHostRecord, ScanPort } from './results-types'
import type { Transport } from '../domain/hosts'
import { portRanges, portSet, unionRanges } from './port-ranges'

/** What a scan saw of a host, but its address and findings (each backend keeps those its own compact way). */
export type ScanHostHead = Omit<ScanHostRecord, 'address' | 'findings'>

function scanPortOf (p: HostScanWrite['host']['ports'][number]): ScanPort {
  // Built field by field in one order: the same snapshot always has the same JSON (an unchanged row is not rewritten).
  // A UDP port that stayed silent (open|filtered) is kept as filtered: the diff compares open ports only.
  const udp = p.protocol === 'udp'
  const out: ScanPort = udp
    ? { port: p.port, protocol: 'udp', state: p.state === 'open' ? 'open' : 'filtered' }
    : { port: p.port, state: p.state === 'filtered' ? 'filtered' : 'open' }
  const s = p.service
  if (s !== undefined && p.state === 'open') {
    out.service = s.service
    if (s.product !== undefined) out.product = s.product
    if (s.version !== undefined) out.version = s.version
  }
  return out
}

/** A port's key in one number: the port for TCP, its negative for UDP (as scan_hosts.finding_ports keeps it). */
export function portKey (port: number, protocol: string | undefined): number {
  return protocol === 'udp' ? -port : port
}

/** The port and protocol of a portKey. */
export function fromPortKey (key: number): { port: number, protocol: Transport } {
  return key < 0 ? { port: -key, protocol: 'udp' } : { port: key, protocol: 'tcp' }
}

/** TCP before UDP on one number. */
export function comparePorts (a: { port: number, protocol?: string }, b: { port: number, protocol?: string }): number {
  return a.port - b.port || (a.protocol === 'udp' ? 1 : 0) - (b.protocol === 'udp' ? 1 : 0)
}

/**
 * The scan's snapshot of a host after one more write of that scan. Writes of one scan for one host are the
 * scan's batch (and its re-runs) and the later re-match of products the NVD could not supply then, which covers
 * no port but settles some: each write replaces what the snapshot said of the ports it speaks for and keeps the
 * rest, so a re-run leaves the same snapshot. TCP and UDP ports are covered apart: a port is its number and its
 * transport.
 */
export function mergeScanHead (prev: ScanHostHead | null, write: HostScanWrite): ScanHostHead {
  const scannedText = portRanges(write.scannedPorts)
  const scanned = portSet(scannedText)
  const scannedUdpText = portRanges(write.scannedUdpPorts ?? [])
  const scannedUdp = portSet(scannedUdpText)
  const covered = (p: { port: number, protocol?: string }): boolean => p.protocol === 'udp' ? scannedUdp.has(p.port) : scanned.has(p.port)
  const fresh = write.host.ports.filter((p) => p.state !== 'closed' && covered(p)).map(scanPortOf)
  const kept = prev === null ? [] : prev.ports.filter((p) => !covered(p))
  const ports = [...kept, ...fresh].sort(comparePorts)
  const covers = prev === null || scannedText !== '' || scannedUdpText !== ''
  const udpScanned = unionRanges(prev?.scannedUdp ?? '', scannedUdpText)
  const udpSettled = unionRanges(prev?.settledUdp ?? '', portRanges(write.settledUdpPorts ?? []))
  const out: ScanHostHead = {
    up: covers ? write.host.up : prev.up,
    at: prev === null || Date.parse(write.at) >= Date.parse(prev.at) ? write.at : prev.at,
    scanned: unionRanges(prev?.scanned ?? '', scannedText),
    settled: unionRanges(prev?.settled ?? '', portRanges(write.settledPorts)),
    ...(udpScanned !== '' ? { scannedUdp: udpScanned } : {}),
    ...(udpSettled !== '' ? { settledUdp: udpSettled } : {}),
    ports
  }
  return out
}

/**
 * Whether a write speaks for a finding on a port: those it does not name there are no longer the scan's. A port it
 * covered speaks for every finding there; a port it only settles speaks for the kind it settles: CVE findings
 * (settledPorts) or exposure-check findings (settledChecks). The re-match of a product the NVD could not supply
 * settles CVE findings alone, and must leave the scan's exposure findings on those ports in the scan.
 */
export function speaksFor (write: HostScanWrite): (port: number, protocol: string | undefined, check: boolean) => boolean {
  const scanned = portSet(portRanges(write.scannedPorts))
  const settled = portSet(portRanges(write.settledPorts))
  const scannedUdp = portSet(portRanges(write.scannedUdpPorts ?? []))
  const settledUdp = portSet(portRanges(write.settledUdpPorts ?? []))
  const checks = new Set(write.settledChecks ?? [])
  const checksUdp = new Set(write.settledUdpChecks ?? [])
  return (port, protocol, check) => protocol === 'udp'
    ? scannedUdp.has(port) || (check ? checksUdp.has(port) : settledUdp.has(port))
    : scanned.has(port) || (check ? checks.has(port) : settled.has(port))
}

/** Snapshots in address order (IPv4 before IPv6, each by value), as listHosts sorts by address. */
export function byAddress (records: ScanHostRecord[]): ScanHostRecord[] {
  const keyed = records.map((r) => ({ r, k: addressSortKey(r.address) }))
  keyed.sort((a, b) => a.k < b.k ? -1 : a.k > b.k ? 1 : 0)
  return keyed.map((x) => x.r)
}
