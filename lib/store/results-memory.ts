// The embedded results store: hosts and findings in process memory, with the semantics of results-merge.
import type { HostRecord, Page } from './types'
import type { FindingQuery, FindingRecord, HostQuery, HostScanWrite, ResultsStore } from './results-types'
import {
  compareBy, decide, FINDING_SORT_DEFAULT_ORDER, findingMatches, findingSortValue, HOST_SORT_DEFAULT_ORDER, hostMatches,
  hostSortValue, hostTallies, isStanding, mergeHostWrite, normalizeAddress, sortAddresses
} from './results-merge'

export class MemoryResultsStore implements ResultsStore {
  private readonly hosts = new Map<string, { record: HostRecord, json: string }>()
  private readonly findings = new Map<string, FindingRecord>()
  private readonly byHost = new Map<string, Set<string>>()

  private hostFindings (address: string): FindingRecord[] {
    return [...(this.byHost.get(address) ?? [])].map((id) => this.findings.get(id)).filter((f): f is FindingRecord => f !== undefined)
  }

  private putHost (host: HostRecord): void {
    this.hosts.set(host.address, { record: host, json: JSON.stringify(host) })
  }

  // Everything below runs synchronously between awaits, so each call is atomic like the Redis backend's scripts.
  async recordHost (write: HostScanWrite): Promise<{ newFindings: number, fixed: number, reopened: number }> {
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
    return merged.counts
  }

  async listHostsJson (query: HostQuery): Promise<Page<string>> {
    const sort = query.sort ?? 'lastSeen'
    const order = query.order ?? HOST_SORT_DEFAULT_ORDER[sort]
    const all = [...this.hosts.values()]
      .filter((h) => hostMatches(h.record, query))
      .sort(compareBy((h) => hostSortValue(h.record, sort), (h) => h.record.address, order))
    return { items: all.slice(query.offset, query.offset + query.limit).map((h) => h.json), total: all.length }
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
    return true
  }

  async listFindings (query: FindingQuery): Promise<Page<FindingRecord>> {
    const sort = query.sort ?? 'cvss'
    const order = query.order ?? FINDING_SORT_DEFAULT_ORDER[sort]
    const q = query.host === undefined ? query : { ...query, host: normalizeAddress(query.host) ?? query.host }
    const source = q.host !== undefined ? this.hostFindings(q.host) : [...this.findings.values()]
    const all = source.filter((f) => findingMatches(f, q)).sort(compareBy((f) => findingSortValue(f, sort), (f) => f.id, order))
    return { items: all.slice(query.offset, query.offset + query.limit).map((f) => structuredClone(f)), total: all.length }
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
    const host = this.hosts.get(f.address)
    if (host) this.putHost({ ...host.record, ...hostTallies(this.hostFindings(f.address)) })
    return structuredClone(decided)
  }

  async hostsForCve (cveId: string): Promise<string[]> {
    const id = cveId.toUpperCase()
    const out = new Set<string>()
    for (const f of this.findings.values()) if (f.cveId === id && isStanding(f.status)) out.add(f.address)
    return sortAddresses([...out])
  }
}
