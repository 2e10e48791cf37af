// The embedded results store: hosts and findings in process memory, with the semantics of results-merge.
import type { HostRecord, Page } from '../types'
import type {
  ExploitLookup, FindingExportQuery, FindingQuery, FindingRecord, HostQuery, HostScanWrite, RecordCounts, ResultsStore
} from '../results-types'
import {
  compareBy, decide, withExploit, FINDING_SORT_DEFAULT_ORDER, findingMatches, findingSortValue, HOST_SORT_DEFAULT_ORDER, hostFacets,
  hostSearchText, hostSortValue, SEVERITY_RANK, hostTallies, isStanding, mergeHostWrite
} from '../results-merge'
import { normalizeAddress, sortAddresses } from '../../addresses'

const EXPLOIT_BATCH = 1000

interface HostEntry {
  record: HostRecord
  /** Sort values, computed once per write rather than once per comparison. */
  keys: Record<NonNullable<HostQuery['sort']>, number | string>
  text: string
  ports: Set<number>
  services: Set<string>
  products: Set<string>
}

function hostMatches (h: HostEntry, q: HostQuery): boolean {
  if (q.q !== undefined && !h.text.includes(q.q.toLowerCase())) return false
  if (q.port !== undefined && !h.ports.has(q.port)) return false
  if (q.service !== undefined && !h.services.has(q.service.toLowerCase())) return false
  if (q.product !== undefined && !h.products.has(q.product.toLowerCase())) return false
  if (q.minSeverity !== undefined && (h.keys.severity as number) < SEVERITY_RANK[q.minSeverity]) return false
  if (q.hasFindings !== undefined && (h.record.findingsCount > 0) !== q.hasFindings) return false
  return true
}

export class MemoryResultsStore implements ResultsStore {
  private readonly hosts = new Map<string, HostEntry>()
  private readonly findings = new Map<string, FindingRecord>()
  private readonly byHost = new Map<string, Set<string>>()
  // Sorted (ascending) views, rebuilt on the first read after a write: reads far outnumber writes.
  private hostViews = new Map<string, HostEntry[]>()
  private findingViews = new Map<string, FindingRecord[]>()

  private hostView (sort: NonNullable<HostQuery['sort']>): HostEntry[] {
    let view = this.hostViews.get(sort)
    if (view === undefined) {
      view = [...this.hosts.values()].sort(compareBy((h) => h.keys[sort], (h) => h.record.address, 'asc'))
      this.hostViews.set(sort, view)
    }
    return view
  }

  private findingView (sort: NonNullable<FindingQuery['sort']>): FindingRecord[] {
    let view = this.findingViews.get(sort)
    if (view === undefined) {
      const keyed = [...this.findings.values()].map((f) => ({ f, k: findingSortValue(f, sort) }))
      view = keyed.sort(compareBy((x) => x.k, (x) => x.f.id, 'asc')).map((x) => x.f)
      this.findingViews.set(sort, view)
    }
    return view
  }

  private revision = 0

  private changed (): void {
    this.revision++
    this.hostViews = new Map()
    this.findingViews = new Map()
  }

  private hostFindings (address: string): FindingRecord[] {
    return [...(this.byHost.get(address) ?? [])].map((id) => this.findings.get(id)).filter((f): f is FindingRecord => f !== undefined)
  }

  private putHost (host: HostRecord): void {
    const keys = {
      lastSeen: hostSortValue(host, 'lastSeen'),
      address: hostSortValue(host, 'address'),
      findings: hostSortValue(host, 'findings'),
      severity: hostSortValue(host, 'severity')
    }
    const facets = hostFacets(host)
    this.hosts.set(host.address, {
      record: host,
      keys,
      text: hostSearchText(host),
      ports: new Set(facets.ports),
      services: new Set(facets.services),
      products: new Set(facets.products)
    })
    this.changed()
  }

  // Everything below runs synchronously between awaits, so each call is atomic like the Redis backend's scripts.
  async recordHost (write: HostScanWrite): Promise<RecordCounts> {
    const address = normalizeAddress(write.host.address)
    if (address === null) throw new Error(`not an IP address: ${JSON.stringify(write.host.address).slice(0, 80)}`)
    const merged = mergeHostWrite(this.hosts.get(address)?.record ?? null, this.hostFindings(address), write, address)
    const ids = new Set<string>()
    for (const f of merged.findings) {
      this.findings.set(f.id, f)
      ids.add(f.id)
    }
    this.byHost.set(address, ids)
    this.putHost(merged.host)
    this.changed()
    return merged.counts
  }

  async recordHosts (writes: HostScanWrite[]): Promise<RecordCounts[]> {
    const out: RecordCounts[] = []
    for (const write of writes) out.push(await this.recordHost(write))
    return out
  }

  async listHosts (query: HostQuery): Promise<Page<HostRecord>> {
    const page = this.hostPage(query)
    return { items: page.items.map((h) => structuredClone(h.record)), total: page.total }
  }

  private hostPage (query: HostQuery): Page<HostEntry> {
    const sort = query.sort ?? 'lastSeen'
    const order = query.order ?? HOST_SORT_DEFAULT_ORDER[sort]
    const view = this.hostView(sort)
    const filtered = query.q !== undefined || query.port !== undefined || query.service !== undefined || query.product !== undefined ||
      query.minSeverity !== undefined || query.hasFindings !== undefined
    const all = filtered ? view.filter((h) => hostMatches(h, query)) : view
    return { items: slice(all, order, query.offset, query.limit), total: all.length }
  }

  async hostsRevision (): Promise<string> {
    return String(this.revision)
  }

  async getHost (address: string): Promise<HostRecord | null> {
    const h = this.hosts.get(normalizeAddress(address) ?? address)
    return h ? structuredClone(h.record) : null
  }

  async deleteHost (address: string): Promise<boolean> {
    const key = normalizeAddress(address) ?? address
    if (!this.hosts.has(key)) return false
    for (const id of this.byHost.get(key) ?? []) this.findings.delete(id)
    this.byHost.delete(key)
    this.hosts.delete(key)
    this.changed()
    return true
  }

  async listFindings (query: FindingQuery): Promise<Page<FindingRecord>> {
    const { all, order } = this.matchingFindings(query)
    return { items: slice(all, order, query.offset, query.limit).map((f) => structuredClone(f)), total: all.length }
  }

  /** The matching findings in ascending order of the query's sort, and the order to read them in. */
  private matchingFindings (query: FindingExportQuery): { all: FindingRecord[], order: 'asc' | 'desc' } {
    const sort = query.sort ?? 'cvss'
    const order = query.order ?? FINDING_SORT_DEFAULT_ORDER[sort]
    const q = query.host === undefined ? query : { ...query, host: normalizeAddress(query.host) ?? query.host }
    const all = q.host !== undefined
      ? this.hostFindings(q.host).filter((f) => findingMatches(f, q)).sort(compareBy((f) => findingSortValue(f, sort), (f) => f.id, 'asc'))
      : this.findingView(sort).filter((f) => findingMatches(f, q))
    return { all, order }
  }

  /** Records are replaced, never changed in place, so the matching list taken at the start is a consistent view. */
  async * streamFindings (query: FindingExportQuery): AsyncGenerator<FindingRecord> {
    const { all, order } = this.matchingFindings(query)
    const rows = slice(all, order, query.offset ?? 0, query.limit ?? all.length)
    for (const f of rows) yield structuredClone(f)
  }

  async getFinding (id: string): Promise<FindingRecord | null> {
    const f = this.findings.get(id)
    return f ? structuredClone(f) : null
  }

  async decideFinding (id: string, status: 'accepted' | 'false_positive' | 'open', comment: string | null, by: string): Promise<FindingRecord | null> {
    const f = this.findings.get(id)
    if (f === undefined) return null
    const decided = decide(f, status, comment, by, new Date().toISOString())
    this.findings.set(id, decided)
    this.changed()
    const host = this.hosts.get(f.address)
    if (host) this.putHost({ ...host.record, ...hostTallies(this.hostFindings(f.address)) })
    return structuredClone(decided)
  }

  async refreshExploitContext (lookup: ExploitLookup): Promise<number> {
    const ids = [...new Set([...this.findings.values()].map((f) => f.cveId))]
    let changed = 0
    for (let i = 0; i < ids.length; i += EXPLOIT_BATCH) {
      const context = await lookup(ids.slice(i, i + EXPLOIT_BATCH))
      for (const [id, f] of this.findings) {
        const c = context.get(f.cveId)
        const next = c === undefined ? null : withExploit(f, c)
        if (next === null) continue
        this.findings.set(id, next)
        changed++
      }
    }
    if (changed > 0) this.changed()
    return changed
  }

  async hostsForCve (cveId: string): Promise<string[]> {
    const id = cveId.toUpperCase()
    const out = new Set<string>()
    for (const f of this.findings.values()) if (f.cveId === id && isStanding(f.status)) out.add(f.address)
    return sortAddresses([...out])
  }
}

/** One page of an ascending list, read in either direction (desc is the exact reverse of asc). */
function slice<T> (ascending: T[], order: 'asc' | 'desc', offset: number, limit: number): T[] {
  if (order === 'asc') return ascending.slice(offset, offset + limit)
  const end = Math.max(0, ascending.length - offset)
  return ascending.slice(Math.max(0, end - limit), end).reverse()
}
