// What changed between two scans, from what each saw of each host (ResultsStore.scanHosts). Only what both scans
// covered is compared: a port the other scan did not cover is neither opened nor closed, and a finding counts as
// fixed only on a port this scan settled (found closed, or matched against the vulnerability data again).
import { addressSortKey } from './addresses'
import { turn } from './event-loop'
import { portSet } from './store/port-ranges'
import { SEVERITY_RANK } from './store/results-merge'
import type { ScanFindingRef, ScanHostRecord, ScanPort } from './store/results-types'
import type { Transport } from './domain/hosts'

export interface DiffFinding extends ScanFindingRef {
  address: string
  /** What the scan that observed the finding saw on its port. */
  product?: string
  version?: string
}

export interface DiffPort {
  address: string
  port: number
  protocol: Transport
  service?: string
  product?: string
  version?: string
}

export interface ServiceVersion {
  service?: string
  product?: string
  version?: string
}

export interface ServiceChange {
  address: string
  port: number
  protocol: Transport
  before: ServiceVersion
  after: ServiceVersion
}

export interface DiffHost {
  address: string
  /** Open TCP ports: as this scan saw them for a host that appeared, as the other scan did for one that went down. */
  openPorts: number[]
  /** Likewise the open UDP ports, when there are any. */
  openUdpPorts?: number[]
}

export interface ScanDiff {
  findings: { new: DiffFinding[], fixed: DiffFinding[], unchanged: DiffFinding[] }
  ports: { opened: DiffPort[], closed: DiffPort[] }
  services: { changed: ServiceChange[] }
  hosts: { appeared: DiffHost[], down: DiffHost[] }
}

function serviceOf (p: ScanPort | undefined): ServiceVersion {
  const out: ServiceVersion = {}
  if (p?.service !== undefined) out.service = p.service
  if (p?.product !== undefined) out.product = p.product
  if (p?.version !== undefined) out.version = p.version
  return out
}

function protocolOf (p: { protocol?: string }): Transport {
  return p.protocol === 'udp' ? 'udp' : 'tcp'
}

/** A port's key: its number and transport (TCP 53 and UDP 53 are two ports). */
function keyOf (p: { port: number, protocol?: string }): string {
  return `${p.port}/${protocolOf(p)}`
}

function diffPort (address: string, p: ScanPort): DiffPort {
  return { address, port: p.port, protocol: protocolOf(p), ...serviceOf(p) }
}

function diffFinding (host: ScanHostRecord, f: ScanFindingRef): DiffFinding {
  const p = host.ports.find((x) => x.port === f.port && protocolOf(x) === f.protocol)
  const out: DiffFinding = { ...f, address: host.address }
  if (p?.product !== undefined) out.product = p.product
  if (p?.version !== undefined) out.version = p.version
  return out
}

function openPorts (h: ScanHostRecord): Map<string, ScanPort> {
  return new Map(h.ports.filter((p) => p.state === 'open').map((p) => [keyOf(p), p]))
}

/** Whether a snapshot's range texts (covered, or settled) hold a port of either transport. */
function inRanges (tcp: string, udp: string | undefined): (p: { port: number, protocol?: string }) => boolean {
  const t = portSet(tcp)
  const u = portSet(udp ?? '')
  return (p) => protocolOf(p) === 'udp' ? u.has(p.port) : t.has(p.port)
}

function diffHost (address: string, open: Map<string, ScanPort>): DiffHost {
  const ports = [...open.values()]
  const udp = ports.filter((p) => p.protocol === 'udp').map((p) => p.port)
  return { address, openPorts: ports.filter((p) => p.protocol !== 'udp').map((p) => p.port), ...(udp.length > 0 ? { openUdpPorts: udp } : {}) }
}

/** Most severe first (by severity, then CVSS, a missing score last), then by address, port and CVE. */
function compareFindings (keys: Map<string, string>): (a: DiffFinding, b: DiffFinding) => number {
  return (a, b) => (SEVERITY_RANK[b.severity] ?? -1) - (SEVERITY_RANK[a.severity] ?? -1) ||
    (b.cvss ?? -1) - (a.cvss ?? -1) ||
    compareText(keys.get(a.address)!, keys.get(b.address)!) || a.port - b.port || compareText(a.protocol, b.protocol) || compareText(a.cveId, b.cveId)
}

function compareText (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** Hosts compared between two turns of the event loop: ten diffs of 4,096 findings at once held /health up for 2 s. */
const HOSTS_PER_TURN = 8

/** What `current` found that `other` did not, and the reverse, over what both covered. */
export async function diffScans (current: ScanHostRecord[], other: ScanHostRecord[]): Promise<ScanDiff> {
  const before = new Map(other.map((h) => [h.address, h]))
  const after = new Map(current.map((h) => [h.address, h]))
  const keys = new Map([...before.keys(), ...after.keys()].map((a) => [a, addressSortKey(a)]))
  const out: ScanDiff = {
    findings: { new: [], fixed: [], unchanged: [] },
    ports: { opened: [], closed: [] },
    services: { changed: [] },
    hosts: { appeared: [], down: [] }
  }

  let compared = 0
  for (const now of current) {
    if (++compared % HOSTS_PER_TURN === 0) await turn()
    const then = before.get(now.address)
    const seenThen = new Set(then?.findings.map((f) => f.id) ?? [])
    for (const f of now.findings) (seenThen.has(f.id) ? out.findings.unchanged : out.findings.new).push(diffFinding(now, f))
    if (then !== undefined) {
      const seenNow = new Set(now.findings.map((f) => f.id))
      const settled = inRanges(now.settled, now.settledUdp)
      for (const f of then.findings) if (!seenNow.has(f.id) && settled(f)) out.findings.fixed.push(diffFinding(then, f))
    }

    const openNow = openPorts(now)
    if (now.up && then?.up !== true) {
      out.hosts.appeared.push(diffHost(now.address, openNow))
      continue
    }
    if (then === undefined) continue
    const openThen = openPorts(then)
    if (then.up && !now.up) {
      out.hosts.down.push(diffHost(now.address, openThen))
      continue
    }
    if (!now.up) continue
    const coveredThen = inRanges(then.scanned, then.scannedUdp)
    const coveredNow = inRanges(now.scanned, now.scannedUdp)
    for (const [key, p] of openNow) {
      const was = openThen.get(key)
      if (was === undefined) {
        if (coveredThen(p)) out.ports.opened.push(diffPort(now.address, p))
      } else if (was.service !== p.service || was.product !== p.product || was.version !== p.version) {
        out.services.changed.push({ address: now.address, port: p.port, protocol: protocolOf(p), before: serviceOf(was), after: serviceOf(p) })
      }
    }
    for (const [key, p] of openThen) if (!openNow.has(key) && coveredNow(p)) out.ports.closed.push(diffPort(now.address, p))
  }

  const byFinding = compareFindings(keys)
  await turn()
  out.findings.new.sort(byFinding)
  out.findings.fixed.sort(byFinding)
  out.findings.unchanged.sort(byFinding)
  const byPort = (a: { address: string, port: number, protocol: Transport }, b: { address: string, port: number, protocol: Transport }): number =>
    compareText(keys.get(a.address)!, keys.get(b.address)!) || a.port - b.port || compareText(a.protocol, b.protocol)
  out.ports.opened.sort(byPort)
  out.ports.closed.sort(byPort)
  out.services.changed.sort(byPort)
  const byHost = (a: DiffHost, b: DiffHost): number => compareText(keys.get(a.address)!, keys.get(b.address)!)
  out.hosts.appeared.sort(byHost)
  out.hosts.down.sort(byHost)
  return out
}
