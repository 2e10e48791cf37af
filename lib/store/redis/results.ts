// The Redis results store. Records are JSON strings (`<prefix>:host:<address>`, `<prefix>:finding:<id>`) with
// sorted sets and sets beside them for sorting and filtering. A write reads the host's state in one script,
// computes the new state with results-merge, and applies every change in a second script that first checks
// the host's revision: all or nothing, and a concurrent writer to the same host retries instead of losing
// an update.
import type { Redis } from 'ioredis'
import type { HostRecord, Page } from '../types'
import type {
  ExploitLookup, ExploitUpdate, FindingExportQuery, FindingQuery, FindingRecord, HostQuery, HostScanWrite, RecordCounts, ResultsStore
} from '../results-types'
import {
  decide, withExploit, FINDING_SORT_DEFAULT_ORDER, HIDDEN_BY_DEFAULT, HOST_SORT_DEFAULT_ORDER, hostFacets, hostSearchText, hostTallies,
  isStanding, mergeHostWrite, riskValue, SEVERITY_RANK, severityScore
} from '../results-merge'
import { addressSortKey, normalizeAddress, sortAddresses } from '../../addresses'

const SNAPSHOT_LUA = `
local out = { redis.call('GET', KEYS[1]) or '0', redis.call('GET', KEYS[2]) or false }
local ids = redis.call('SMEMBERS', KEYS[3])
for _, id in ipairs(ids) do out[#out + 1] = redis.call('GET', ARGV[1] .. id) or false end
return out
`

const APPLY_LUA = `
if (redis.call('GET', KEYS[1]) or '0') ~= ARGV[1] then return 0 end
local ops = cjson.decode(ARGV[2])
for _, op in ipairs(ops) do redis.call(unpack(op)) end
if ARGV[3] == '1' then redis.call('DEL', KEYS[1]) else redis.call('INCR', KEYS[1]) end
return 1
`

// One round trip for any page. Unfiltered: a slice of the sort index. Filtered: the filters become sorted sets
// intersected with the sort index inside Redis (sets as they are, score ranges through ZRANGESTORE, exclusions
// through ZDIFFSTORE), so scores and tie order are the index's own; only a text filter walks the matches.
// Address order is lexical, so for it the matches are re-keyed into a scratch set. Scratch keys are deleted
// before the script returns.
const QUERY_LUA = `
local s = cjson.decode(ARGV[1])
local range = s.desc and 'ZREVRANGE' or 'ZRANGE'
local first = s.offset
local last = s.offset + s.limit - 1
local page = {}
local total = 0
local scratch = {}
local function tmp (name)
  local k = s.tmp .. ':' .. name
  scratch[#scratch + 1] = k
  return k
end
local function strip (list)
  for i, m in ipairs(list) do list[i] = string.sub(m, string.find(m, '|', 1, true) + 1) end
  return list
end
if #s.sets == 0 and #s.notSets == 0 and #s.ranges == 0 and not s.text then
  total = redis.call('ZCARD', s.sort)
  page = redis.call(range, s.sort, first, last)
  if s.lex then strip(page) end
else
  local matches = tmp('matches')
  local args = { matches, 1 + #s.sets + #s.ranges, s.byMember }
  local weights = { 'WEIGHTS', 1 }
  for _, k in ipairs(s.sets) do
    args[#args + 1] = k
    weights[#weights + 1] = 0
  end
  for i, r in ipairs(s.ranges) do
    local k = tmp('range' .. i)
    redis.call('ZRANGESTORE', k, r[1], r[2], r[3], 'BYSCORE')
    args[#args + 1] = k
    weights[#weights + 1] = 0
  end
  for _, w in ipairs(weights) do args[#args + 1] = w end
  redis.call('ZINTERSTORE', unpack(args))
  for _, k in ipairs(s.notSets) do redis.call('ZDIFFSTORE', matches, 2, matches, k) end
  if s.text then
    for _, m in ipairs(redis.call('ZRANGE', matches, 0, -1)) do
      local t = redis.call('HGET', s.text[1], m)
      if not t or not string.find(t, s.text[2], 1, true) then redis.call('ZREM', matches, m) end
    end
  end
  local ordered = matches
  if s.lex then
    ordered = tmp('ordered')
    for _, m in ipairs(redis.call('ZRANGE', matches, 0, -1)) do
      redis.call('ZADD', ordered, 0, (redis.call('HGET', s.lexHash, m) or '') .. '|' .. m)
    end
  end
  total = redis.call('ZCARD', ordered)
  page = redis.call(range, ordered, first, last)
  if s.lex then strip(page) end
  redis.call('DEL', unpack(scratch))
end
local out = { total }
if #page > 0 then
  for i, m in ipairs(page) do page[i] = s.rec .. m end
  for i, j in ipairs(redis.call('MGET', unpack(page))) do out[i + 1] = j end
end
return out
`

type RedisWithResults = Redis & {
  vulnscanResultsSnapshot(rev: string, host: string, hostFindings: string, findingPrefix: string): Promise<[string, string | null, ...(string | null)[]]>
  vulnscanResultsApply(rev: string, expected: string, ops: string, deleteRev: string): Promise<number>
  vulnscanResultsQuery(spec: string): Promise<[number, ...(string | null)[]]>
}

interface QuerySpec {
  sort: string
  /** A sorted set whose members are the record ids (the sort index itself unless that one is lexical). */
  byMember: string
  lex: boolean
  lexHash?: string
  desc: boolean
  offset: number
  limit: number
  rec: string
  tmp: string
  sets: string[]
  notSets: string[]
  ranges: [string, string, string][]
  text: [string, string] | false
}
const MAX_ATTEMPTS = 50
const EXPLOIT_BATCH = 500

type Op = string[]

const STREAM_PAGE = 500

export class RedisResultsStore implements ResultsStore {
  private readonly redis: RedisWithResults

  constructor (redis: Redis, private readonly prefix: string) {
    const r = redis as unknown as Partial<RedisWithResults>
    if (typeof r.vulnscanResultsSnapshot !== 'function') redis.defineCommand('vulnscanResultsSnapshot', { numberOfKeys: 3, lua: SNAPSHOT_LUA })
    if (typeof r.vulnscanResultsApply !== 'function') redis.defineCommand('vulnscanResultsApply', { numberOfKeys: 1, lua: APPLY_LUA })
    if (typeof r.vulnscanResultsQuery !== 'function') redis.defineCommand('vulnscanResultsQuery', { numberOfKeys: 0, lua: QUERY_LUA })
    this.redis = redis as RedisWithResults
  }

  private key (...parts: (string | number)[]): string {
    return [this.prefix, ...parts].join(':')
  }

  private async snapshot (address: string): Promise<{ rev: string, host: HostRecord | null, findings: FindingRecord[] }> {
    const [rev, host, ...findings] = await this.redis.vulnscanResultsSnapshot(
      this.key('host-rev', address), this.key('host', address), this.key('findings', 'host', address), this.key('finding', ''))
    return {
      rev,
      host: host === null ? null : JSON.parse(host) as HostRecord,
      findings: findings.filter((f): f is string => f !== null).map((f) => JSON.parse(f) as FindingRecord)
    }
  }

  private async apply (address: string, rev: string, ops: Op[], deleteRev = false): Promise<boolean> {
    if (ops.length === 0) return true
    return await this.redis.vulnscanResultsApply(this.key('host-rev', address), rev, JSON.stringify(ops), deleteRev ? '1' : '0') === 1
  }

  /** Commands that move a host from `prev` to `next` (null: absent), its indexes included. */
  private hostOps (prev: HostRecord | null, next: HostRecord | null): Op[] {
    const ops: Op[] = []
    const address = (next ?? prev)!.address
    const before = prev ? hostFacets(prev) : { ports: [], services: [], products: [] }
    const after = next ? hostFacets(next) : { ports: [], services: [], products: [] }
    const facet = (kind: 'port' | 'service' | 'product', olds: (string | number)[], news: (string | number)[]): void => {
      for (const v of olds) if (!news.includes(v)) ops.push(['SREM', this.key('hosts', kind, v), address])
      for (const v of news) ops.push(['SADD', this.key('hosts', kind, v), address])
    }
    facet('port', before.ports, after.ports)
    facet('service', before.services, after.services)
    facet('product', before.products, after.products)
    const sortKey = `${addressSortKey(address)}|${address}`
    if (next === null) {
      ops.push(
        ['DEL', this.key('host', address)],
        ['ZREM', this.key('hosts'), address],
        ['ZREM', this.key('hosts', 'by-findings'), address],
        ['ZREM', this.key('hosts', 'by-severity'), address],
        ['ZREM', this.key('hosts', 'by-address'), sortKey],
        ['HDEL', this.key('hosts', 'text'), address],
        ['HDEL', this.key('hosts', 'addr-key'), address],
        ['INCR', this.key('hosts', 'rev')])
      return ops
    }
    ops.push(
      ['SET', this.key('host', address), JSON.stringify(next)],
      ['ZADD', this.key('hosts'), String(Date.parse(next.lastSeen)), address],
      ['ZADD', this.key('hosts', 'by-findings'), String(next.findingsCount), address],
      ['ZADD', this.key('hosts', 'by-severity'), String(severityScore(next.maxSeverity)), address],
      ['ZADD', this.key('hosts', 'by-address'), '0', sortKey],
      ['HSET', this.key('hosts', 'text'), address, hostSearchText(next)],
      ['HSET', this.key('hosts', 'addr-key'), address, addressSortKey(address)],
      ['INCR', this.key('hosts', 'rev')])
    return ops
  }

  private findingSets (f: FindingRecord): string[] {
    const sets = [
      this.key('findings', 'cve', f.cveId),
      this.key('findings', 'status', f.status),
      this.key('findings', 'severity', f.severity),
      this.key('findings', 'confidence', f.confidence)
    ]
    if (f.kev !== null) sets.push(this.key('findings', 'kev'))
    return sets
  }

  /** Commands that move a finding from `prev` to `next` (null: absent), its indexes included. */
  private findingOps (prev: FindingRecord | null, next: FindingRecord | null): Op[] {
    const ops: Op[] = []
    const id = (next ?? prev)!.id
    const olds = prev ? this.findingSets(prev) : []
    const news = next ? this.findingSets(next) : []
    for (const k of olds) if (!news.includes(k)) ops.push(['SREM', k, id])
    if (next === null) {
      ops.push(
        ['DEL', this.key('finding', id)],
        ['SREM', this.key('findings', 'host', prev!.address), id],
        ['ZREM', this.key('findings', 'by-cvss'), id],
        ['ZREM', this.key('findings', 'by-lastSeen'), id],
        ['ZREM', this.key('findings', 'by-firstSeen'), id],
        ['ZREM', this.key('findings', 'by-risk'), id],
        ['ZREM', this.key('findings', 'by-epss'), id])
      return ops
    }
    for (const k of news) ops.push(['SADD', k, id])
    ops.push(
      ['SET', this.key('finding', id), JSON.stringify(next)],
      ['SADD', this.key('findings', 'host', next.address), id],
      ['ZADD', this.key('findings', 'by-cvss'), String(next.cvss ?? -1), id],
      ['ZADD', this.key('findings', 'by-lastSeen'), String(Date.parse(next.lastSeen)), id],
      ['ZADD', this.key('findings', 'by-firstSeen'), String(Date.parse(next.firstSeen)), id],
      ['ZADD', this.key('findings', 'by-risk'), String(riskValue(next)), id],
      ['ZADD', this.key('findings', 'by-epss'), String(next.epss?.score ?? -1), id])
    return ops
  }

  async recordHost (write: HostScanWrite): Promise<{ newFindings: number, fixed: number, reopened: number }> {
    const address = normalizeAddress(write.host.address)
    if (address === null) throw new Error(`not an IP address: ${JSON.stringify(write.host.address).slice(0, 80)}`)
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const state = await this.snapshot(address)
      const merged = mergeHostWrite(state.host, state.findings, write, address)
      const before = new Map(state.findings.map((f) => [f.id, f]))
      const ops: Op[] = []
      for (const f of merged.findings) {
        const prev = before.get(f.id) ?? null
        if (prev === null || JSON.stringify(prev) !== JSON.stringify(f)) ops.push(...this.findingOps(prev, f))
      }
      if (state.host === null || JSON.stringify(state.host) !== JSON.stringify(merged.host)) ops.push(...this.hostOps(state.host, merged.host))
      if (await this.apply(address, state.rev, ops)) return merged.counts
    }
    throw new Error(`results for ${address} kept changing under concurrent writes; gave up after ${MAX_ATTEMPTS} attempts`)
  }

  private async query (spec: Omit<QuerySpec, 'tmp'>): Promise<Page<string>> {
    const [total, ...items] = await this.redis.vulnscanResultsQuery(JSON.stringify({ ...spec, tmp: this.key('tmp', 'query') }))
    return { items: items.filter((r): r is string => typeof r === 'string'), total }
  }

  async listHosts (query: HostQuery): Promise<Page<HostRecord>> {
    const page = await this.query(this.hostSpec(query))
    return { items: page.items.map((j) => JSON.parse(j) as HostRecord), total: page.total }
  }

  private hostSpec (query: HostQuery): Omit<QuerySpec, 'tmp'> {
    const sort = query.sort ?? 'lastSeen'
    const order = query.order ?? HOST_SORT_DEFAULT_ORDER[sort]
    const sets: string[] = []
    if (query.port !== undefined) sets.push(this.key('hosts', 'port', query.port))
    if (query.service !== undefined) sets.push(this.key('hosts', 'service', query.service.toLowerCase()))
    if (query.product !== undefined) sets.push(this.key('hosts', 'product', query.product.toLowerCase()))
    const ranges: [string, string, string][] = []
    if (query.minSeverity !== undefined) ranges.push([this.key('hosts', 'by-severity'), String(SEVERITY_RANK[query.minSeverity]), '+inf'])
    if (query.hasFindings !== undefined) ranges.push([this.key('hosts', 'by-findings'), query.hasFindings ? '1' : '-inf', query.hasFindings ? '+inf' : '0'])
    const sortKeys = { lastSeen: 'hosts', address: 'hosts:by-address', findings: 'hosts:by-findings', severity: 'hosts:by-severity' }
    return {
      sort: this.key(sortKeys[sort]),
      byMember: this.key(sort === 'address' ? 'hosts' : sortKeys[sort]),
      lex: sort === 'address',
      lexHash: this.key('hosts', 'addr-key'),
      desc: order === 'desc',
      offset: query.offset,
      limit: query.limit,
      rec: this.key('host', ''),
      sets,
      notSets: [],
      ranges,
      text: query.q !== undefined && query.q !== '' ? [this.key('hosts', 'text'), query.q.toLowerCase()] : false
    }
  }

  async hostsRevision (): Promise<string> {
    return (await this.redis.get(this.key('hosts', 'rev'))) ?? '0'
  }

  async getHost (address: string): Promise<HostRecord | null> {
    const raw = await this.redis.get(this.key('host', normalizeAddress(address) ?? address))
    return raw === null ? null : JSON.parse(raw) as HostRecord
  }

  async deleteHost (address: string): Promise<boolean> {
    const key = normalizeAddress(address) ?? address
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const state = await this.snapshot(key)
      if (state.host === null) return false
      const ops: Op[] = []
      for (const f of state.findings) ops.push(...this.findingOps(f, null))
      ops.push(['DEL', this.key('findings', 'host', key)], ...this.hostOps(state.host, null))
      if (await this.apply(key, state.rev, ops, true)) return true
    }
    throw new Error(`could not delete ${key}: it kept changing under concurrent writes`)
  }

  async recordHosts (writes: HostScanWrite[]): Promise<RecordCounts[]> {
    const out: RecordCounts[] = []
    for (const write of writes) out.push(await this.recordHost(write))
    return out
  }

  /** Page by page: rows written during the read may shift a page (this store has no snapshot to read from). */
  async * streamFindings (query: FindingExportQuery): AsyncGenerator<FindingRecord> {
    let remaining = query.limit ?? Infinity
    let offset = query.offset ?? 0
    while (remaining > 0) {
      const limit = Math.min(STREAM_PAGE, remaining)
      const page = await this.listFindings({ ...query, limit, offset })
      yield * page.items
      offset += page.items.length
      remaining -= page.items.length
      if (page.items.length < limit) return
    }
  }

  async listFindings (query: FindingQuery): Promise<Page<FindingRecord>> {
    const sort = query.sort ?? 'cvss'
    const order = query.order ?? FINDING_SORT_DEFAULT_ORDER[sort]
    const sets: string[] = []
    const notSets: string[] = []
    if (query.host !== undefined) sets.push(this.key('findings', 'host', normalizeAddress(query.host) ?? query.host))
    if (query.cveId !== undefined) sets.push(this.key('findings', 'cve', query.cveId.toUpperCase()))
    if (query.status !== undefined) sets.push(this.key('findings', 'status', query.status))
    else for (const st of HIDDEN_BY_DEFAULT) notSets.push(this.key('findings', 'status', st))
    if (query.severity !== undefined) sets.push(this.key('findings', 'severity', query.severity))
    if (query.confidence !== undefined) sets.push(this.key('findings', 'confidence', query.confidence))
    if (query.kev === true) sets.push(this.key('findings', 'kev'))
    if (query.kev === false) notSets.push(this.key('findings', 'kev'))
    const ranges: [string, string, string][] = []
    if (query.minCvss !== undefined) ranges.push([this.key('findings', 'by-cvss'), String(query.minCvss), '+inf'])
    if (query.minEpss !== undefined) ranges.push([this.key('findings', 'by-epss'), String(query.minEpss), '+inf'])
    const page = await this.query({
      sort: this.key('findings', `by-${sort}`),
      byMember: this.key('findings', `by-${sort}`),
      lex: false,
      desc: order === 'desc',
      offset: query.offset,
      limit: query.limit,
      rec: this.key('finding', ''),
      sets,
      notSets,
      ranges,
      text: false
    })
    return { items: page.items.map((j) => JSON.parse(j) as FindingRecord), total: page.total }
  }

  async getFinding (id: string): Promise<FindingRecord | null> {
    const raw = await this.redis.get(this.key('finding', id))
    return raw === null ? null : JSON.parse(raw) as FindingRecord
  }

  async decideFinding (id: string, status: 'accepted' | 'false_positive' | 'open', comment: string | null, by: string): Promise<FindingRecord | null> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const found = await this.getFinding(id)
      if (found === null) return null
      const state = await this.snapshot(found.address)
      const prev = state.findings.find((f) => f.id === id)
      // Deleted (with its host) between the two reads.
      if (prev === undefined) continue
      const next = decide(prev, status, comment, by, new Date().toISOString())
      const ops = this.findingOps(prev, next)
      if (state.host !== null) {
        const tallies = hostTallies(state.findings.map((f) => f.id === id ? next : f))
        ops.push(...this.hostOps(state.host, { ...state.host, ...tallies }))
      }
      if (await this.apply(found.address, state.rev, ops)) return next
    }
    throw new Error(`could not decide finding ${id}: its host kept changing under concurrent writes`)
  }

  async refreshExploitContext (lookup: ExploitLookup): Promise<number> {
    // Findings are walked per CVE (each CVE's set holds its findings), a batch of CVEs at a time; each
    // changed finding is written under its host's revision like any other write, so a concurrent scan wins or retries.
    const cves: string[] = []
    let cursor = '0'
    const pattern = this.key('findings', 'cve', '*')
    const strip = this.key('findings', 'cve', '').length
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
      cursor = next
      for (const k of keys) cves.push(k.slice(strip))
    } while (cursor !== '0')
    let changed = 0
    for (let i = 0; i < cves.length; i += EXPLOIT_BATCH) {
      const batch = cves.slice(i, i + EXPLOIT_BATCH)
      const context = await lookup(batch)
      for (const cve of batch) {
        const c = context.get(cve)
        if (c === undefined) continue
        for (const id of await this.redis.smembers(this.key('findings', 'cve', cve))) {
          if (await this.refreshOne(id, c)) changed++
        }
      }
    }
    return changed
  }

  private async refreshOne (id: string, c: ExploitUpdate): Promise<boolean> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const found = await this.getFinding(id)
      if (found === null || withExploit(found, c) === null) return false
      const state = await this.snapshot(found.address)
      const prev = state.findings.find((f) => f.id === id)
      const next = prev === undefined ? null : withExploit(prev, c)
      if (prev === undefined || next === null) return false
      if (await this.apply(found.address, state.rev, this.findingOps(prev, next))) return true
    }
    throw new Error(`could not refresh finding ${id}: its host kept changing under concurrent writes`)
  }

  async hostsForCve (cveId: string): Promise<string[]> {
    const ids = await this.redis.smembers(this.key('findings', 'cve', cveId.toUpperCase()))
    if (ids.length === 0) return []
    const raws = await this.redis.mget(ids.map((id) => this.key('finding', id)))
    const out = new Set<string>()
    for (const raw of raws) {
      if (raw === null) continue
      const f = JSON.parse(raw) as FindingRecord
      if (isStanding(f.status)) out.add(f.address)
    }
    return sortAddresses([...out])
  }
}
