// The semantics of the results store, shared by both backends: how one host's scan write changes the host
// and its findings, how a user's decision changes a finding, and how queries filter and order. The backends
// only load the current state, call these, and persist the difference (Redis atomically).
import { FindingCounter } from '../finding-counts'
import { scoreOfFinding } from '../domain/confidence'
import { hash } from 'node:crypto'
import { SEVERITY_RANK, type KevCatalogue, type KevFilter } from '../vocabulary'
import { withScanTags } from '../tags'
import type { HostPort, HostRecord, Transport } from '../domain/hosts'
import type { ExploitUpdate, FindingExportQuery, FindingQuery, HostQuery, HostScanWrite, RecordCounts } from './results-types'
import type { FindingRecord, Kev, NewFinding, PackageEvidence } from '../domain/findings'
import type { FindingStatus } from '../vocabulary'

/** Peers control banners, evidence and reverse DNS: what the store keeps of them is bounded. */
export const MAX_TEXT = 4096
const MAX_HOSTNAMES = 64
const MAX_HOSTNAME_LENGTH = 253

// Severity ranks, default orders and sort values are vocabulary the routes share (lib/vocabulary.ts, lib/sorting.ts).
export { SEVERITY_RANK, HOST_SORT_DEFAULT_ORDER, FINDING_SORT_DEFAULT_ORDER } from '../vocabulary'
export { findingSortValue, hostSortValue, riskValue, severityRiskValue, severityScore } from '../sorting'

/** Statuses that leave a finding out of a host's count and max severity. */
const NOT_COUNTED = new Set<FindingStatus>(['fixed', 'false_positive', 'fixed_by_distribution', 'potential'])
const USER_DECIDED = new Set<FindingStatus>(['accepted', 'false_positive'])
/** Statuses the default lists leave out: nothing is open, and a list (or a CI gate) reading them would be misled. */
export const HIDDEN_BY_DEFAULT: readonly FindingStatus[] = ['fixed_by_distribution', 'potential']
const HIDDEN = new Set<FindingStatus>(HIDDEN_BY_DEFAULT)

export function isHiddenByDefault (status: FindingStatus): boolean {
  return HIDDEN.has(status)
}
/** Statuses a later scan moves to fixed when it no longer sees the finding on a settled port. */
const SETTLEABLE = new Set<FindingStatus>(['open', 'reopened', 'fixed_by_distribution', 'potential'])

/** A finding of one of vulnscan's own exposure checks or of a template (settled by `settledChecks`), not of a CVE. */
export function isCheckFinding (f: Pick<NewFinding, 'source'>): boolean {
  return f.source === 'vulnscan' || f.source === 'template'
}

/**
 * Stable id of the finding of one CVE on one host and port, the same in every scan. A UDP port's findings have
 * the protocol in the id's input; a TCP port's input has none, as before UDP was scanned, so stored TCP findings
 * (and the decisions on them) keep their ids.
 */
export function findingId (address: string, port: number, cveId: string, protocol?: Transport): string {
  return findingDigest(address, port, cveId, protocol).slice(0, 24)
}

/** The hex digest whose first 24 digits are findingId, for a store that keeps ids as numbers. */
export function findingDigest (address: string, port: number, cveId: string, protocol?: Transport): string {
  // One call, no Hash object (and its native context) per id.
  return hash('sha256', protocol === 'udp' ? `${address}|${port}/udp|${cveId.toUpperCase()}` : `${address}|${port}|${cveId.toUpperCase()}`, 'hex')
}

/** The protocol of a finding or port: absent means TCP (records from before UDP scanning). */
export function protocolOf (x: { protocol?: string }): Transport {
  return x.protocol === 'udp' ? 'udp' : 'tcp'
}

/**
 * The settling sets of a write, per protocol: whether the write settles a finding of `f`'s kind (CVE or exposure
 * check) and transport on its port. A TCP settlement never reaches a UDP finding on the same number, nor the reverse.
 */
export function settlesOf (write: HostScanWrite): (f: Pick<NewFinding, 'port' | 'protocol' | 'source'>) => boolean {
  const sets = {
    tcp: new Set(write.settledPorts),
    udp: new Set(write.settledUdpPorts ?? []),
    tcpChecks: new Set(write.settledChecks ?? []),
    udpChecks: new Set(write.settledUdpChecks ?? [])
  }
  return (f) => {
    const udp = f.protocol === 'udp'
    const set = isCheckFinding(f) ? (udp ? sets.udpChecks : sets.tcpChecks) : (udp ? sets.udp : sets.tcp)
    return set.has(f.port)
  }
}

/** Whether a write settles anything at all (a cheap test before a loop over the host's findings). */
export function settlesAny (write: HostScanWrite): boolean {
  return write.settledPorts.length > 0 || (write.settledUdpPorts?.length ?? 0) > 0 ||
    (write.settledChecks?.length ?? 0) > 0 || (write.settledUdpChecks?.length ?? 0) > 0
}

function bounded (s: string): string {
  return s.length > MAX_TEXT ? s.slice(0, MAX_TEXT) : s
}

function maxIso (a: string, b: string): string {
  return Date.parse(a) >= Date.parse(b) ? a : b
}

function minIso (a: string, b: string): string {
  return Date.parse(a) <= Date.parse(b) ? a : b
}

// Records are built field by field in a fixed order so that the same state always has the same JSON: that is
// what lets a backend tell a changed record from an unchanged one, and keeps repeated writes idempotent.
function hostPortOf (p: HostScanWrite['host']['ports'][number]): HostPort {
  const out: HostPort = { port: p.port, protocol: p.protocol === 'udp' ? 'udp' : 'tcp', state: p.state }
  const s = p.service
  if (s) {
    out.service = s.service
    if (s.product !== undefined) out.product = s.product
    if (s.version !== undefined) out.version = s.version
    if (s.extraInfo !== undefined) out.extraInfo = s.extraInfo
    if (s.distro !== undefined) out.distro = s.distro
    if (s.cpe.length > 0) out.cpe = [...s.cpe]
    if (s.banner !== undefined) out.banner = bounded(s.banner)
    if (s.tls !== undefined) out.tls = { ...s.tls }
  }
  return out
}

function hostRecord (h: HostRecord): HostRecord {
  const out: HostRecord = {
    address: h.address,
    hostnames: h.hostnames,
    up: h.up,
    firstSeen: h.firstSeen,
    lastSeen: h.lastSeen,
    lastScanId: h.lastScanId,
    ports: h.ports,
    findingsCount: h.findingsCount,
    maxSeverity: h.maxSeverity,
    // Last: the migration that brought tags gave the records written before them an empty list at the end.
    tags: h.tags ?? []
  }
  if (h.rttMs !== undefined) {
    const { ports, findingsCount, maxSeverity, tags, ...head } = out
    return { ...head, rttMs: h.rttMs, ports, findingsCount, maxSeverity, tags }
  }
  return out
}

/** The host with its tags replaced (already a tag set: tagSet in lib/tags.ts). */
export function withHostTags (host: HostRecord, tags: string[]): HostRecord {
  return hostRecord({ ...host, tags })
}

/** A finding record as code builds it: the protocol may be left out for TCP. */
export type FindingInput = Omit<FindingRecord, 'protocol' | 'confidenceScore' | 'kevCatalogues' | 'euvdId'> &
  { protocol?: Transport, confidenceScore?: number, kevCatalogues?: KevCatalogue[], euvdId?: string | null }

/** The catalogues listing a CVE: CISA's whenever the finding holds its KEV entry, the EU's when it lists it too. */
export function kevCataloguesOf (kev: Kev | null, eu: boolean): KevCatalogue[] {
  const out: KevCatalogue[] = []
  if (kev !== null) out.push('cisa')
  if (eu) out.push('eu')
  return out
}

/** The catalogues a stored finding is listed in (one stored before the EU's was read knows only `kev`). */
export function kevCataloguesOfFinding (f: Pick<NewFinding, 'kev' | 'kevCatalogues'>): KevCatalogue[] {
  return kevCataloguesOf(f.kev, f.kevCatalogues?.includes('eu') === true)
}

/** Whether a finding listed by these catalogues passes the `kev` filter. */
export function kevFilterPasses (want: KevFilter, catalogues: readonly KevCatalogue[]): boolean {
  return typeof want === 'boolean' ? (catalogues.length > 0) === want : catalogues.includes(want)
}

export function findingRecord (f: FindingInput): FindingRecord {
  return buildFinding(f, f.address, f.cveId, f.requiresPlatform, f)
}

/** What a finding's record keeps across scans, beside what its newest observation describes. */
type FindingState = Pick<FindingRecord, 'id' | 'status' | 'firstSeen' | 'lastSeen' | 'lastScanId' | 'fixedAt' | 'comment' | 'decidedBy' | 'decidedAt'>

/**
 * A finding record from what describes it (`d`: an observation, or a stored record) and its state, field by field
 * in the one order (no spread: a host write builds twenty of these, and spreads were most of its merging time).
 */
function buildFinding (d: Omit<FindingInput, keyof FindingState>, address: string, cveId: string, requiresPlatform: string[], s: FindingState): FindingRecord {
  const out = {
    id: s.id,
    address,
    port: d.port,
    protocol: protocolOf(d),
    cveId,
    severity: d.severity,
    cvss: d.cvss,
    cvssVersion: d.cvssVersion,
    cvssVector: d.cvssVector,
    kev: d.kev,
    epss: d.epss ?? null,
    kevCatalogues: kevCataloguesOf(d.kev, d.kevCatalogues?.includes('eu') === true),
    euvdId: d.euvdId ?? null,
    description: bounded(d.description),
    product: d.product,
    version: d.version,
    matchedCpe: d.matchedCpe,
    criterion: d.criterion,
    reason: d.reason,
    source: d.source ?? 'nvd',
    rule: d.rule ?? d.reason,
    observed: d.observed ?? 'open',
    distribution: d.distribution ?? null,
    confidence: d.confidence,
    confidenceScore: scoreOfFinding(d),
    confidenceNote: d.confidenceNote,
    evidence: bounded(d.evidence),
    requiresPlatform
  } as FindingRecord
  // The optional fields in their place, before the state (the JSON text of a state must not change).
  if (d.remediation !== undefined) out.remediation = bounded(d.remediation)
  if (d.package !== undefined) out.package = packageEvidence(d.package)
  out.status = s.status
  out.firstSeen = s.firstSeen
  out.lastSeen = s.lastSeen
  out.lastScanId = s.lastScanId
  out.fixedAt = s.fixedAt
  out.comment = s.comment
  out.decidedBy = s.decidedBy
  out.decidedAt = s.decidedAt
  return out
}

const MAX_BINARIES = 500

function packageEvidence (p: PackageEvidence): PackageEvidence {
  return {
    name: p.name,
    source: p.source,
    installed: p.installed,
    fixed: p.fixed,
    binaries: p.binaries.length > MAX_BINARIES ? p.binaries.slice(0, MAX_BINARIES) : [...p.binaries],
    tracker: p.tracker,
    trackerDate: p.trackerDate
  }
}

/** Count and max severity of the findings that still stand (neither fixed nor false positive). */
export function hostTallies (findings: FindingRecord[]): { findingsCount: number, maxSeverity: string | null } {
  let count = 0
  let max: string | null = null
  for (const f of findings) {
    if (NOT_COUNTED.has(f.status)) continue
    count++
    if (max === null || SEVERITY_RANK[f.severity] > SEVERITY_RANK[max]) max = f.severity
  }
  return { findingsCount: count, maxSeverity: max }
}

export interface MergeResult {
  host: HostRecord
  /** Every finding of the host after the write (changed or not). */
  findings: FindingRecord[]
  counts: RecordCounts
}

/**
 * Apply one host's scan write to the host's current state. Timestamps only move forward (lastSeen is the
 * latest seen), and a finding's fix or reopening needs evidence newer than the opposite observation, so
 * writes that arrive out of order or twice converge to the same state.
 */
export function mergeHostWrite (existing: HostRecord | null, current: FindingRecord[], write: HostScanWrite, addressOverride?: string): MergeResult {
  const address = addressOverride ?? write.host.address
  const at = write.at
  const atMs = Date.parse(at)

  const byId = new Map(current.map((f) => [f.id, findingRecord(f)]))
  const counts = { newFindings: 0, fixed: 0, reopened: 0 }
  const seen = new Set<string>()
  for (const nf of write.findings) {
    const id = findingId(address, nf.port, nf.cveId, nf.protocol)
    if (seen.has(id)) continue
    seen.add(id)
    const prev = byId.get(id)
    if (prev === undefined) {
      byId.set(id, buildFinding(nf, address, nf.cveId.toUpperCase(), [...nf.requiresPlatform], {
        id, status: nf.observed, firstSeen: at, lastSeen: at, lastScanId: write.scanId, fixedAt: null, comment: null, decidedBy: null, decidedAt: null
      }))
      if (nf.observed === 'open') counts.newFindings++
      continue
    }
    const later = atMs >= Date.parse(prev.lastSeen)
    const status = seenAgainStatus(prev.status, prev.fixedAt === null ? null : Date.parse(prev.fixedAt), later, nf.observed, atMs)
    if (status === 'reopened' && prev.status === 'fixed') counts.reopened++
    const state: FindingState = {
      id,
      status,
      firstSeen: minIso(prev.firstSeen, at),
      lastSeen: maxIso(prev.lastSeen, at),
      lastScanId: later ? write.scanId : prev.lastScanId,
      fixedAt: prev.fixedAt,
      comment: prev.comment,
      decidedBy: prev.decidedBy,
      decidedAt: prev.decidedAt
    }
    // The newest observation describes the finding (NVD data may have changed since).
    byId.set(id, later
      ? buildFinding(nf, address, nf.cveId.toUpperCase(), [...nf.requiresPlatform], state)
      : buildFinding(prev, prev.address, prev.cveId, prev.requiresPlatform, state))
  }

  const settles = settlesOf(write)
  for (const [id, f] of byId) {
    if (seen.has(id) || !settles(f)) continue
    if (!SETTLEABLE.has(f.status)) continue
    if (Date.parse(f.lastSeen) > Date.parse(at)) continue
    byId.set(id, { ...f, status: 'fixed', fixedAt: at })
    counts.fixed++
  }

  const findings = [...byId.values()].sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  const standing = new FindingCounter()
  for (const id of seen) standing.add(byId.get(id) as FindingRecord)
  return { host: mergeHostRecord(existing, write, address, hostTallies(findings)), findings, counts: { ...counts, standing: standing.result.bySeverity } }
}

/**
 * The host record after one host's scan write, given the tallies of its findings after the write: ports this
 * scan covered are replaced, others kept; hostnames accumulate; the newest scan says whether the host is up.
 */
export function mergeHostRecord (existing: HostRecord | null, write: HostScanWrite, address: string, tallies: { findingsCount: number, maxSeverity: string | null }): HostRecord {
  const at = write.at
  const newer = existing === null || Date.parse(at) >= Date.parse(existing.lastSeen)
  // A port is its number and its transport: a UDP scan replaces UDP ports only, a TCP scan TCP ports only.
  const key = (proto: string | undefined, port: number): string => proto === 'udp' ? `u${port}` : `t${port}`
  const scanned = new Set([...write.scannedPorts.map((p) => key('tcp', p)), ...(write.scannedUdpPorts ?? []).map((p) => key('udp', p))])
  const fresh = write.host.ports.filter((p) => p.state !== 'closed').map(hostPortOf)
  const freshPorts = new Set(fresh.map((p) => key(p.protocol, p.port)))
  const kept = (existing?.ports ?? []).filter((p) => !scanned.has(key(p.protocol, p.port)) && !freshPorts.has(key(p.protocol, p.port)))
  // TCP before UDP on one number.
  const ports = [...kept, ...fresh].sort((a, b) => a.port - b.port || (a.protocol === b.protocol ? 0 : a.protocol === 'udp' ? 1 : -1))

  const seenNames = write.host.hostnames.filter((n) => n.length <= MAX_HOSTNAME_LENGTH).map((n) => n.toLowerCase())
  const hostnames = [...new Set([...(existing?.hostnames ?? []), ...seenNames])].sort().slice(0, MAX_HOSTNAMES)

  return hostRecord({
    address,
    hostnames,
    up: newer ? write.host.up : existing.up,
    firstSeen: existing ? minIso(existing.firstSeen, at) : at,
    lastSeen: existing ? maxIso(existing.lastSeen, at) : at,
    lastScanId: newer ? write.scanId : existing.lastScanId,
    rttMs: newer ? (write.host.rttMs ?? existing?.rttMs) : existing.rttMs,
    ports,
    ...tallies,
    // A scan only ever adds tags: those a user set stay whatever the scan finds.
    tags: write.tags === undefined || write.tags.length === 0 ? existing?.tags ?? [] : withScanTags(existing?.tags ?? [], write.tags)
  })
}

/**
 * The status of a finding a scan at `atMs` saw again: seen after its fix, it is reopened (or what the scan
 * concluded); a user's decision stands; otherwise the newest scan (`later`) says whether the distribution fixed
 * it or a version showed.
 */
export function seenAgainStatus (status: FindingStatus, fixedAtMs: number | null, later: boolean, observed: NewFinding['observed'], atMs: number): FindingStatus {
  if (status === 'fixed' && (fixedAtMs === null || atMs > fixedAtMs)) return observed === 'open' ? 'reopened' : observed
  if (!USER_DECIDED.has(status) && status !== 'fixed' && later) {
    if (observed !== 'open') return observed
    if (status === 'fixed_by_distribution' || status === 'potential') return 'open'
  }
  return status
}

/** Whether a later scan moves a finding of this status to fixed when it no longer sees it on a settled port. */
export function isSettleable (status: FindingStatus): boolean {
  return SETTLEABLE.has(status)
}

function fromNew (nf: NewFinding, address: string): NewFinding {
  return { ...nf, address, protocol: protocolOf(nf), cveId: nf.cveId.toUpperCase(), requiresPlatform: [...nf.requiresPlatform] }
}

/** The finding with new KEV, EPSS and EUVD data, or null when nothing changes. */
export function withExploit (f: FindingRecord, c: ExploitUpdate): FindingRecord | null {
  const kev = c.kev === undefined ? f.kev : c.kev
  const eu = c.euKev ?? f.kevCatalogues?.includes('eu') === true
  const euvdId = c.euvdId ?? f.euvdId ?? null
  if (JSON.stringify(f.kev) === JSON.stringify(kev) && JSON.stringify(f.epss) === JSON.stringify(c.epss) &&
    eu === (f.kevCatalogues?.includes('eu') === true) && euvdId === (f.euvdId ?? null)) return null
  return findingRecord({ ...f, kev, epss: c.epss, kevCatalogues: eu ? ['eu'] : [], euvdId })
}

/** A user's decision on a finding: `open` withdraws an earlier decision. */
export function decide (f: FindingRecord, status: 'accepted' | 'false_positive' | 'open', comment: string | null, by: string, at: string): FindingRecord {
  return findingRecord({ ...f, status, comment, decidedBy: by, decidedAt: at })
}

export function isUserDecided (status: FindingStatus): boolean {
  return USER_DECIDED.has(status)
}

/** Whether a finding still stands against its host (counted, and an affected host of its CVE). */
export function isStanding (status: FindingStatus): boolean {
  return !NOT_COUNTED.has(status)
}

/** Lower-case text a `q` filter searches: the address and every hostname. */
export function hostSearchText (h: HostRecord): string {
  return [h.address, ...h.hostnames].join(' ').toLowerCase()
}

/** Distinct lower-case service and product names of a host's open ports, for the filters. */
export function hostFacets (h: HostRecord): { ports: number[], services: string[], products: string[] } {
  const open = h.ports.filter((p) => p.state === 'open')
  return {
    // The `port` filter is documented as a TCP port.
    ports: [...new Set(open.filter((p) => p.protocol !== 'udp').map((p) => p.port))],
    services: [...new Set(open.map((p) => p.service?.toLowerCase()).filter((s): s is string => !!s))],
    products: [...new Set(open.map((p) => p.product?.toLowerCase()).filter((s): s is string => !!s))]
  }
}


export function findingMatches (f: FindingRecord, q: FindingExportQuery): boolean {
  return findingFilter(q)(f)
}

/**
 * The test of findingMatches with the query's work done once (upper-cased CVE id, the default statuses), for
 * backends that test many findings against one query.
 */
export function findingFilter (q: FindingExportQuery): (f: FindingRecord) => boolean {
  const { severity, minCvss, minEpss, kev, host, status, confidence, source, minConfidence } = q
  const cveId = q.cveId?.toUpperCase()
  return (f) => {
    if (status !== undefined ? f.status !== status : HIDDEN.has(f.status)) return false
    if (severity !== undefined && f.severity !== severity) return false
    if (minCvss !== undefined && (f.cvss === null || f.cvss < minCvss)) return false
    if (minEpss !== undefined && (f.epss === null || f.epss.score < minEpss)) return false
    if (kev !== undefined && !kevFilterPasses(kev, kevCataloguesOfFinding(f))) return false
    if (cveId !== undefined && f.cveId !== cveId) return false
    if (host !== undefined && f.address !== host) return false
    if (confidence !== undefined && f.confidence !== confidence) return false
    if (source !== undefined && f.source !== source) return false
    if (minConfidence !== undefined && f.confidenceScore < minConfidence) return false
    return true
  }
}

/** Whether a query filters by anything beyond the statuses the default lists leave out. */
export function findingQueryFilters (q: FindingExportQuery): boolean {
  return q.severity !== undefined || q.minCvss !== undefined || q.minEpss !== undefined || q.kev !== undefined ||
    q.cveId !== undefined || q.host !== undefined || q.status !== undefined || q.confidence !== undefined || q.scanId !== undefined ||
    q.tag !== undefined || q.source !== undefined || q.minConfidence !== undefined || (q.scope !== undefined && q.scope.length > 0)
}

/** Order by (value, tie) ascending, the same order a Redis sorted set keeps; desc is its exact reverse. */
export function compareBy<T> (value: (x: T) => number | string, tie: (x: T) => string, order: 'asc' | 'desc'): (a: T, b: T) => number {
  const sign = order === 'asc' ? 1 : -1
  return (a, b) => {
    const va = value(a)
    const vb = value(b)
    if (va !== vb) return (va < vb ? -1 : 1) * sign
    const ta = tie(a)
    const tb = tie(b)
    return (ta < tb ? -1 : ta > tb ? 1 : 0) * sign
  }
}
