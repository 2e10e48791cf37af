// The embedded results store: hosts and findings in process memory, with the semantics of results-merge.
// Every sort order is kept as a sorted list updated on each write (an item moves only when its sort value
// does), and the equality filters that pick few items (host, CVE; port, service, product) have posting lists,
// so no read re-sorts and no write throws an order away. Records are replaced on every change, never changed
// in place, so they are handed out as they are (frozen) rather than copied.
import type { HostRecord, Page } from '../types'
import type {
  ExploitLookup, FindingExportQuery, FindingQuery, FindingRecord, HostQuery, HostScanWrite, RecordCounts, ResultsStore
} from '../results-types'
import {
  decide, withExploit, FINDING_SORT_DEFAULT_ORDER, findingFilter, findingQueryFilters, findingSortValue, HOST_SORT_DEFAULT_ORDER,
  hostFacets, hostSearchText, hostSortValue, SEVERITY_RANK, hostTallies, isHiddenByDefault, isStanding, mergeHostWrite
} from '../results-merge'
import { normalizeAddress, sortAddresses } from '../../addresses'
import { SortedList } from './sorted-list'

const EXPLOIT_BATCH = 1000
/** Distinct texts (and small objects) kept for sharing before the table starts afresh. */
const TEXTS_MAX = 200_000
const NO_PLATFORMS: string[] = Object.freeze([]) as unknown as string[]

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
  findings: Map<string, FindingEntry>
}

/** One finding: its current record and its sort values (fields of their own: no object per key). Lives as long as the finding. */
interface FindingEntry {
  record: FindingRecord
  id: string
  /** The id's first 13 hex digits as a number: ties compare numbers first, the id text only on a clash. */
  tie: number
  cvss: number
  lastSeen: number
  firstSeen: number
  risk: number
}

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

const FINDING_ORDERS: Record<FindingSort, (a: FindingEntry, b: FindingEntry) => number> = {
  cvss: (a, b) => (a.cvss - b.cvss) || (a.tie - b.tie) || compareText(a.id, b.id),
  lastSeen: (a, b) => (a.lastSeen - b.lastSeen) || (a.tie - b.tie) || compareText(a.id, b.id),
  firstSeen: (a, b) => (a.firstSeen - b.firstSeen) || (a.tie - b.tie) || compareText(a.id, b.id),
  risk: (a, b) => (a.risk - b.risk) || (a.tie - b.tie) || compareText(a.id, b.id)
}

function findingOrder (sort: FindingSort): (a: FindingEntry, b: FindingEntry) => number {
  return FINDING_ORDERS[sort]
}

function hostMatcher (q: HostQuery): ((h: HostEntry) => boolean) | null {
  const text = q.q?.toLowerCase()
  const service = q.service?.toLowerCase()
  const product = q.product?.toLowerCase()
  const minRank = q.minSeverity === undefined ? undefined : SEVERITY_RANK[q.minSeverity]
  const { port, hasFindings } = q
  if (text === undefined && port === undefined && service === undefined && product === undefined && minRank === undefined && hasFindings === undefined) return null
  return (h) => {
    if (text !== undefined && !h.text.includes(text)) return false
    if (port !== undefined && !h.ports.includes(port)) return false
    if (service !== undefined && !h.services.includes(service)) return false
    if (product !== undefined && !h.products.includes(product)) return false
    if (minRank !== undefined && (h.keys.severity as number) < minRank) return false
    if (hasFindings !== undefined && (h.record.findingsCount > 0) !== hasFindings) return false
    return true
  }
}

/** Sets of items by a value, for the equality filters. */
class Postings<K, T> {
  private readonly sets = new Map<K, Set<T>>()

  get (key: K): Set<T> | undefined {
    return this.sets.get(key)
  }

  add (keys: Iterable<K>, item: T): void {
    for (const k of keys) {
      let set = this.sets.get(k)
      if (set === undefined) this.sets.set(k, set = new Set())
      set.add(item)
    }
  }

  remove (keys: Iterable<K>, item: T): void {
    for (const k of keys) {
      const set = this.sets.get(k)
      if (set === undefined) continue
      set.delete(item)
      if (set.size === 0) this.sets.delete(k)
    }
  }
}

function sameKeys<K extends string> (a: Record<K, number | string>, b: Record<K, number | string>, sorts: readonly K[]): boolean {
  for (const s of sorts) if (a[s] !== b[s]) return false
  return true
}

function sameList<T> (a: T[], b: T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
}

/** The items of `ascending` from `offset` on in the given order, at most `limit`: a page of a small candidate list. */
function pageOf<T> (ascending: T[], order: 'asc' | 'desc', offset: number, limit: number): T[] {
  if (order === 'asc') return ascending.slice(offset, offset + limit)
  const end = Math.max(0, ascending.length - offset)
  return ascending.slice(Math.max(0, end - limit), end).reverse()
}

export class MemoryResultsStore implements ResultsStore {
  private readonly hosts = new Map<string, HostEntry>()
  private readonly findings = new Map<string, FindingEntry>()
  private readonly byCve = new Postings<string, FindingEntry>()
  private readonly byPort = new Postings<number, HostEntry>()
  private readonly byService = new Postings<string, HostEntry>()
  private readonly byProduct = new Postings<string, HostEntry>()
  // Each order is built on its first read and kept up to date from then on.
  private readonly hostLists = new Map<HostSort, SortedList<HostEntry>>()
  private readonly findingLists = new Map<FindingSort, SortedList<FindingEntry>>()
  /** Findings the default lists leave out: while there are none, an unfiltered list is a plain slice. */
  private hidden = 0
  private revision = 0

  private hostList (sort: HostSort): SortedList<HostEntry> {
    let list = this.hostLists.get(sort)
    if (list === undefined) {
      list = new SortedList(hostOrder(sort))
      list.reset([...this.hosts.values()])
      this.hostLists.set(sort, list)
    }
    return list
  }

  private findingList (sort: FindingSort): SortedList<FindingEntry> {
    let list = this.findingLists.get(sort)
    if (list === undefined) {
      list = new SortedList(findingOrder(sort))
      list.reset([...this.findings.values()])
      this.findingLists.set(sort, list)
    }
    return list
  }

  private putHost (record: HostRecord): HostEntry {
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
      entry = { record, address: record.address, keys, text, ...facets, findings: new Map() }
      this.hosts.set(entry.address, entry)
      for (const list of this.hostLists.values()) list.insert(entry)
      this.byPort.add(entry.ports, entry)
      this.byService.add(entry.services, entry)
      this.byProduct.add(entry.products, entry)
      return entry
    }
    const moved = sameKeys(entry.keys, keys, HOST_SORTS) ? [] : [...this.hostLists.values()]
    for (const list of moved) list.delete(entry)
    entry.keys = keys
    for (const list of moved) list.insert(entry)
    entry.record = record
    entry.text = text
    if (!sameList(entry.ports, facets.ports)) {
      this.byPort.remove(entry.ports, entry)
      this.byPort.add(entry.ports = facets.ports, entry)
    }
    if (!sameList(entry.services, facets.services)) {
      this.byService.remove(entry.services, entry)
      this.byService.add(entry.services = facets.services, entry)
    }
    if (!sameList(entry.products, facets.products)) {
      this.byProduct.remove(entry.products, entry)
      this.byProduct.add(entry.products = facets.products, entry)
    }
    return entry
  }

  private putFinding (host: HostEntry, record: FindingRecord): void {
    this.compact(record)
    Object.freeze(record)
    const cvss = findingSortValue(record, 'cvss')
    const lastSeen = findingSortValue(record, 'lastSeen')
    const firstSeen = findingSortValue(record, 'firstSeen')
    const risk = findingSortValue(record, 'risk')
    if (isHiddenByDefault(record.status)) this.hidden++
    let entry = this.findings.get(record.id)
    if (entry === undefined) {
      // Ids are findingId's hex digits.
      entry = { record, id: record.id, tie: parseInt(record.id.slice(0, 13), 16), cvss, lastSeen, firstSeen, risk }
      this.findings.set(entry.id, entry)
      host.findings.set(entry.id, entry)
      this.byCve.add([record.cveId], entry)
      for (const list of this.findingLists.values()) list.insert(entry)
      return
    }
    if (isHiddenByDefault(entry.record.status)) this.hidden--
    const moved: SortedList<FindingEntry>[] = []
    const e = entry
    const next = { cvss, lastSeen, firstSeen, risk }
    for (const [sort, list] of this.findingLists) if (e[sort] !== next[sort]) moved.push(list)
    for (const list of moved) list.delete(entry)
    entry.cvss = cvss
    entry.lastSeen = lastSeen
    entry.firstSeen = firstSeen
    entry.risk = risk
    for (const list of moved) list.insert(entry)
    entry.record = record
  }

  /**
   * Findings repeat most of their texts (a CVE's description, a product's CPE and rule, a scan's timestamps):
   * one copy of each is kept, so that memory grows with what differs. The table is dropped when it grows past
   * its bound (texts already shared stay shared).
   */
  private readonly texts = new Map<string, string>()

  private text<T extends string | null> (s: T): T {
    if (s === null) return s
    const known = this.texts.get(s)
    if (known !== undefined) return known as T
    if (this.texts.size >= TEXTS_MAX) this.texts.clear()
    this.texts.set(s, s)
    return s
  }

  private shared<T extends object | null> (o: T): T {
    if (o === null) return o
    const key = JSON.stringify(o)
    const known = this.objects.get(key)
    if (known !== undefined) return known as T
    if (this.objects.size >= TEXTS_MAX) this.objects.clear()
    // A copy: the caller's object stays the caller's to change.
    const copy = Object.freeze(structuredClone(o))
    this.objects.set(key, copy)
    return copy
  }

  private readonly objects = new Map<string, object>()

  private compact (f: FindingRecord): void {
    f.address = this.text(f.address)
    f.cveId = this.text(f.cveId)
    f.cvssVersion = this.text(f.cvssVersion)
    f.cvssVector = this.text(f.cvssVector)
    f.description = this.text(f.description)
    f.product = this.text(f.product)
    f.version = this.text(f.version)
    f.matchedCpe = this.text(f.matchedCpe)
    f.criterion = this.text(f.criterion)
    f.reason = this.text(f.reason)
    f.rule = this.text(f.rule)
    f.confidenceNote = this.text(f.confidenceNote)
    f.evidence = this.text(f.evidence)
    f.firstSeen = this.text(f.firstSeen)
    f.lastSeen = this.text(f.lastSeen)
    f.lastScanId = this.text(f.lastScanId)
    f.fixedAt = this.text(f.fixedAt)
    f.kev = this.shared(f.kev)
    f.epss = this.shared(f.epss)
    f.distribution = this.shared(f.distribution)
    f.requiresPlatform = f.requiresPlatform.length === 0 ? NO_PLATFORMS : this.shared(f.requiresPlatform)
  }

  private hostFindings (address: string): FindingRecord[] {
    const host = this.hosts.get(address)
    return host === undefined ? [] : [...host.findings.values()].map((f) => f.record)
  }

  // Everything below runs synchronously between awaits, so each call is atomic like the Redis backend's scripts.
  async recordHost (write: HostScanWrite): Promise<RecordCounts> {
    return this.record(write)
  }

  private record (write: HostScanWrite): RecordCounts {
    const address = normalizeAddress(write.host.address)
    if (address === null) throw new Error(`not an IP address: ${JSON.stringify(write.host.address).slice(0, 80)}`)
    const merged = mergeHostWrite(this.hosts.get(address)?.record ?? null, this.hostFindings(address), write, address)
    const host = this.putHost(merged.host)
    for (const f of merged.findings) this.putFinding(host, f)
    this.revision++
    return merged.counts
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
    const { offset, limit } = query
    const matches = hostMatcher(query)
    if (matches === null) {
      return { items: this.hostList(sort).slice(order, offset, limit).map((h) => h.record), total: this.hosts.size }
    }
    // A port, service or product names a posting list: its hosts are the candidates, put in order.
    const postings = [
      query.port === undefined ? undefined : this.byPort.get(query.port) ?? new Set<HostEntry>(),
      query.service === undefined ? undefined : this.byService.get(query.service.toLowerCase()) ?? new Set<HostEntry>(),
      query.product === undefined ? undefined : this.byProduct.get(query.product.toLowerCase()) ?? new Set<HostEntry>()
    ].filter((s): s is Set<HostEntry> => s !== undefined)
    const smallest = postings.sort((a, b) => a.size - b.size)[0]
    if (smallest !== undefined && smallest.size < this.hosts.size / 4) {
      const all = [...smallest].filter(matches).sort(hostOrder(sort))
      return { items: pageOf(all, order, offset, limit).map((h) => h.record), total: all.length }
    }
    const items: HostRecord[] = []
    let total = 0
    this.hostList(sort).walk(order, 0, (h) => {
      if (!matches(h)) return
      if (total >= offset && items.length < limit) items.push(h.record)
      total++
    })
    return { items, total }
  }

  async hostsRevision (): Promise<string> {
    return String(this.revision)
  }

  async getHost (address: string): Promise<HostRecord | null> {
    return this.hosts.get(normalizeAddress(address) ?? address)?.record ?? null
  }

  async deleteHost (address: string): Promise<boolean> {
    const entry = this.hosts.get(normalizeAddress(address) ?? address)
    if (entry === undefined) return false
    for (const f of entry.findings.values()) {
      for (const list of this.findingLists.values()) list.delete(f)
      this.byCve.remove([f.record.cveId], f)
      if (isHiddenByDefault(f.record.status)) this.hidden--
      this.findings.delete(f.id)
    }
    for (const list of this.hostLists.values()) list.delete(entry)
    this.byPort.remove(entry.ports, entry)
    this.byService.remove(entry.services, entry)
    this.byProduct.remove(entry.products, entry)
    this.hosts.delete(entry.address)
    this.revision++
    return true
  }

  async listFindings (query: FindingQuery): Promise<Page<FindingRecord>> {
    return this.findingPage(query, query.offset, query.limit)
  }

  private findingPage (query: FindingExportQuery, offset: number, limit: number): Page<FindingRecord> {
    const sort = query.sort ?? 'cvss'
    const order = query.order ?? FINDING_SORT_DEFAULT_ORDER[sort]
    const q = query.host === undefined ? query : { ...query, host: normalizeAddress(query.host) ?? query.host }
    if (!findingQueryFilters(q)) {
      if (this.hidden === 0) return { items: this.findingList(sort).slice(order, offset, limit).map((f) => f.record), total: this.findings.size }
      return { items: this.defaultPage(sort, order, offset, limit), total: this.findings.size - this.hidden }
    }
    const matches = findingFilter(q)
    // A host or a CVE names a posting list: its findings are the candidates, put in order.
    const lists: FindingEntry[][] = []
    if (q.host !== undefined) lists.push([...this.hosts.get(q.host)?.findings.values() ?? []])
    if (q.cveId !== undefined) lists.push([...this.byCve.get(q.cveId.toUpperCase()) ?? []])
    const candidates = lists.sort((a, b) => a.length - b.length)[0]
    if (candidates !== undefined) {
      const all = candidates.filter((f) => matches(f.record)).sort(findingOrder(sort))
      return { items: pageOf(all, order, offset, limit).map((f) => f.record), total: all.length }
    }
    const items: FindingRecord[] = []
    let total = 0
    this.findingList(sort).walk(order, 0, (f) => {
      if (!matches(f.record)) return
      if (total >= offset && items.length < limit) items.push(f.record)
      total++
    })
    return { items, total }
  }

  /**
   * A page of the default list (every finding but the hidden statuses), whose total is known: walked from
   * whichever end is nearer, so the first and the last pages cost a page, not a scan.
   */
  private defaultPage (sort: FindingSort, order: 'asc' | 'desc', offset: number, limit: number): FindingRecord[] {
    const total = this.findings.size - this.hidden
    const end = Math.min(total, offset + limit)
    if (offset >= end) return []
    const fromEnd = offset > total - end
    // From the far end, the page is the items at positions total - end .. total - offset of the reverse order.
    const start = fromEnd ? total - end : offset
    const want = end - offset
    const out: FindingRecord[] = []
    let seen = 0
    this.findingList(sort).walk(fromEnd ? (order === 'asc' ? 'desc' : 'asc') : order, 0, (f) => {
      if (isHiddenByDefault(f.record.status)) return
      if (seen++ >= start) out.push(f.record)
      return out.length < want
    })
    return fromEnd ? out.reverse() : out
  }

  /**
   * The matching records are taken in one synchronous step: later writes replace records rather than change
   * them, so what is yielded is the state at the start of the export.
   */
  async * streamFindings (query: FindingExportQuery): AsyncGenerator<FindingRecord> {
    const { items } = this.findingPage(query, query.offset ?? 0, query.limit ?? Number.MAX_SAFE_INTEGER)
    yield * items
  }

  async getFinding (id: string): Promise<FindingRecord | null> {
    return this.findings.get(id)?.record ?? null
  }

  async decideFinding (id: string, status: 'accepted' | 'false_positive' | 'open', comment: string | null, by: string): Promise<FindingRecord | null> {
    const f = this.findings.get(id)
    if (f === undefined) return null
    const decided = decide(f.record, status, comment, by, new Date().toISOString())
    const host = this.hosts.get(decided.address)
    if (host === undefined) return null
    this.putFinding(host, decided)
    this.putHost({ ...host.record, ...hostTallies(this.hostFindings(host.address)) })
    this.revision++
    return decided
  }

  async refreshExploitContext (lookup: ExploitLookup): Promise<number> {
    const ids = [...new Set([...this.findings.values()].map((f) => f.record.cveId))]
    let changed = 0
    for (let i = 0; i < ids.length; i += EXPLOIT_BATCH) {
      const context = await lookup(ids.slice(i, i + EXPLOIT_BATCH))
      // The lookup awaited: findings may have come or gone meanwhile, so each is read afresh.
      for (const [cveId, c] of context) {
        for (const f of [...this.byCve.get(cveId) ?? []]) {
          const next = withExploit(f.record, c)
          const host = this.hosts.get(f.record.address)
          if (next === null || host === undefined) continue
          this.putFinding(host, next)
          changed++
        }
      }
    }
    if (changed > 0) this.revision++
    return changed
  }

  async hostsForCve (cveId: string): Promise<string[]> {
    const out = new Set<string>()
    for (const f of this.byCve.get(cveId.toUpperCase()) ?? []) if (isStanding(f.record.status)) out.add(f.record.address)
    return sortAddresses([...out])
  }
}
