// What each scan saw of each host, beside the merged host record: the per-scan snapshot behind `scanId` filters
// and scan diffs. Both results backends apply the same rules here and store the outcome their own way.
import { addressSortKey } from '../addresses'
import type { HostScanWrite, ScanHostRecord, ScanPort } from './results-types'
import { portRanges, portSet, unionRanges } from './port-ranges'

/** What a scan saw of a host, but its findings (each backend keeps those its own compact way). */
export interface ScanHostHead {
  up: boolean
  at: string
  scanned: string
  settled: string
  ports: ScanPort[]
}

function scanPortOf (p: HostScanWrite['host']['ports'][number]): ScanPort {
  // Built field by field in one order: the same snapshot always has the same JSON (an unchanged row is not rewritten).
  const out: ScanPort = { port: p.port, state: p.state === 'filtered' ? 'filtered' : 'open' }
  const s = p.service
  if (s !== undefined && p.state === 'open') {
    out.service = s.service
    if (s.product !== undefined) out.product = s.product
    if (s.version !== undefined) out.version = s.version
  }
  return out
}

/**
 * The scan's snapshot of a host after one more write of that scan. Writes of one scan for one host are the
 * scan's batch (and its re-runs) and the later re-match of products the NVD could not supply then, which covers
 * no port but settles some: each write replaces what the snapshot said of the ports it speaks for and keeps the
 * rest, so a re-run leaves the same snapshot.
 */
export function mergeScanHead (prev: ScanHostHead | null, write: HostScanWrite): ScanHostHead {
  const scannedText = portRanges(write.scannedPorts)
  const scanned = portSet(scannedText)
  const fresh = write.host.ports.filter((p) => p.state !== 'closed' && scanned.has(p.port)).map(scanPortOf)
  const kept = prev === null ? [] : prev.ports.filter((p) => !scanned.has(p.port))
  const ports = [...kept, ...fresh].sort((a, b) => a.port - b.port)
  const covers = prev === null || scannedText !== ''
  return {
    up: covers ? write.host.up : prev.up,
    at: prev === null || Date.parse(write.at) >= Date.parse(prev.at) ? write.at : prev.at,
    scanned: unionRanges(prev?.scanned ?? '', scannedText),
    settled: unionRanges(prev?.settled ?? '', portRanges(write.settledPorts)),
    ports
  }
}

/** Whether a write speaks for the findings on a port: those it does not name there are no longer the scan's. */
export function speaksFor (write: HostScanWrite): (port: number) => boolean {
  const scanned = portSet(portRanges(write.scannedPorts))
  const settled = portSet(portRanges(write.settledPorts))
  return (port) => scanned.has(port) || settled.has(port)
}

/** Snapshots in address order (IPv4 before IPv6, each by value), as listHosts sorts by address. */
export function byAddress (records: ScanHostRecord[]): ScanHostRecord[] {
  const keyed = records.map((r) => ({ r, k: addressSortKey(r.address) }))
  keyed.sort((a, b) => a.k < b.k ? -1 : a.k > b.k ? 1 : 0)
  return keyed.map((x) => x.r)
}
