// The embedded results store: hosts and findings in process memory, with the semantics of results-merge.
// Every sort order is kept as a sorted list updated on each write (an item moves only when its sort value
// does), and the filters that pick few findings (host, CVE) have posting lists, so no read re-sorts and no
// write throws an order away. Findings are compact (finding-table.ts): the lists hold slot numbers, the other
// filters are one pass over typed arrays, and a FindingRecord is built only for what is handed out. Host
// records are replaced on every change, never changed in place, so they are handed out as they are (frozen).
import { FindingCounter } from '../../finding-counts'
import type { HostPort, HostRecord } from '../../domain/hosts'
import type { Page } from '../types'
import type { ExploitLookup, FindingExportQuery, FindingQuery, HostQuery, HostScanWrite, RecordCounts, ResultsStore, ScanHostRecord, ScanPort } from '../results-types'
import type { FindingRecord } from '../../domain/findings'
import {
  FINDING_SORT_DEFAULT_ORDER, findingDigest, findingQueryFilters, HOST_SORT_DEFAULT_ORDER, hostFacets, hostSearchText, hostSortValue,
  isCheckFinding, isSettleable, isStanding, mergeHostRecord, seenAgainStatus, settlesAny, settlesOf, SEVERITY_RANK, withHostTags
} from '../results-merge'
import { editedTags } from '../../tags'
import { normalizeAddress, sortAddresses } from '../../addresses'
import { SortedList } from './sorted-list'
import { comparePosition, type ListPosition } from '../../list-cursor'
import { Finding, FindingTable, hexAt, idHex, toRecord, type FindingSortKey } from './finding-table'
import { byAddress, mergeScanHead, speaksFor, type ScanHostHead } from '../scan-hosts'
import { scopeOf } from '../../ownership'

const EXPLOIT_BATCH = 1000
const PORTS_MAX = 100_000

type HostSort = NonNullable<HostQuery['sort']>
type FindingSort = NonNullable<FindingQuery['sort']>
const HOST_SORTS: readonly HostSort[] = ['lastSeen', 'address', 'findings', 'severity']

/** One host: its current record and what the filters and orders read of it. Lives as long as the host. */
interface HostEntry {
  record: HostRecord
  address: string
  keys: Record<HostSort, number | string>
  text: string
  ports: number[]
  services: string[]
  products: string[]
  /** Slots of the host's findings. */
  slots: number[]
}

/**
 * What one scan saw of one host: the snapshot (its ports shared with every snapshot that shows the same) and the
 * slots of the findings it observed. A slot is freed only with its host, which takes its snapshots with it.
 */
interface ScanHostEntry {
  head: ScanHostHead
  slots: Uint32Array
}

const NO_SLOTS = new Uint32Array(0)
/**
 * Candidate findings (a scan's, a tag's, a host's or a CVE's) up to this many are filtered and sorted; more (a scan
 * of the whole network) are marked and the page walked in order, as for the column filters: sorting 200,000
 * candidates for each page took 200 ms.
 */
const SORT_CANDIDATES_UP_TO = 10_000

function compareText (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

// Ascending by (value, tie), the order compareBy in results-merge defines; desc reads the same list backwards.
function hostOrder (sort: HostSort): (a: HostEntry, b: HostEntry) => number {
  return (a, b) => {
    const va = a.keys[sort]
    const vb = b.keys[sort]
    if (va !== vb) return va < vb ? -1 : 1
    return compareText(a.address, b.address)
  }
}

// Ascending by (value, id), the order compareBy in results-merge defines: the id's bytes compare as its text does.
function findingOrder (table: FindingTable, sort: FindingSortKey): (a: number, b: number) => number {
  return (a, b) => {
    const key = table.sortColumn(sort)
    return (key[a] - key[b]) || table.compareIds(a, b)
  }
}

function hostMatcher (q: HostQuery): ((h: HostEntry) => boolean) | null {
  const text = q.q?.toLowerCase()
  const service = q.service?.toLowerCase()
  const product = q.product?.toLowerCase()
  const minRank = q.minSeverity === undefined ? undefined : SEVERITY_RANK[q.minSeverity]
  const { port, hasFindings, tag } = q
  const scope = scopeOf(q.scope ?? [])
  if (text === undefined && port === undefined && service === undefined && product === undefined && minRank === undefined && hasFindings === undefined &&
    tag === undefined && scope === null) return null
  return (h) => {
    if (tag !== undefined && !h.record.tags.includes(tag)) return false
    if (scope !== null && !scope.allows(h.address)) return false
    if (text !== undefined && !h.text.includes(text)) return false
    if (port !== undefined && !h.ports.includes(port)) return false
    if (service !== undefined && !h.services.includes(service)) return false
    if (product !== undefined && !h.products.includes(product)) return false
    if (minRank !== undefined && (h.keys.severity as number) < minRank) return false
    if (hasFindings !== undefined && (h.record.findingsCount > 0) !== hasFindings) return false
    return true
  }
}

function sameKeys<K extends string> (a: Record<K, number | string>, b: Record<K, number | string>, sorts: readonly K[]): boolean {
  for (const s of sorts) if (a[s] !== b[s]) return false
  return true
}

/** The items of `ascending` from `offset` on in the given order, at most `limit`: a page of a small candidate list. */
function pageOf<T> (ascending: T[], order: 'asc' | 'desc', offset: number, limit: number): T[] {
  if (order === 'asc') return ascending.slice(offset, offset + limit)
  const end = Math.max(0, ascending.length - offset)
  return ascending.slice(Math.max(0, end - limit), end).reverse()
}

export class MemoryResultsStore implements ResultsStore {
  private readonly hosts = new Map<string, HostEntry>()
  private readonly table = new FindingTable()
  /** Slots of each CVE's findings (a finding's CVE never changes: a slot comes and goes once). */
  private readonly byCve = new Map<string, number[]>()
  // Each order is built on its first read and kept up to date from then on.
  private readonly hostLists = new Map<HostSort, SortedList<HostEntry>>()
  private readonly findingLists = new Map<FindingSort, SortedList<number>>()
  private revision = 0
  private writes = 0
  /** Scan id → address → what that scan saw of the host. */
  private readonly scanEntries = new Map<string, Map<string, ScanHostEntry>>()
  /** One frozen copy of each distinct port a scan snapshot shows (bounded like `ports`). */
  private readonly scanPorts = new Map<string, ScanPort>()

  private hostList (sort: HostSort): SortedList<HostEntry> {
    let list = this.hostLists.get(sort)
    if (list === undefined) {
      list = new SortedList(hostOrder(sort))
      list.reset([...this.hosts.values()])
      this.hostLists.set(sort, list)
    }
    return list
  }

  private findingList (sort: FindingSort): SortedList<number> {
    let list = this.findingLists.get(sort)
    if (list === undefined) {
      list = new SortedList(findingOrder(this.table, sort))
      const slots: number[] = []
      this.table.entries.forEach((f, s) => { if (f !== undefined) slots.push(s) })
      list.reset(slots)
      this.findingLists.set(sort, list)
    }
    return list
  }

  /**
   * Hosts that run the same software show the same ports: one frozen copy of each distinct port is kept (the
   * table starts afresh past its bound; ports shared already stay shared).
   */
  private readonly ports = new Map<string, HostPort>()

  private sharedPort (p: HostPort): HostPort {
    if (Object.isFrozen(p)) return p
    const key = JSON.stringify(p)
    const known = this.ports.get(key)
    if (known !== undefined) return known
    if (this.ports.size >= PORTS_MAX) this.ports.clear()
    // The port is the store's own (results-merge builds it afresh): frozen in place, with what it holds.
    if (p.cpe !== undefined) Object.freeze(p.cpe)
    if (p.tls !== undefined) Object.freeze(p.tls)
    this.ports.set(key, Object.freeze(p))
    return p
  }

  private putHost (record: HostRecord): HostEntry {
    record.ports = record.ports.map((p) => this.sharedPort(p))
    Object.freeze(record)
    const keys = {
      lastSeen: hostSortValue(record, 'lastSeen'),
      address: hostSortValue(record, 'address'),
      findings: hostSortValue(record, 'findings'),
      severity: hostSortValue(record, 'severity')
    }
    const facets = hostFacets(record)
    const text = hostSearchText(record)
    let entry = this.hosts.get(record.address)
    if (entry === undefined) {
      entry = { record, address: record.address, keys, text, ...facets, slots: [] }
      this.hosts.set(entry.address, entry)
      for (const list of this.hostLists.values()) list.insert(entry)
      return entry
    }
    const moved = sameKeys(entry.keys, keys, HOST_SORTS) ? [] : [...this.hostLists.values()]
    for (const list of moved) list.delete(entry)
    entry.keys = keys
    for (const list of moved) list.insert(entry)
    entry.record = record
    entry.text = text
    entry.ports = facets.ports
    entry.services = facets.services
    entry.products = facets.products
    return entry
  }

  /** Store a new finding in a new slot. */
  private addFinding (slot: number, f: Finding, firstMs: number, lastMs: number): void {
    this.table.set(slot, f, firstMs, lastMs)
    const cveId = f.detail.cve.cveId
    const list = this.byCve.get(cveId)
    if (list === undefined) this.byCve.set(cveId, [slot])
    else list.push(slot)
    for (const list of this.findingLists.values()) list.insert(slot)
  }

  /** Replace the finding in slot `s`, moving it in the orders whose value changed. */
  private replaceFinding (s: number, next: Finding, firstMs: number, lastMs: number): void {
    const t = this.table
    const moved: SortedList<number>[] = []
    for (const [sort, list] of this.findingLists) {
      if (t.sortColumn(sort)[s] !== FindingTable.key(sort, next, firstMs, lastMs)) {
        list.delete(s)
        moved.push(list)
      }
    }
    t.set(s, next, firstMs, lastMs)
    for (const list of moved) list.insert(s)
  }

  /** Count and max severity of the host's findings that still stand, as results-merge's hostTallies. */
  private tallies (slots: number[]): { findingsCount: number, maxSeverity: string | null } {
    let count = 0
    let max: string | null = null
    for (const s of slots) {
      const f = this.table.entries[s]!
      if (!isStanding(f.status)) continue
      count++
      const severity = f.detail.cve.severity
      if (max === null || SEVERITY_RANK[severity] > SEVERITY_RANK[max]) max = severity
    }
    return { findingsCount: count, maxSeverity: max }
  }

  // Everything below runs synchronously between awaits, so each call is atomic like the Redis backend's scripts.
  async recordHost (write: HostScanWrite): Promise<RecordCounts> {
    return this.record(write)
  }

  /**
   * results-merge's mergeHostWrite on the compact findings: the same rules, applied in place to the slots of
   * the host's findings, with a new Finding only for those that change.
   */
  private record (write: HostScanWrite): RecordCounts {
    const address = normalizeAddress(write.host.address)
    if (address === null) throw new Error(`not an IP address: ${JSON.stringify(write.host.address).slice(0, 80)}`)
    const t = this.table
    const host = this.hosts.get(address)
    const before = host?.slots ?? []
    const slots = before.slice()
    const at = write.at
    const atMs = Date.parse(at)
    const scanId = write.scanId
    const counts = { newFindings: 0, fixed: 0, reopened: 0 }
    const observed: number[] = []
    // Write numbers start at 1 (0: seen by no write); when they wrap around, every slot starts afresh.
    const w = this.writes = (this.writes + 1) >>> 0
    if (w === 0) {
      t.seenBy.fill(0)
      this.writes = 1
      return this.record(write)
    }
    for (const nf of write.findings) {
      const digest = findingDigest(address, nf.port, nf.cveId, nf.protocol)
      const d0 = hexAt(digest, 0)
      const d1 = hexAt(digest, 8)
      const d2 = hexAt(digest, 16)
      const slot = t.find(d0, d1, d2)
      if (slot === -1) {
        const s = t.allocate(d0, d1, d2)
        t.seenBy[s] = w
        this.addFinding(s, new Finding(address, nf.port, t.detailOf(nf), nf.observed, at, at, scanId, null, null), atMs, atMs)
        slots.push(s)
        observed.push(s)
        if (nf.observed === 'open') counts.newFindings++
        continue
      }
      if (t.seenBy[slot] === w) continue
      t.seenBy[slot] = w
      observed.push(slot)
      const prev = t.entries[slot]!
      const prevFirst = t.firstSeen[slot]
      const prevLast = t.lastSeen[slot]
      const later = atMs >= prevLast
      const fixedAtMs = prev.status === 'fixed' && prev.fixedAt !== null ? Date.parse(prev.fixedAt) : null
      const status = seenAgainStatus(prev.status, fixedAtMs, later, nf.observed, atMs)
      if (status === 'reopened' && prev.status === 'fixed') counts.reopened++
      // The newest observation describes the finding (NVD data may have changed since).
      const detail = later ? t.detailOf(nf) : prev.detail
      const firstSeen = prevFirst <= atMs ? prev.firstSeen : at
      const lastSeen = prevLast >= atMs ? prev.lastSeen : at
      const lastScanId = later ? scanId : prev.lastScanId
      if (detail === prev.detail && status === prev.status && firstSeen === prev.firstSeen && lastSeen === prev.lastSeen && lastScanId === prev.lastScanId) continue
      this.replaceFinding(slot, new Finding(prev.address, prev.port, detail, status, firstSeen, lastSeen, lastScanId, prev.fixedAt, prev.decision),
        Math.min(prevFirst, atMs), Math.max(prevLast, atMs))
    }

    if (settlesAny(write)) {
      const settles = settlesOf(write)
      for (const s of before) {
        const f = t.entries[s]!
        if (t.seenBy[s] === w || !settles({ port: f.port, protocol: f.detail.product.protocol, source: f.detail.rule.source })) continue
        if (!isSettleable(f.status)) continue
        if (t.lastSeen[s] > atMs) continue
        this.replaceFinding(s, new Finding(f.address, f.port, f.detail, 'fixed', f.firstSeen, f.lastSeen, f.lastScanId, at, f.decision),
          t.firstSeen[s], t.lastSeen[s])
        counts.fixed++
      }
    }

    const entry = this.putHost(mergeHostRecord(host?.record ?? null, write, address, this.tallies(slots)))
    entry.slots = slots
    this.recordScanHost(address, write, observed)
    this.revision++
    const standing = new FindingCounter()
    for (const s of observed) standing.add({ severity: t.entries[s]!.detail.cve.severity, status: t.entries[s]!.status })
    return { ...counts, standing: standing.result.bySeverity }
  }

  private readonly texts = new Map<string, string>()

  private sharedText (text: string): string {
    const known = this.texts.get(text)
    if (known !== undefined) return known
    if (this.texts.size >= PORTS_MAX) this.texts.clear()
    this.texts.set(text, text)
    return text
  }

  private sharedScanPort (p: ScanPort): ScanPort {
    const key = JSON.stringify(p)
    const known = this.scanPorts.get(key)
    if (known !== undefined) return known
    if (this.scanPorts.size >= PORTS_MAX) this.scanPorts.clear()
    this.scanPorts.set(key, Object.freeze(p))
    return p
  }

  /** The scan's snapshot of the host after this write (scan-hosts.ts's rules), with the slots it observed. */
  private recordScanHost (address: string, write: HostScanWrite, observed: number[]): void {
    let hosts = this.scanEntries.get(write.scanId)
    if (hosts === undefined) this.scanEntries.set(write.scanId, hosts = new Map())
    const prev = hosts.get(address)
    const head = mergeScanHead(prev?.head ?? null, write)
    head.ports = head.ports.map((p) => this.sharedScanPort(p))
    // Hosts of one scan mostly cover and settle the same ports: one copy of each range text.
    head.scanned = this.sharedText(head.scanned)
    head.settled = this.sharedText(head.settled)
    let slots = observed
    if (prev !== undefined && prev.slots.length > 0) {
      const speaks = speaksFor(write)
      const entries = this.table.entries
      slots = [...new Set([...Array.from(prev.slots).filter((s) => !speaks(entries[s]!.port, entries[s]!.detail.product.protocol, isCheckFinding(entries[s]!.detail.rule))), ...observed])]
    }
    slots.sort((a, b) => this.table.compareIds(a, b))
    hosts.set(address, { head: Object.freeze(head), slots: slots.length === 0 ? NO_SLOTS : Uint32Array.from(slots) })
  }

  /** The findings a scan observed (on one host, when given), as the lists of slots it keeps them in: one per host. */
  private scanParts (scanId: string, host?: string): ArrayLike<number>[] {
    const hosts = this.scanEntries.get(scanId)
    if (hosts === undefined) return []
    if (host !== undefined) return [hosts.get(host)?.slots ?? NO_SLOTS]
    return Array.from(hosts.values(), (e) => e.slots)
  }

  async scanHosts (scanId: string): Promise<ScanHostRecord[]> {
    const hosts = this.scanEntries.get(scanId)
    if (hosts === undefined) return []
    const t = this.table
    const out: ScanHostRecord[] = []
    for (const [address, { head, slots }] of hosts) {
      out.push({
        address,
        ...head,
        ports: head.ports.map((p) => ({ ...p })),
        findings: Array.from(slots, (s) => {
          const f = t.entries[s]!
          const c = f.detail.cve
          return { id: t.idText(s), port: f.port, protocol: f.detail.product.protocol, cveId: c.cveId, severity: c.severity, cvss: c.cvss, status: f.status }
        })
      })
    }
    return byAddress(out)
  }

  async recordHosts (writes: HostScanWrite[]): Promise<RecordCounts[]> {
    // Checked before the first write, so that a batch is stored whole or not at all.
    for (const w of writes) {
      if (normalizeAddress(w.host.address) === null) throw new Error(`not an IP address: ${JSON.stringify(w.host.address).slice(0, 80)}`)
    }
    return writes.map((w) => this.record(w))
  }

  async listHosts (query: HostQuery): Promise<Page<HostRecord>> {
    const sort = query.sort ?? 'lastSeen'
    const order = query.order ?? HOST_SORT_DEFAULT_ORDER[sort]
    const { limit, after } = query
    const matches = hostMatcher(query)
    // Keyset paging: the page is the first `limit` hosts that pass past the place `after` names.
    const place = after === undefined ? null : (h: HostEntry): number => comparePosition(h.keys[sort], () => h.address, after)
    if (query.scanId !== undefined) {
      // The scan's hosts are the candidates, put in order.
      const seen = this.scanEntries.get(query.scanId)
      const candidates: HostEntry[] = []
      for (const address of seen?.keys() ?? []) {
        const h = this.hosts.get(address)
        if (h !== undefined && (matches === null || matches(h))) candidates.push(h)
      }
      candidates.sort(hostOrder(sort))
      const offset = place === null ? query.offset : candidates.filter((h) => order === 'asc' ? place(h) <= 0 : place(h) >= 0).length
      return { items: pageOf(candidates, order, offset, limit).map((h) => h.record), total: candidates.length }
    }
    const list = this.hostList(sort)
    if (place !== null) {
      // The place found by a binary search in the order, the page walked from there.
      const start = order === 'asc' ? list.countBefore((h) => place(h) > 0) : list.size - list.countBefore((h) => place(h) >= 0)
      const items: HostRecord[] = []
      if (limit > 0) list.walk(order, start, (h) => { if (matches === null || matches(h)) items.push(h.record); return items.length < limit })
      return { items, total: matches === null ? this.hosts.size : list.select(order, 0, 0, matches).total }
    }
    if (matches === null) {
      return { items: list.slice(order, query.offset, limit).map((h) => h.record), total: this.hosts.size }
    }
    // Port, service and product are tested on each host's own short lists: a walk over 10,000 hosts costs well
    // under a millisecond, less than posting sets of every host cost in memory.
    const { items, total } = list.select(order, query.offset, limit, matches)
    return { items: items.map((h) => h.record), total }
  }

  async hostsRevision (): Promise<string> {
    return String(this.revision)
  }

  async ping (): Promise<void> {}

  async getHost (address: string): Promise<HostRecord | null> {
    return this.hosts.get(normalizeAddress(address) ?? address)?.record ?? null
  }

  async deleteHost (address: string): Promise<boolean> {
    const entry = this.hosts.get(normalizeAddress(address) ?? address)
    if (entry === undefined) return false
    for (const s of entry.slots) {
      const f = this.table.entries[s]!
      for (const list of this.findingLists.values()) list.delete(s)
      const list = this.byCve.get(f.detail.cve.cveId)
      if (list !== undefined) {
        const i = list.indexOf(s)
        list[i] = list[list.length - 1]
        list.pop()
        if (list.length === 0) this.byCve.delete(f.detail.cve.cveId)
      }
      this.table.release(s)
    }
    for (const [scanId, hosts] of this.scanEntries) {
      if (hosts.delete(entry.address) && hosts.size === 0) this.scanEntries.delete(scanId)
    }
    for (const list of this.hostLists.values()) list.delete(entry)
    this.hosts.delete(entry.address)
    this.revision++
    return true
  }

  async listFindings (query: FindingQuery): Promise<Page<FindingRecord>> {
    const { slots, total } = this.findingPage(query, query.offset, query.limit, query.after)
    const t = this.table
    return { items: slots.map((s) => toRecord(t.idText(s), t.entries[s]!)), total }
  }

  /** The slots of a page of findings, and how many the query matches. */
  private findingPage (query: FindingExportQuery, offset: number, limit: number, after?: ListPosition): { slots: number[], total: number } {
    const sort = query.sort ?? 'cvss'
    const order = query.order ?? FINDING_SORT_DEFAULT_ORDER[sort]
    const q = query.host === undefined ? query : { ...query, host: normalizeAddress(query.host) ?? query.host }
    const t = this.table
    // Keyset paging: the page is the first `limit` findings that pass past the place `after` names. The place is
    // found in the order by a binary search, and the page walked from there: as quick deep in the list as at its start.
    const column = t.sortColumn(sort)
    const place = after === undefined ? null : (s: number): number => comparePosition(column[s], () => t.idText(s), after)
    const keysetPage = (at: (s: number) => number, test?: (s: number) => boolean): number[] => {
      const list = this.findingList(sort)
      const start = order === 'asc' ? list.countBefore((s) => at(s) > 0) : list.size - list.countBefore((s) => at(s) >= 0)
      const out: number[] = []
      if (limit > 0) list.walk(order, start, (s) => { if (test === undefined || test(s)) out.push(s); return out.length < limit })
      return out
    }
    if (!findingQueryFilters(q)) {
      const total = t.count - t.hidden
      if (t.hidden === 0) return { slots: place === null ? this.findingList(sort).slice(order, offset, limit) : keysetPage(place), total }
      // Every finding but the hidden statuses.
      const visible = (s: number): boolean => !t.isHidden(s)
      return { slots: place === null ? this.walkPage(sort, order, offset, limit, total, visible) : keysetPage(place, visible), total }
    }
    // A host or a CVE names a posting list: its findings are the candidates, put in order.
    // A scan's findings are always the candidates when it is named: the test below does not know scans.
    // Each candidate set is a few lists of slots (a scan's or a tag's: one per host), not copied into one.
    const sets: ArrayLike<number>[][] = []
    if (q.host !== undefined) sets.push([this.hosts.get(q.host)?.slots ?? []])
    if (q.cveId !== undefined) sets.push([this.byCve.get(q.cveId.toUpperCase()) ?? []])
    // A tag names hosts: their findings are the candidates, and whichever list is picked, each finding's host must carry it.
    if (q.tag !== undefined && q.scanId === undefined) sets.push(this.taggedParts(q.tag))
    // A key's scope names hosts too: their findings are the candidates, and each finding's host must lie in it.
    const scope = scopeOf(q.scope ?? [])
    if (scope !== null && q.scanId === undefined) sets.push(this.scopedParts((a) => scope.allows(a)))
    const size = (parts: ArrayLike<number>[]): number => parts.reduce((n, p) => n + p.length, 0)
    const candidates = q.scanId !== undefined ? this.scanParts(q.scanId, q.host) : sets.sort((a, b) => size(a) - size(b))[0]
    if (candidates !== undefined) {
      const passes = t.filter(q)
      const tagged = q.tag === undefined ? passes : this.tagFilter(q.tag, passes)
      const test = scope === null ? tagged : this.hostFilter((a) => scope.allows(a), tagged)
      if (size(candidates) > SORT_CANDIDATES_UP_TO) {
        const { mask, total } = t.markAmong(candidates, test)
        const marked = (s: number): boolean => mask[s] === 1
        return { slots: place === null ? this.walkPage(sort, order, offset, limit, total, marked) : keysetPage(place, marked), total }
      }
      const all: number[] = []
      for (const part of candidates) for (let i = 0; i < part.length; i++) if (test(part[i])) all.push(part[i])
      all.sort(findingOrder(t, sort))
      const start = place === null ? offset : all.filter((s) => order === 'asc' ? place(s) <= 0 : place(s) >= 0).length
      return { slots: pageOf(all, order, start, limit), total: all.length }
    }
    // Otherwise one pass over the columns counts the matches, and the page is walked in order to from its nearer end.
    const { mask, total } = t.mark(q)
    const marked = (s: number): boolean => mask[s] === 1
    return { slots: place === null ? this.walkPage(sort, order, offset, limit, total, marked) : keysetPage(place, marked), total }
  }

  /** The findings of every host carrying `tag`, as the hosts' lists of slots. */
  private taggedParts (tag: string): ArrayLike<number>[] {
    const out: ArrayLike<number>[] = []
    for (const h of this.hosts.values()) if (h.record.tags.includes(tag)) out.push(h.slots)
    return out
  }

  /** The findings of every host whose address passes `test`, as the hosts' lists of slots. */
  private scopedParts (test: (address: string) => boolean): ArrayLike<number>[] {
    const out: ArrayLike<number>[] = []
    for (const h of this.hosts.values()) if (test(h.address)) out.push(h.slots)
    return out
  }

  /** `passes`, and the finding's host address passes `test`. */
  private hostFilter (test: (address: string) => boolean, passes: (slot: number) => boolean): (slot: number) => boolean {
    const entries = this.table.entries
    return (s) => passes(s) && test(entries[s]!.address)
  }

  /** `passes`, and the finding's host carries `tag`. */
  private tagFilter (tag: string, passes: (slot: number) => boolean): (slot: number) => boolean {
    const entries = this.table.entries
    return (s) => passes(s) && this.hosts.get(entries[s]!.address)?.record.tags.includes(tag) === true
  }

  /**
   * A page of the findings that pass `test`, `total` of them: walked from whichever end of the order is nearer,
   * so the first and the last pages cost a page, not a scan.
   */
  private walkPage (sort: FindingSort, order: 'asc' | 'desc', offset: number, limit: number, total: number, test: (slot: number) => boolean): number[] {
    const end = Math.min(total, offset + limit)
    if (offset >= end) return []
    const fromEnd = offset > total - end
    // From the far end, the page is the items at positions total - end .. total - offset of the reverse order.
    const start = fromEnd ? total - end : offset
    const want = end - offset
    const out: number[] = []
    let seen = 0
    this.findingList(sort).walk(fromEnd ? (order === 'asc' ? 'desc' : 'asc') : order, 0, (s) => {
      if (!test(s)) return
      if (seen++ >= start) out.push(s)
      return out.length < want
    })
    return fromEnd ? out.reverse() : out
  }

  /**
   * The matching findings are taken in one synchronous step: later writes replace a finding rather than change
   * it, so what is yielded is the state at the start of the export. Records are built one at a time as they go.
   */
  async * streamFindings (query: FindingExportQuery): AsyncGenerator<FindingRecord> {
    const { slots } = this.findingPage(query, query.offset ?? 0, query.limit ?? Number.MAX_SAFE_INTEGER)
    const t = this.table
    // A slot freed and taken again during the export holds another finding then: the ids are kept with the state.
    const snapshot = slots.map((s) => t.entries[s]!)
    const ids = new Uint32Array(slots.length * 3)
    slots.forEach((s, i) => { ids[3 * i] = t.id0[s]; ids[3 * i + 1] = t.id1[s]; ids[3 * i + 2] = t.id2[s] })
    for (let i = 0; i < snapshot.length; i++) yield toRecord(idHex(ids[3 * i], ids[3 * i + 1], ids[3 * i + 2]), snapshot[i])
  }

  async getFinding (id: string): Promise<FindingRecord | null> {
    const slot = this.table.findText(id)
    return slot === -1 ? null : toRecord(id, this.table.entries[slot]!)
  }

  async decideFinding (id: string, status: 'accepted' | 'false_positive' | 'open', comment: string | null, by: string): Promise<FindingRecord | null> {
    const slot = this.table.findText(id)
    if (slot === -1) return null
    const t = this.table
    const f = t.entries[slot]!
    const host = this.hosts.get(f.address)
    if (host === undefined) return null
    const decided = new Finding(f.address, f.port, f.detail, status, f.firstSeen, f.lastSeen, f.lastScanId, f.fixedAt,
      FindingTable.decision(comment, by, new Date().toISOString()))
    this.replaceFinding(slot, decided, t.firstSeen[slot], t.lastSeen[slot])
    this.putHost({ ...host.record, ...this.tallies(host.slots) })
    this.revision++
    return toRecord(id, decided)
  }

  async refreshExploitContext (lookup: ExploitLookup): Promise<number> {
    const t = this.table
    const ids = [...this.byCve.keys()]
    let changed = 0
    for (let i = 0; i < ids.length; i += EXPLOIT_BATCH) {
      const context = await lookup(ids.slice(i, i + EXPLOIT_BATCH))
      // The lookup awaited: findings may have come or gone meanwhile, so each is read afresh.
      for (const [cveId, c] of context) {
        const epss = c.epss ?? null
        const epssKey = JSON.stringify(epss)
        for (const s of [...this.byCve.get(cveId) ?? []]) {
          const f = t.entries[s]!
          const d = f.detail
          const v = d.cve
          const kev = c.kev === undefined ? v.kev : c.kev
          const eu = c.euKev ?? v.eu
          const euvdId = c.euvdId ?? v.euvdId
          if (JSON.stringify(kev) === v.kevKey && epssKey === v.epssKey && eu === v.eu && euvdId === v.euvdId) continue
          const cve = t.cveWith(v.cveId, v.severity, v.cvss, v.cvssVersion, v.cvssVector, kev, epss, v.description, eu, euvdId)
          this.replaceFinding(s, new Finding(f.address, f.port, t.detail(cve, d.product, d.rule, d.observed), f.status, f.firstSeen, f.lastSeen,
            f.lastScanId, f.fixedAt, f.decision), t.firstSeen[s], t.lastSeen[s])
          changed++
        }
      }
    }
    if (changed > 0) this.revision++
    return changed
  }

  async setHostTags (address: string, tags: string[]): Promise<HostRecord | null> {
    return this.changeTags(address, () => tags)
  }

  async addHostTags (address: string, tags: string[], remove: string[] = []): Promise<HostRecord | null> {
    return this.changeTags(address, (current) => editedTags(current, tags, remove))
  }

  /** The host with its tags changed by `change` (synchronously, so atomic like the other writes). */
  private changeTags (address: string, change: (current: readonly string[]) => string[]): HostRecord | null {
    const entry = this.hosts.get(normalizeAddress(address) ?? address)
    if (entry === undefined) return null
    const before = entry.record.tags
    const tags = change(before)
    if (tags.length === before.length && tags.every((t, i) => t === before[i])) return entry.record
    this.putHost(withHostTags(entry.record, tags))
    this.revision++
    return entry.record
  }

  async hostsWithTags (tags: string[]): Promise<string[]> {
    const out: string[] = []
    for (const h of this.hosts.values()) if (tags.some((t) => h.record.tags.includes(t))) out.push(h.address)
    return sortAddresses(out)
  }

  async hostsForCve (cveId: string): Promise<string[]> {
    const out = new Set<string>()
    const entries = this.table.entries
    for (const s of this.byCve.get(cveId.toUpperCase()) ?? []) {
      const f = entries[s]!
      if (isStanding(f.status)) out.add(f.address)
    }
    return sortAddresses([...out])
  }
}
