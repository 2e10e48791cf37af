// The findings of the embedded results store in compact form. A finding keeps only what varies per finding
// (address, port, status, dates, scan, decision) and points at one shared detail: its CVE's data (description,
// scores, KEV, EPSS), its product's as the banner showed it, its rule's (criterion, reason, source, confidence)
// and the scan's conclusion. Each finding has a slot number; its id (12 bytes) and the fields that filters and
// orders read sit in typed arrays indexed by slot, so a filter over every finding is a loop over numbers, not
// over objects. The full FindingRecord is built only for what a page or an export hands out.
import { FINDING_STATUSES, type FindingSource, type FindingStatus, type KevFilter } from '../../vocabulary'
import type { DistributionEvidence, Epss, FindingRecord, Kev, NewFinding, ObservedStatus, PackageEvidence } from '../../domain/findings'
import { scoreOfFinding, type Confidence } from '../../domain/confidence'
import type { FindingExportQuery } from '../results-types'
import { isHiddenByDefault, kevCataloguesOf, MAX_TEXT, protocolOf, riskValue, SEVERITY_RANK, severityRiskValue } from '../results-merge'
import type { Transport } from '../../domain/hosts'

/** Variants kept per key (a CVE whose EPSS moved, a product whose banner differs per host) before the oldest goes. */
const VARIANTS_MAX = 8
/** Keys kept for sharing before a table starts afresh (what is shared already stays shared). */
const KEYS_MAX = 500_000
const NO_PLATFORMS: string[] = Object.freeze([]) as unknown as string[]

const EU_KEV = 4

/** The test of the `kev` filter on the kev column (null: no filter). */
function kevColumnTest (want: KevFilter | undefined): ((k: number) => boolean) | null {
  if (want === undefined) return null
  if (want === true) return (k) => k !== 0
  if (want === false) return (k) => k === 0
  if (want === 'eu') return (k) => (k & EU_KEV) !== 0
  return (k) => (k & 3) !== 0
}

/** What a finding says of its CVE: the same for every finding of the CVE, until the data sources change it. */
export interface CveData {
  readonly cveId: string
  readonly severity: FindingRecord['severity']
  readonly cvss: number | null
  readonly cvssVersion: string | null
  readonly cvssVector: string | null
  readonly kev: Kev | null
  readonly epss: Epss | null
  /** ENISA's EU KEV lists it. */
  readonly eu: boolean
  readonly euvdId: string | null
  readonly description: string
  readonly risk: number
  /** severityRiskValue: severity, then risk. */
  readonly sevRisk: number
  /** kev and epss as JSON, to compare with new data. */
  readonly kevKey: string
  readonly epssKey: string
}

/** What the scan saw of the product on the port, and the port's transport. */
export interface ProductData {
  readonly protocol: Transport
  readonly product: string
  readonly version: string | null
  readonly matchedCpe: string
  readonly evidence: string
  /** The installed package of a package finding (credentialed scans); null on others. */
  readonly package: PackageEvidence | null
  readonly packageKey: string
}

/** The rule that decided the finding and what is said to the user with it. */
export interface RuleData {
  readonly criterion: string
  readonly reason: string
  readonly source: FindingSource
  readonly rule: string
  readonly distribution: DistributionEvidence | null
  readonly confidence: Confidence
  readonly confidenceScore: number
  readonly confidenceNote: string | null
  readonly requiresPlatform: string[]
  readonly distributionKey: string
  /** The exposure check's remediation line; null on CVE findings. */
  readonly remediation: string | null
}

/** What a finding says of its CVE, product and rule, and what the scan concluded: shared by the findings that say the same. */
export interface Detail {
  readonly cve: CveData
  readonly product: ProductData
  readonly rule: RuleData
  readonly observed: ObservedStatus
}

/** A user's decision on a finding (most findings have none). */
export interface Decision {
  readonly comment: string | null
  readonly decidedBy: string | null
  readonly decidedAt: string | null
}

/** One finding's state. Never changed: a change makes a new one, so an export can hold the state it started from. */
export class Finding {
  constructor (
    readonly address: string,
    readonly port: number,
    readonly detail: Detail,
    readonly status: FindingStatus,
    readonly firstSeen: string,
    readonly lastSeen: string,
    readonly lastScanId: string,
    readonly fixedAt: string | null,
    readonly decision: Decision | null
  ) {}
}

/** The finding as the store's interface hands it out, fields in the order results-merge's findingRecord builds them. */
export function toRecord (id: string, f: Finding): FindingRecord {
  const d = f.detail
  const c = d.cve
  const p = d.product
  const r = d.rule
  const decision = f.decision
  return Object.freeze({
    id,
    address: f.address,
    port: f.port,
    protocol: p.protocol,
    cveId: c.cveId,
    severity: c.severity,
    cvss: c.cvss,
    cvssVersion: c.cvssVersion,
    cvssVector: c.cvssVector,
    kev: c.kev,
    epss: c.epss,
    kevCatalogues: kevCataloguesOf(c.kev, c.eu),
    euvdId: c.euvdId,
    description: c.description,
    product: p.product,
    version: p.version,
    matchedCpe: p.matchedCpe,
    criterion: r.criterion,
    reason: r.reason,
    source: r.source,
    rule: r.rule,
    observed: d.observed,
    distribution: r.distribution,
    confidence: r.confidence,
    confidenceScore: r.confidenceScore,
    confidenceNote: r.confidenceNote,
    evidence: p.evidence,
    requiresPlatform: r.requiresPlatform,
    ...(r.remediation !== null ? { remediation: r.remediation } : {}),
    ...(p.package !== null ? { package: p.package } : {}),
    status: f.status,
    firstSeen: f.firstSeen,
    lastSeen: f.lastSeen,
    lastScanId: f.lastScanId,
    fixedAt: f.fixedAt,
    comment: decision === null ? null : decision.comment,
    decidedBy: decision === null ? null : decision.decidedBy,
    decidedAt: decision === null ? null : decision.decidedAt
  })
}

function hex8 (n: number): string {
  return n.toString(16).padStart(8, '0')
}

/** The number of 8 hex digits of `s` from `at` (lower case, as digests are). */
export function hexAt (s: string, at: number): number {
  let n = 0
  for (let i = at; i < at + 8; i++) {
    const c = s.charCodeAt(i)
    n = n * 16 + (c <= 57 ? c - 48 : c - 87)
  }
  return n
}

/** The id text of the id's three numbers. */
export function idHex (d0: number, d1: number, d2: number): string {
  return hex8(d0) + hex8(d1) + hex8(d2)
}

function bounded (s: string): string {
  return s.length > MAX_TEXT ? s.slice(0, MAX_TEXT) : s
}

function json (o: object | null | undefined): string {
  return o === null || o === undefined ? 'null' : JSON.stringify(o)
}

/** A frozen copy: the caller's object stays the caller's to change, and what is handed out cannot be. */
function frozenCopy<T extends object | null> (o: T): T {
  return o === null ? o : Object.freeze(structuredClone(o))
}

/** Shared values by key, a few variants each. */
class Variants<K, T> {
  private readonly map = new Map<K, T[]>()

  constructor (private readonly max = VARIANTS_MAX) {}

  /** The variants kept under `key` (newest last), to search without a callback. */
  list (key: K): T[] | undefined {
    return this.map.get(key)
  }

  add (key: K, made: T): T {
    let list = this.map.get(key)
    if (list === undefined) {
      if (this.map.size >= KEYS_MAX) this.map.clear()
      this.map.set(key, list = [])
    }
    if (list.length >= this.max) list.shift()
    list.push(made)
    return made
  }
}

/** Whether two EPSS values say the same (the same fields, so that sharing one for the other loses nothing). */
function sameEpss (a: Epss | null, b: Epss | null): boolean {
  if (a === b) return true
  if (a === null || b === null) return false
  return a.score === b.score && a.percentile === b.percentile && a.date === b.date && keyCount(a) === keyCount(b)
}

function keyCount (o: object): number {
  let n = 0
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k)) n++
  return n
}

const STATUS_CODE = new Map<string, number>(FINDING_STATUSES.map((s, i) => [s, i]))
const HIDDEN_CODE = Uint8Array.from(FINDING_STATUSES, (s) => isHiddenByDefault(s) ? 1 : 0)
const CONFIDENCE_CODE = new Map<string, number>([['high', 0], ['medium', 1], ['low', 2]])
/** A code no stored value has: a filter on it matches nothing. */
const NO_CODE = 255
/** The status code of a free slot. */
const FREE = 254

function statusCode (s: string): number {
  return STATUS_CODE.get(s) ?? NO_CODE
}

export type FindingSortKey = 'cvss' | 'lastSeen' | 'firstSeen' | 'risk' | 'severity'

/** The compact findings: shared data, findings by slot, and the columns filters and orders read. */
export class FindingTable {
  private readonly cves = new Variants<string, CveData>()
  private readonly products = new Variants<string, ProductData>()
  private readonly rules = new Variants<string, RuleData>()
  /** Details by their CVE data: a CVE's findings differ in product, rule and conclusion only in a few ways. */
  private readonly details = new Variants<CveData, Detail>(4 * VARIANTS_MAX)

  /** Finding by slot; undefined for a free slot. */
  readonly entries: (Finding | undefined)[] = []
  private readonly free: number[] = []
  private capacity = 0
  count = 0
  /** Findings whose status the default lists leave out. */
  hidden = 0

  // Filter columns: severity rank (-1 unknown text), CVSS and EPSS score (NaN when missing), KEV (0 no, 1 yes,
  // 2 with ransomware use), status and confidence codes.
  sev = new Int8Array(0)
  cvss = new Float64Array(0)
  epss = new Float64Array(0)
  kev = new Uint8Array(0)
  status = new Uint8Array(0)
  conf = new Uint8Array(0)
  /** confidenceScore, 0–100. */
  score = new Uint8Array(0)
  // The id's 12 bytes as three numbers (ties in every order, in the order of the id's text), and the value of each order.
  id0 = new Uint32Array(0)
  id1 = new Uint32Array(0)
  id2 = new Uint32Array(0)
  /** The write that last saw each finding: a write's own set of the ids it saw, with nothing to allocate. */
  seenBy = new Uint32Array(0)
  cvssKey = new Float64Array(0)
  lastSeen = new Float64Array(0)
  firstSeen = new Float64Array(0)
  risk = new Float64Array(0)
  sevRisk = new Float64Array(0)

  private grow (): void {
    const capacity = Math.max(16_384, this.capacity * 2)
    const grown = <A extends Int8Array | Uint8Array | Uint32Array | Float64Array>(a: A, make: new (n: number) => A): A => {
      const b = new make(capacity)
      b.set(a)
      return b
    }
    this.sev = grown(this.sev, Int8Array)
    this.cvss = grown(this.cvss, Float64Array)
    this.epss = grown(this.epss, Float64Array)
    this.kev = grown(this.kev, Uint8Array)
    this.status = grown(this.status, Uint8Array)
    this.conf = grown(this.conf, Uint8Array)
    this.score = grown(this.score, Uint8Array)
    this.id0 = grown(this.id0, Uint32Array)
    this.id1 = grown(this.id1, Uint32Array)
    this.id2 = grown(this.id2, Uint32Array)
    this.seenBy = grown(this.seenBy, Uint32Array)
    this.cvssKey = grown(this.cvssKey, Float64Array)
    this.lastSeen = grown(this.lastSeen, Float64Array)
    this.firstSeen = grown(this.firstSeen, Float64Array)
    this.risk = grown(this.risk, Float64Array)
    this.sevRisk = grown(this.sevRisk, Float64Array)
    this.capacity = capacity
  }

  // Slots by id: open addressing on the id's first 4 bytes (a hash already), slot + 1 per cell, 0 empty, -1 a
  // removed entry. No string per id and no Map entry per finding.
  private index = new Int32Array(1024)
  private removed = 0

  /** The slot of the finding with this id (its 12 bytes), or -1. */
  find (d0: number, d1: number, d2: number): number {
    const index = this.index
    const mask = index.length - 1
    for (let i = d0 & mask; ; i = (i + 1) & mask) {
      const cell = index[i]
      if (cell === 0) return -1
      if (cell > 0) {
        const s = cell - 1
        if (this.id0[s] === d0 && this.id1[s] === d1 && this.id2[s] === d2) return s
      }
    }
  }

  /** The slot of the finding with this id text, or -1. */
  findText (id: string): number {
    if (!/^[0-9a-f]{24}$/.test(id)) return -1
    return this.find(parseInt(id.slice(0, 8), 16), parseInt(id.slice(8, 16), 16), parseInt(id.slice(16), 16))
  }

  idText (slot: number): string {
    return idHex(this.id0[slot], this.id1[slot], this.id2[slot])
  }

  private place (slot: number): void {
    const index = this.index
    const mask = index.length - 1
    let i = this.id0[slot] & mask
    while (index[i] > 0) i = (i + 1) & mask
    if (index[i] === -1) this.removed--
    index[i] = slot + 1
  }

  private reindex (): void {
    let size = 1024
    while (size < this.count * 2) size *= 2
    this.index = new Int32Array(size)
    this.removed = 0
    for (let s = 0; s < this.entries.length; s++) if (this.entries[s] !== undefined) this.place(s)
  }

  /** A slot for a new finding with this id; `set` fills it. */
  allocate (d0: number, d1: number, d2: number): number {
    let slot = this.free.pop()
    if (slot === undefined) {
      slot = this.entries.length
      this.entries.push(undefined)
      if (slot >= this.capacity) this.grow()
    }
    this.id0[slot] = d0
    this.id1[slot] = d1
    this.id2[slot] = d2
    if ((this.count + this.removed + 1) * 4 > this.index.length * 3) this.reindex()
    this.place(slot)
    return slot
  }

  release (slot: number): void {
    const f = this.entries[slot]
    if (f === undefined) return
    const index = this.index
    const mask = index.length - 1
    let i = this.id0[slot] & mask
    while (index[i] !== slot + 1) i = (i + 1) & mask
    index[i] = -1
    this.removed++
    if (HIDDEN_CODE[this.status[slot]] === 1) this.hidden--
    this.status[slot] = FREE
    this.entries[slot] = undefined
    this.count--
    this.free.push(slot)
  }

  /** Ascending by the id's text (its bytes in order). */
  compareIds (a: number, b: number): number {
    return (this.id0[a] - this.id0[b]) || (this.id1[a] - this.id1[b]) || (this.id2[a] - this.id2[b])
  }

  /** The sort value of slot's finding if it were `f` (lastSeen and firstSeen in ms, given). */
  static key (sort: FindingSortKey, f: Finding, firstMs: number, lastMs: number): number {
    switch (sort) {
      case 'cvss': return f.detail.cve.cvss ?? -1
      case 'lastSeen': return lastMs
      case 'firstSeen': return firstMs
      case 'risk': return f.detail.cve.risk
      case 'severity': return f.detail.cve.sevRisk
    }
  }

  sortColumn (sort: FindingSortKey): Float64Array {
    switch (sort) {
      case 'cvss': return this.cvssKey
      case 'lastSeen': return this.lastSeen
      case 'firstSeen': return this.firstSeen
      case 'risk': return this.risk
      case 'severity': return this.sevRisk
    }
  }

  /** Store `f` in its slot with its columns; the caller has taken the slot out of the orders whose value moves. */
  set (s: number, f: Finding, firstMs: number, lastMs: number): void {
    const before = this.entries[s]
    if (before === undefined) this.count++
    else if (HIDDEN_CODE[this.status[s]] === 1) this.hidden--
    this.entries[s] = f
    const c = f.detail.cve
    this.sev[s] = SEVERITY_RANK[c.severity] ?? -1
    this.cvss[s] = c.cvss ?? NaN
    this.epss[s] = c.epss === null ? NaN : c.epss.score
    // Bits 1 and 2: CISA's KEV (2 with ransomware use); bit 4: the EU KEV.
    this.kev[s] = (c.kev === null ? 0 : c.kev.ransomware === true ? 2 : 1) | (c.eu ? EU_KEV : 0)
    const status = statusCode(f.status)
    this.status[s] = status
    if (HIDDEN_CODE[status] === 1) this.hidden++
    this.conf[s] = CONFIDENCE_CODE.get(f.detail.rule.confidence) ?? NO_CODE
    this.score[s] = f.detail.rule.confidenceScore
    this.cvssKey[s] = c.cvss ?? -1
    this.lastSeen[s] = lastMs
    this.firstSeen[s] = firstMs
    this.risk[s] = c.risk
    this.sevRisk[s] = c.sevRisk
  }

  isHidden (slot: number): boolean {
    return HIDDEN_CODE[this.status[slot]] === 1
  }

  /** The shared CVE data of a new finding, with the finding's KEV and EPSS data. */
  cveOf (nf: NewFinding): CveData {
    return this.cveWith(nf.cveId.toUpperCase(), nf.severity, nf.cvss, nf.cvssVersion, nf.cvssVector, nf.kev, nf.epss ?? null, bounded(nf.description),
      nf.kevCatalogues?.includes('eu') === true, nf.euvdId ?? null)
  }

  cveWith (
    cveId: string, severity: CveData['severity'], cvss: number | null, cvssVersion: string | null, cvssVector: string | null,
    kev: Kev | null, epss: Epss | null, description: string, eu = false, euvdId: string | null = null
  ): CveData {
    const kevKey = json(kev)
    const list = this.cves.list(cveId)
    if (list !== undefined) {
      for (let i = list.length - 1; i >= 0; i--) {
        const v = list[i]
        if (v.severity === severity && v.cvss === cvss && v.cvssVersion === cvssVersion && v.cvssVector === cvssVector &&
          v.kevKey === kevKey && sameEpss(v.epss, epss) && v.description === description && v.eu === eu && v.euvdId === euvdId) return v
      }
    }
    return this.cves.add(cveId, Object.freeze({
      cveId, severity, cvss, cvssVersion, cvssVector, kev: frozenCopy(kev), epss: frozenCopy(epss), eu, euvdId, description, risk: riskValue({ kev, epss, cvss, kevCatalogues: eu ? ['eu'] : [] }), sevRisk: severityRiskValue({ severity, kev, epss, cvss, kevCatalogues: eu ? ['eu'] : [] }), kevKey, epssKey: json(epss)
    }))
  }

  /** The shared detail of a new finding. */
  detailOf (nf: NewFinding): Detail {
    return this.detail(this.cveOf(nf), this.productOf(nf), this.ruleOf(nf), nf.observed ?? 'open')
  }

  detail (cve: CveData, product: ProductData, rule: RuleData, observed: ObservedStatus): Detail {
    const list = this.details.list(cve)
    if (list !== undefined) {
      for (let i = list.length - 1; i >= 0; i--) {
        const d = list[i]
        if (d.product === product && d.rule === rule && d.observed === observed) return d
      }
    }
    return this.details.add(cve, Object.freeze({ cve, product, rule, observed }))
  }

  static decision (comment: string | null, decidedBy: string | null, decidedAt: string | null): Decision | null {
    if (comment === null && decidedBy === null && decidedAt === null) return null
    return Object.freeze({ comment, decidedBy, decidedAt })
  }

  productOf (nf: NewFinding): ProductData {
    const { product, version, matchedCpe } = nf
    const protocol = protocolOf(nf)
    const evidence = bounded(nf.evidence)
    const pkg = nf.package ?? null
    const packageKey = json(pkg)
    const list = this.products.list(matchedCpe)
    if (list !== undefined) {
      for (let i = list.length - 1; i >= 0; i--) {
        const v = list[i]
        if (v.protocol === protocol && v.product === product && v.version === version && v.evidence === evidence && v.packageKey === packageKey) return v
      }
    }
    return this.products.add(matchedCpe, Object.freeze({ protocol, product, version, matchedCpe, evidence, package: frozenCopy(pkg), packageKey }))
  }

  ruleOf (nf: NewFinding): RuleData {
    const { criterion, reason, confidence, confidenceNote } = nf
    const confidenceScore = scoreOfFinding(nf)
    const source = nf.source ?? 'nvd'
    const rule = nf.rule ?? nf.reason
    const distribution = nf.distribution ?? null
    const distributionKey = json(distribution)
    const platforms = nf.requiresPlatform
    const remediation = nf.remediation === undefined ? null : bounded(nf.remediation)
    const list = this.rules.list(rule)
    if (list !== undefined) {
      for (let i = list.length - 1; i >= 0; i--) {
        const v = list[i]
        if (v.criterion === criterion && v.reason === reason && v.source === source && v.confidence === confidence &&
          v.confidenceScore === confidenceScore && v.confidenceNote === confidenceNote && v.distributionKey === distributionKey && samePlatforms(v.requiresPlatform, platforms) &&
          v.remediation === remediation) return v
      }
    }
    return this.rules.add(rule, Object.freeze({
      criterion,
      reason,
      source,
      rule,
      distribution: frozenCopy(distribution),
      confidence,
      confidenceScore,
      confidenceNote,
      requiresPlatform: platforms.length === 0 ? NO_PLATFORMS : Object.freeze([...platforms]) as string[],
      distributionKey,
      remediation
    }))
  }

  private scratch = new Uint8Array(0)

  /**
   * Mark the findings that pass the query's filters but host and CVE (which posting lists answer) in a mask by
   * slot, valid until the next call: one pass over the columns in slot order, with no call per finding.
   */
  mark (q: FindingExportQuery): { mask: Uint8Array, total: number } {
    const n = this.entries.length
    if (this.scratch.length < n) this.scratch = new Uint8Array(this.capacity)
    const mask = this.scratch
    const { sev, cvss, epss, kev, status, conf, score } = this
    const minScore = q.minConfidence ?? -1
    const wantStatus = q.status === undefined ? -1 : statusCode(q.status)
    const wantSev = q.severity === undefined ? -2 : SEVERITY_RANK[q.severity] ?? -3
    const byCvss = q.minCvss !== undefined
    const minCvss = q.minCvss ?? 0
    const byEpss = q.minEpss !== undefined
    const minEpss = q.minEpss ?? 0
    const kevTest = kevColumnTest(q.kev)
    const wantConf = q.confidence === undefined ? -1 : CONFIDENCE_CODE.get(q.confidence) ?? NO_CODE
    const source = q.source
    const entries = this.entries
    let total = 0
    for (let s = 0; s < n; s++) {
      const st = status[s]
      let ok = 1
      if (st === FREE) ok = 0
      else if (wantStatus !== -1 ? st !== wantStatus : HIDDEN_CODE[st] === 1) ok = 0
      else if (wantSev !== -2 && sev[s] !== wantSev) ok = 0
      else if (byCvss && !(cvss[s] >= minCvss)) ok = 0
      else if (byEpss && !(epss[s] >= minEpss)) ok = 0
      else if (kevTest !== null && !kevTest(kev[s])) ok = 0
      else if (wantConf !== -1 && conf[s] !== wantConf) ok = 0
      else if (source !== undefined && entries[s]!.detail.rule.source !== source) ok = 0
      else if (score[s] < minScore) ok = 0
      mask[s] = ok
      total += ok
    }
    return { mask, total }
  }

  /** The slots among `candidates` (lists of slots) that pass `test`, marked in the shared mask as `mark` does, and how many. */
  markAmong (candidates: readonly ArrayLike<number>[], test: (slot: number) => boolean): { mask: Uint8Array, total: number } {
    const n = this.entries.length
    if (this.scratch.length < n) this.scratch = new Uint8Array(this.capacity)
    const mask = this.scratch
    mask.fill(0, 0, n)
    let total = 0
    for (const part of candidates) {
      for (let i = 0; i < part.length; i++) {
        const s = part[i]
        if (mask[s] === 1 || !test(s)) continue
        mask[s] = 1
        total++
      }
    }
    return { mask, total }
  }

  /**
   * The test of results-merge's findingFilter on slots, reading the columns (and, for a host or a CVE, which
   * name a posting list whose findings are few, the finding itself).
   */
  filter (q: FindingExportQuery): (slot: number) => boolean {
    const { sev, cvss, epss, kev, status, conf, score, entries } = this
    const minScore = q.minConfidence ?? -1
    const wantStatus = q.status === undefined ? -1 : statusCode(q.status)
    const wantSev = q.severity === undefined ? -2 : SEVERITY_RANK[q.severity] ?? -3
    const minCvss = q.minCvss
    const minEpss = q.minEpss
    const kevTest = kevColumnTest(q.kev)
    const wantConf = q.confidence === undefined ? -1 : CONFIDENCE_CODE.get(q.confidence) ?? NO_CODE
    const cveId = q.cveId?.toUpperCase()
    const host = q.host
    return (s) => {
      if (wantStatus !== -1 ? status[s] !== wantStatus : HIDDEN_CODE[status[s]] === 1) return false
      if (wantSev !== -2 && sev[s] !== wantSev) return false
      if (minCvss !== undefined && !(cvss[s] >= minCvss)) return false
      if (minEpss !== undefined && !(epss[s] >= minEpss)) return false
      if (kevTest !== null && !kevTest(kev[s])) return false
      if (wantConf !== -1 && conf[s] !== wantConf) return false
      if (q.source !== undefined && entries[s]!.detail.rule.source !== q.source) return false
      if (score[s] < minScore) return false
      if (cveId !== undefined && entries[s]!.detail.cve.cveId !== cveId) return false
      if (host !== undefined && entries[s]!.address !== host) return false
      return true
    }
  }
}

function samePlatforms (a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}
