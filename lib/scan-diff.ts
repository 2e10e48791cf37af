// What changed between two scans, from what each saw of each host (ResultsStore.scanHosts). Only what both scans
// covered is compared: a port the other scan did not cover is neither opened nor closed, and a finding counts as
// fixed only on a port this scan settled (found closed, or matched against the vulnerability data again).
import { addressSortKey } from './addresses'
import { portSet } from './store/port-ranges'
import { SEVERITY_RANK } from './store/results-merge'
import type { ScanFindingRef, ScanHostRecord, ScanPort } from './store/results-types'

export interface DiffFinding extends ScanFindingRef {
  address: string
  /** What the scan that observed the finding saw on its port. */
  product?: string
  version?: string
}

export interface DiffPort {
  address: string
  port: number
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
  before: ServiceVersion
  after: ServiceVersion
}

export interface DiffHost {
  address: string
  /** Open ports: as this scan saw them for a host that appeared, as the other scan did for one that went down. */
  openPorts: number[]
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

function diffPort (address: string, p: ScanPort): DiffPort {
  return { address, port: p.port, ...serviceOf(p) }
}

function diffFinding (host: ScanHostRecord, f: ScanFindingRef): DiffFinding {
  const p = host.ports.find((x) => x.port === f.port)
  const out: DiffFinding = { ...f, address: host.address }
  if (p?.product !== undefined) out.product = p.product
  if (p?.version !== undefined) out.version = p.version
  return out
}

function openPorts (h: ScanHostRecord): Map<number, ScanPort> {
  return new Map(h.ports.filter((p) => p.state === 'open').map((p) => [p.port, p]))
}

/** Most severe first (by severity, then CVSS, a missing score last), then by address, port and CVE. */
function compareFindings (keys: Map<string, string>): (a: DiffFinding, b: DiffFinding) => number {
  return (a, b) => (SEVERITY_RANK[b.severity] ?? -1) - (SEVERITY_RANK[a.severity] ?? -1) ||
    (b.cvss ?? -1) - (a.cvss ?? -1) ||
    compareText(keys.get(a.address)!, keys.get(b.address)!) || a.port - b.port || compareText(a.cveId, b.cveId)
}

function compareText (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** What `current` found that `other` did not, and the reverse, over what both covered. */
export function diffScans (current: ScanHostRecord[], other: ScanHostRecord[]): ScanDiff {
  const before = new Map(other.map((h) => [h.address, h]))
  const after = new Map(current.map((h) => [h.address, h]))
  const keys = new Map([...before.keys(), ...after.keys()].map((a) => [a, addressSortKey(a)]))
  const out: ScanDiff = {
    findings: { new: [], fixed: [], unchanged: [] },
    ports: { opened: [], closed: [] },
    services: { changed: [] },
    hosts: { appeared: [], down: [] }
  }

  for (const now of current) {
    const then = before.get(now.address)
    const seenThen = new Set(then?.findings.map((f) => f.id) ?? [])
    for (const f of now.findings) (seenThen.has(f.id) ? out.findings.unchanged : out.findings.new).push(diffFinding(now, f))
    if (then !== undefined) {
      const seenNow = new Set(now.findings.map((f) => f.id))
      const settled = portSet(now.settled)
      for (const f of then.findings) if (!seenNow.has(f.id) && settled.has(f.port)) out.findings.fixed.push(diffFinding(then, f))
    }

    const openNow = openPorts(now)
    if (now.up && then?.up !== true) {
      out.hosts.appeared.push({ address: now.address, openPorts: [...openNow.keys()] })
      continue
    }
    if (then === undefined) continue
    const openThen = openPorts(then)
    if (then.up && !now.up) {
      out.hosts.down.push({ address: now.address, openPorts: [...openThen.keys()] })
      continue
    }
    if (!now.up) continue
    const coveredThen = portSet(then.scanned)
    const coveredNow = portSet(now.scanned)
    for (const [port, p] of openNow) {
      const was = openThen.get(port)
      if (was === undefined) {
        if (coveredThen.has(port)) out.ports.opened.push(diffPort(now.address, p))
      } else if (was.service !== p.service || was.product !== p.product || was.version !== p.version) {
        out.services.changed.push({ address: now.address, port, before: serviceOf(was), after: serviceOf(p) })
      }
    }
    for (const [port, p] of openThen) if (!openNow.has(port) && coveredNow.has(port)) out.ports.closed.push(diffPort(now.address, p))
  }

  const byFinding = compareFindings(keys)
  out.findings.new.sort(byFinding)
  out.findings.fixed.sort(byFinding)
  out.findings.unchanged.sort(byFinding)
  const byPort = (a: { address: string, port: number }, b: { address: string, port: number }): number =>
    compareText(keys.get(a.address)!, keys.get(b.address)!) || a.port - b.port
  out.ports.opened.sort(byPort)
  out.ports.closed.sort(byPort)
  out.services.changed.sort(byPort)
  const byHost = (a: DiffHost, b: DiffHost): number => compareText(keys.get(a.address)!, keys.get(b.address)!)
  out.hosts.appeared.sort(byHost)
  out.hosts.down.sort(byHost)
  return out
}
