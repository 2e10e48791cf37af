// The PostgreSQL results store (the scaled deployment). Each host and finding is one row: the record as json
// beside a column per filter and sort key. A write locks its hosts, reads their state, merges with
// results-merge in Node (the embedded store's own rules) and writes what changed in one transaction, with the
// counts of findings per low-cardinality filter (in all, and per scan and host tag), the counts of hosts per facet
// and the hosts revision. Lists are indexed queries; exports read through a cursor inside one REPEATABLE READ
// transaction.
import { isDeepStrictEqual } from 'node:util'
import type { Pool, PoolClient, QueryConfig } from 'pg'
import type { HostRecord } from '../../domain/hosts'
import type { Page } from '../types'
import type { ExploitLookup, FindingExportQuery, FindingQuery, HostQuery, HostScanWrite, RecordCounts, ResultsStore, ScanHostRecord } from '../results-types'
import type { FindingRecord } from '../../domain/findings'
import { readCursor, READ_LIMIT_MS, Slots, type CheckedOut } from './cursor'
import { byAddress, fromPortKey, mergeScanHead, portKey, speaksFor, type ScanHostHead } from '../scan-hosts'
import {
  decide, FINDING_SORT_DEFAULT_ORDER, findingId, isCheckFinding, findingSortValue, HIDDEN_BY_DEFAULT, HOST_SORT_DEFAULT_ORDER, hostFacets, hostSearchText,
  hostSortValue, hostTallies, isStanding, kevCataloguesOfFinding, mergeHostWrite, SEVERITY_RANK, withExploit, withHostTags
} from '../results-merge'
import type { KevFilter } from '../../vocabulary'
import { normalizeAddress, sortAddresses } from '../../addresses'
import { editedTags } from '../../tags'
import type { ListPosition } from '../../list-cursor'
import { scopeNetworks } from '../../scanner/targets'
import {
  applyCounts, applyGroupCounts, CountDeltas, EPSS_BUCKETS, epssBucket, GroupDeltas, HostCountDeltas, moveInScans, sameFindingKey, scanGroup, tagGroup,
  writeGroupDeltas, type CountKey, type Moved, type ScanHostRow
} from './counts'

const EXPLOIT_BATCH = 1000
/** Findings read and rewritten per transaction by refreshExploitContext. */
const REFRESH_CHUNK = 5000
const STREAM_ROWS = 1000
/**
 * Rows written by this process after which it vacuums and analyzes the tables it writes (in the background): a
 * table filled faster than autovacuum looks at it (an insert-only table waits for 20% growth; a server may have
 * autovacuum off) is otherwise planned as if empty, so that a filtered page reads thousands of rows to sort them
 * instead of walking an index; its new pages are not all-visible, so that a count through an index reads every
 * row's page as well; and its GIN indexes keep new entries in a pending list that each query through them scans
 * (at 100,000 hosts, unvacuumed: `q` with an address prefix p99 147 ms, a whole-network scan's hosts 136 ms;
 * vacuumed: 103 ms and 47 ms). VACUUM only visits the pages changed since the last one: 1-3 s at 2 million findings.
 */
const VACUUM_AFTER = 50_000
/** The tables every host write changes. */
const WRITTEN_TABLES = 'hosts, findings, scan_hosts, host_counts, finding_counts, finding_epss_counts, finding_group_counts, results_revision'
/** Transient failures a write transaction is retried on: serialization failure, deadlock. */
const RETRY_CODES = new Set(['40001', '40P01'])
const MAX_ATTEMPTS = 20

const HOST_SORT_COLUMN = { lastSeen: 'last_seen_ms', address: 'addr_key', findings: 'findings_count', severity: 'severity_score' } as const
/** Filtered host lists with at most this many matches sort them, rather than walk a sort index for them. */
const SORT_MATCHES_UP_TO = 10_000
const FINDING_SORT_COLUMN = { cvss: 'cvss_sort', lastSeen: 'last_seen_ms', firstSeen: 'first_seen_ms', risk: 'risk', severity: 'severity_risk' } as const

// Rows go to the database as one array per column and the records as one text, each record's JSON on a line of its
// own (JSON.stringify escapes every line break inside a string): the server splits them and reads each record
// once, rather than parsing one JSON document for all the columns. An UPSERT of a batch is one statement.

/**
 * The records' JSON texts, one a line: `string_to_array($n, E'\n')` gives them back in order. `texts` holds
 * those already made (by the caller, to compare with the stored ones), by position.
 */
function recordLines (records: readonly object[], texts?: readonly string[]): string {
  return records.map((r, i) => texts?.[i] ?? JSON.stringify(r)).join('\n')
}

/** Integer arrays as array literals, to be cast per row (unnest of a two-dimensional array would flatten them). */
function intArrayText (values: readonly number[]): string {
  return `{${values.join(',')}}`
}

function hostParams (hosts: readonly HostRecord[]): unknown[] {
  const cols: unknown[][] = [[], [], [], [], [], [], [], [], [], []]
  for (const h of hosts) {
    const facets = hostFacets(h)
    cols[0].push(h.address)
    cols[1].push(hostSortValue(h, 'address'))
    cols[2].push(hostSortValue(h, 'lastSeen'))
    cols[3].push(h.findingsCount)
    cols[4].push(hostSortValue(h, 'severity'))
    cols[5].push(hostSearchText(h))
    cols[6].push(intArrayText(facets.ports))
    cols[7].push(JSON.stringify(facets.services))
    cols[8].push(JSON.stringify(facets.products))
    cols[9].push(JSON.stringify(h.tags ?? []))
  }
  return [...cols, recordLines(hosts)]
}

function findingParams (findings: readonly FindingRecord[], texts?: readonly string[]): unknown[] {
  const cols: unknown[][] = [[], [], [], [], [], [], [], [], [], [], [], [], [], [], [], []]
  for (const f of findings) {
    cols[0].push(f.id)
    cols[1].push(f.address)
    cols[2].push(f.cveId)
    cols[3].push(f.severity)
    cols[4].push(f.cvss)
    cols[5].push(findingSortValue(f, 'cvss'))
    cols[6].push(f.epss?.score ?? null)
    cols[7].push(f.kev !== null)
    cols[8].push(f.status)
    cols[9].push(f.confidence)
    cols[10].push(findingSortValue(f, 'firstSeen'))
    cols[11].push(findingSortValue(f, 'lastSeen'))
    cols[12].push(findingSortValue(f, 'risk'))
    cols[13].push(findingSortValue(f, 'severity'))
    cols[14].push(f.confidenceScore)
    cols[15].push(kevCataloguesOfFinding(f).includes('eu'))
  }
  return [...cols, recordLines(findings, texts)]
}

// Service and product names are arbitrary text: each host's list goes as a JSON array (a text of its own), turned
// into text[] on the server.
const UPSERT_HOSTS = `
INSERT INTO hosts (address, addr_key, last_seen_ms, findings_count, severity_score, search, ports, services, products, tags, record)
SELECT address, addr_key, last_seen_ms, findings_count, severity_score, search, ports::integer[],
  ARRAY(SELECT json_array_elements_text(services::json)), ARRAY(SELECT json_array_elements_text(products::json)),
  ARRAY(SELECT json_array_elements_text(tags::json)), record::json
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::integer[], $5::smallint[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
  string_to_array($11::text, E'\n')) AS x(address, addr_key, last_seen_ms, findings_count, severity_score, search, ports, services, products, tags, record)
ON CONFLICT (address) DO UPDATE SET addr_key = EXCLUDED.addr_key, last_seen_ms = EXCLUDED.last_seen_ms,
  findings_count = EXCLUDED.findings_count, severity_score = EXCLUDED.severity_score, search = EXCLUDED.search, ports = EXCLUDED.ports,
  services = EXCLUDED.services, products = EXCLUDED.products, tags = EXCLUDED.tags, record = EXCLUDED.record`

const UPSERT_FINDINGS = `
INSERT INTO findings (id, address, cve_id, severity, cvss, cvss_sort, epss, kev, status, confidence, first_seen_ms, last_seen_ms, risk, severity_risk, confidence_score, kev_eu, record)
SELECT id, address, cve_id, severity, cvss, cvss_sort, epss, kev, status, confidence, first_seen_ms, last_seen_ms, risk, severity_risk, confidence_score, kev_eu, record::json
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::double precision[], $6::double precision[], $7::double precision[],
  $8::boolean[], $9::text[], $10::text[], $11::bigint[], $12::bigint[], $13::bigint[], $14::bigint[], $15::smallint[], $16::boolean[], string_to_array($17::text, E'\n'))
  AS x(id, address, cve_id, severity, cvss, cvss_sort, epss, kev, status, confidence, first_seen_ms, last_seen_ms, risk, severity_risk, confidence_score, kev_eu, record)
ON CONFLICT (id) DO UPDATE SET cve_id = EXCLUDED.cve_id, severity = EXCLUDED.severity, cvss = EXCLUDED.cvss,
  cvss_sort = EXCLUDED.cvss_sort, epss = EXCLUDED.epss, kev = EXCLUDED.kev, status = EXCLUDED.status, confidence = EXCLUDED.confidence,
  first_seen_ms = EXCLUDED.first_seen_ms, last_seen_ms = EXCLUDED.last_seen_ms, risk = EXCLUDED.risk, severity_risk = EXCLUDED.severity_risk,
  confidence_score = EXCLUDED.confidence_score, kev_eu = EXCLUDED.kev_eu,
  record = EXCLUDED.record`

const UPSERT_SCAN_HOSTS = `
INSERT INTO scan_hosts (scan_id, address, finding_ids, finding_ports, record)
SELECT scan_id, address, finding_ids::text[], finding_ports::integer[], record::json
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], string_to_array($5::text, E'\n')) AS x(scan_id, address, finding_ids, finding_ports, record)
ON CONFLICT (scan_id, address) DO UPDATE SET finding_ids = EXCLUDED.finding_ids, finding_ports = EXCLUDED.finding_ports, record = EXCLUDED.record`

/** The scan's snapshot of a host after one more write (scan-hosts.ts's rules), with the findings it observed by id. */
function mergeScanRow (prev: ScanHostRow | undefined, write: HostScanWrite, address: string, findings: ReadonlyMap<string, FindingRecord>): ScanHostRow {
  const head = mergeScanHead(prev?.head ?? null, write)
  const byId = new Map<string, number>()
  if (prev !== undefined) {
    const speaks = speaksFor(write)
    prev.ids.forEach((id, i) => {
      const { port, protocol } = fromPortKey(prev.ports[i])
      const f = findings.get(id)
      if (!speaks(port, protocol, f !== undefined && isCheckFinding(f))) byId.set(id, prev.ports[i])
    })
  }
  for (const nf of write.findings) byId.set(findingId(address, nf.port, nf.cveId, nf.protocol), portKey(nf.port, nf.protocol))
  const ids = [...byId.keys()].sort()
  return { head, text: JSON.stringify(head), ids, ports: ids.map((id) => byId.get(id) as number) }
}

/** Host-level lock keys, taken in one order by every writer: two writes to one host run one after the other. */
const LOCK_HOSTS = `
SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT hashtextextended(a, 7310) AS k FROM unnest($1::text[]) AS a ORDER BY 1) AS s`

/**
 * A key's scope as inet networks for `address::inet <<= ANY(…)`: each IPv4 network also as its IPv4-mapped IPv6
 * network, since a host may be stored under that spelling and the scope treats the two alike.
 */
function scopeInets (scope: readonly string[]): string[] {
  return scopeNetworks(scope).flatMap((n) => n.family === 4 ? [n.cidr, `::ffff:${n.cidr.split('/')[0]}/${96 + n.prefix}`] : [n.cidr])
}

/** Whether a query carries a key's scope (which the kept counts know nothing of). */
function scoped (query: { scope?: readonly string[] }): boolean {
  return query.scope !== undefined && query.scope.length > 0
}

/** Whether the kept counts answer the query's kev filter: they know CISA's listing (column kev), not the EU's. */
function kevCounted (query: { kev?: KevFilter }): boolean {
  return query.kev === undefined || query.kev === 'cisa'
}

/** The kev filter on the findings table: any catalogue, none, or ENISA's EU KEV (kev_eu). */
function kevWhere (want: KevFilter): string {
  if (want === true) return '(kev OR kev_eu)'
  if (want === false) return 'NOT kev AND NOT kev_eu'
  return want === 'eu' ? 'kev_eu' : 'kev'
}

function escapeLike (s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`)
}

class Params {
  readonly values: unknown[] = []
  add (v: unknown): string {
    this.values.push(v)
    return `$${this.values.length}`
  }
}

interface FindingSql { where: string, conditions: string[], params: Params, order: 'asc' | 'desc', column: string }

export interface PostgresResultsStoreOptions {
  /** Connections whose search_path is the results schema. */
  pool: Pool
}

export class PostgresResultsStore implements ResultsStore {
  private readonly pool: Pool
  private written = 0
  private vacuuming: Promise<void> | null = null

  /** Exports streaming at once (each holds a connection): half the pool, so that lists keep connections to use. */
  private readonly exports: Slots

  constructor (opts: PostgresResultsStoreOptions) {
    this.pool = opts.pool
    this.exports = new Slots(Math.max(1, Math.floor((opts.pool.options.max ?? 10) / 2)))
  }

  private wrote (rows: number): void {
    this.written += rows
    if (this.written < VACUUM_AFTER || this.vacuuming !== null) return
    this.written = 0
    // Best effort: a failed VACUUM leaves autovacuum to do it later.
    this.vacuuming = this.vacuum().then(() => {}, () => {}).finally(() => { this.vacuuming = null })
  }

  async ping (): Promise<void> {
    await this.pool.query('SELECT 1')
  }

  /** VACUUM (ANALYZE) of the tables host writes change: what a writer runs in the background every VACUUM_AFTER rows. */
  async vacuum (): Promise<void> {
    // Longer than the per-query limit (DATABASE_QUERY_TIMEOUT_MS) a busy database may need for it.
    await this.pool.query({ text: `VACUUM (ANALYZE) ${WRITTEN_TABLES}`, query_timeout: 600_000 } as QueryConfig)
  }

  /** Whether the server runs autovacuum (its default; some servers turn it off). */
  async autovacuumOn (): Promise<boolean> {
    return (await this.pool.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0].autovacuum === 'on'
  }

  /**
   * A client of the pool, held until `release`. pg emits 'error' on a client whose connection is lost (the server
   * restarted, pg_terminate_backend, idle_in_transaction_session_timeout) even between queries; the pool listens
   * only while the client is idle in it, so a held client needs a listener of its own, or the error ends the
   * process. The error is kept: the next query fails anyway, and the connection is dropped from the pool.
   */
  private async checkout (): Promise<CheckedOut> {
    const client = await this.pool.connect()
    let lost: Error | undefined
    const onError = (err: Error): void => { lost ??= err }
    client.on('error', onError)
    return {
      client,
      lost: () => lost,
      release: (err) => {
        client.removeListener('error', onError)
        client.release(err ?? lost)
      }
    }
  }

  /** Run `fn` in a transaction, again from the start on a deadlock or serialization failure. */
  private async transaction<T> (fn: (c: PoolClient) => Promise<T>, isolation = 'READ COMMITTED'): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const { client, release } = await this.checkout()
      let broken: Error | undefined
      try {
        await client.query(`BEGIN ISOLATION LEVEL ${isolation}`)
        const out = await fn(client)
        await client.query('COMMIT')
        return out
      } catch (err) {
        await client.query('ROLLBACK').catch((e: Error) => { broken = e })
        const code = (err as { code?: string }).code
        if (code !== undefined && RETRY_CODES.has(code) && attempt < MAX_ATTEMPTS && broken === undefined) continue
        throw err
      } finally {
        release(broken)
      }
    }
  }

  /** The revision moves; `added` hosts came (or, negative, went) in this transaction. */
  private async bumpRevision (c: PoolClient, added = 0): Promise<void> {
    await c.query('UPDATE results_revision SET hosts = hosts + 1, host_total = host_total + $1', [added])
  }

  async recordHost (write: HostScanWrite): Promise<RecordCounts> {
    return (await this.recordHosts([write]))[0]
  }

  async recordHosts (writes: HostScanWrite[]): Promise<RecordCounts[]> {
    if (writes.length === 0) return []
    const addresses = writes.map((w) => {
      const address = normalizeAddress(w.host.address)
      if (address === null) throw new Error(`not an IP address: ${JSON.stringify(w.host.address).slice(0, 80)}`)
      return address
    })
    const distinct = [...new Set(addresses)]
    const written = await this.transaction(async (c) => {
      await c.query(LOCK_HOSTS, [distinct])
      // One after another: a client runs one query at a time anyway, and pg refuses queries queued on a busy client.
      const hostRows = await c.query<{ record: HostRecord }>('SELECT record FROM hosts WHERE address = ANY($1::text[])', [distinct])
      // Locked in id order, as every other writer of findings locks them: a refresh of KEV data waits or is waited for.
      // As text: a finding is rewritten only when its JSON differs from the stored text (the json column keeps it
      // exactly as written), and the new text is the one sent.
      const findingRows = await c.query<{ text: string }>('SELECT record::text AS text FROM findings WHERE address = ANY($1::text[]) ORDER BY id FOR UPDATE', [distinct])
      // Rows of a first write of each scan are not there: a probe of the primary key each.
      const scanRows = await c.query<{ scan_id: string, address: string, text: string, finding_ids: string[], finding_ports: number[] }>(
        'SELECT scan_id, address, record::text AS text, finding_ids, finding_ports FROM scan_hosts WHERE (scan_id, address) IN (SELECT * FROM unnest($1::text[], $2::text[]))',
        [writes.map((w) => w.scanId), addresses])
      const hostsBefore = new Map(hostRows.rows.map((r) => [r.record.address, r.record]))
      const textBefore = new Map<string, string>()
      const findingsBefore = new Map<string, FindingRecord>()
      for (const { text } of findingRows.rows) {
        const f = JSON.parse(text) as FindingRecord
        findingsBefore.set(f.id, f)
        textBefore.set(f.id, text)
      }
      const hosts = new Map(hostsBefore)
      const byHost = new Map<string, FindingRecord[]>()
      for (const f of findingsBefore.values()) {
        const list = byHost.get(f.address)
        if (list === undefined) byHost.set(f.address, [f])
        else list.push(f)
      }
      const scansBefore = new Map<string, ScanHostRow>()
      for (const r of scanRows.rows) {
        scansBefore.set(`${r.scan_id}\n${r.address}`, { head: JSON.parse(r.text) as ScanHostHead, text: r.text, ids: r.finding_ids, ports: r.finding_ports })
      }
      const scans = new Map(scansBefore)
      const out: RecordCounts[] = []
      for (const [i, write] of writes.entries()) {
        const address = addresses[i]
        const merged = mergeHostWrite(hosts.get(address) ?? null, byHost.get(address) ?? [], write, address)
        hosts.set(address, merged.host)
        byHost.set(address, merged.findings)
        out.push(merged.counts)
        const key = `${write.scanId}\n${address}`
        // A finding's kind (CVE or exposure check) decides which settled ports speak for it: the host's findings say it.
        scans.set(key, mergeScanRow(scans.get(key), write, address, new Map(merged.findings.map((f) => [f.id, f]))))
      }

      const changedHosts = [...hosts.values()].filter((h) => !isDeepStrictEqual(hostsBefore.get(h.address), h))
      const hostDeltas = new HostCountDeltas()
      for (const h of changedHosts) {
        const prev = hostsBefore.get(h.address)
        if (prev !== undefined) hostDeltas.add(prev, -1)
        hostDeltas.add(h, 1)
      }
      const deltas = new CountDeltas()
      const changedFindings: FindingRecord[] = []
      const changedTexts: string[] = []
      for (const list of byHost.values()) {
        for (const f of list) {
          const text = JSON.stringify(f)
          if (textBefore.get(f.id) === text) continue
          const prev = findingsBefore.get(f.id)
          changedFindings.push(f)
          changedTexts.push(text)
          if (prev !== undefined) deltas.add(prev, -1)
          deltas.add(f, 1)
        }
      }
      if (changedHosts.length > 0) await c.query(UPSERT_HOSTS, hostParams(changedHosts))
      if (changedFindings.length > 0) await c.query(UPSERT_FINDINGS, findingParams(changedFindings, changedTexts))
      const changedScans = [...scans].filter(([key, row]) => {
        const before = scansBefore.get(key)
        return before === undefined || before.text !== row.text || !isDeepStrictEqual(before.ids, row.ids) || !isDeepStrictEqual(before.ports, row.ports)
      })
      if (changedScans.length > 0) {
        await c.query(UPSERT_SCAN_HOSTS, [
          changedScans.map(([key]) => key.slice(0, key.lastIndexOf('\n'))),
          changedScans.map(([key]) => key.slice(key.lastIndexOf('\n') + 1)),
          changedScans.map(([, r]) => `{${r.ids.join(',')}}`),
          changedScans.map(([, r]) => intArrayText(r.ports)),
          changedScans.map(([, r]) => r.text).join('\n')
        ])
      }
      await applyCounts(c, deltas, hostDeltas)
      await applyGroupCounts(c, await writeGroupDeltas(c, { hosts: hostsBefore, findings: findingsBefore, scans: scansBefore }, { hosts, findings: byHost, scans }))
      await this.bumpRevision(c, changedHosts.filter((h) => !hostsBefore.has(h.address)).length)
      return { out, rows: changedHosts.length + changedFindings.length + changedScans.length }
    })
    this.wrote(written.rows)
    return written.out
  }

  async listHosts (query: HostQuery): Promise<Page<HostRecord>> {
    const sort = query.sort ?? 'lastSeen'
    const order = query.order ?? HOST_SORT_DEFAULT_ORDER[sort]
    const p = new Params()
    const where: string[] = []
    if (query.q !== undefined && query.q !== '') where.push(`search LIKE ${p.add(`%${escapeLike(query.q.toLowerCase())}%`)}`)
    if (query.port !== undefined) where.push(`ports @> ARRAY[${p.add(query.port)}::integer]`)
    if (query.service !== undefined) where.push(`services @> ARRAY[${p.add(query.service.toLowerCase())}::text]`)
    if (query.product !== undefined) where.push(`products @> ARRAY[${p.add(query.product.toLowerCase())}::text]`)
    if (query.minSeverity !== undefined) where.push(`severity_score >= ${p.add(SEVERITY_RANK[query.minSeverity])}`)
    if (query.hasFindings !== undefined) where.push(query.hasFindings ? 'findings_count > 0' : 'findings_count = 0')
    if (query.scanId !== undefined) where.push(`address IN (SELECT address FROM scan_hosts WHERE scan_id = ${p.add(query.scanId)})`)
    if (query.tag !== undefined) where.push(`tags @> ARRAY[${p.add(query.tag)}::text]`)
    if (scoped(query)) where.push(`address::inet <<= ANY(${p.add(scopeInets(query.scope ?? []))}::inet[])`)
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''
    const count = async (): Promise<number> => await this.countHosts(query, where.length === 0 ? null : `SELECT count(*) AS n FROM hosts ${clause}`, p)
    if (where.length === 0 && query.offset === 0 && query.after === undefined) {
      return await this.firstPage<HostRecord>(`SELECT record FROM hosts ${clause}`, p, HOST_SORT_COLUMN[sort], 'address', order, query.limit, count)
    }
    // A filter's matches are counted first (through its own index): none needs no page, and a few are read through
    // that index and sorted, rather than found by walking the sort index past every host that does not match
    // (`q=10.40.24.` at 100,000 hosts: 93,625 rows walked, 64 ms, against 8 ms).
    const total = await count()
    if (total === 0 && query.after === undefined) return { items: [], total }
    const column = where.length > 0 && total <= SORT_MATCHES_UP_TO ? `(${HOST_SORT_COLUMN[sort]}${sort === 'address' ? " || ''" : ' + 0'})` : HOST_SORT_COLUMN[sort]
    if (query.after !== undefined) {
      const items = await this.pageAfter<HostRecord>('hosts', where, p, column, 'address', order, query.after, query.limit)
      return { items, total }
    }
    const items = await this.page<HostRecord>(`SELECT record FROM hosts ${clause}`, p, column, 'address', order, query.offset, query.limit, total)
    return { items, total }
  }

  /**
   * The number of hosts a list holds. Unfiltered, the total kept by every host write and delete; filtered on one
   * facet (port, service, product or tag) or none, with minSeverity and hasFindings or not, a sum over host_counts
   * (kept by the same writes); a scan's alone, its rows in scan_hosts; otherwise `counting`, a count over the
   * matching rows (a whole-network scan's hosts at 100,000: 54 ms joined, 9 ms its rows alone).
   */
  private async countHosts (query: HostQuery, counting: string | null, p: Params): Promise<number> {
    if (counting === null) return Number((await this.pool.query<{ n: string }>('SELECT host_total AS n FROM results_revision')).rows[0].n)
    const facets: [string, string][] = []
    if (query.port !== undefined) facets.push(['port', String(query.port)])
    if (query.service !== undefined) facets.push(['service', query.service.toLowerCase()])
    if (query.product !== undefined) facets.push(['product', query.product.toLowerCase()])
    if (query.tag !== undefined) facets.push(['tag', query.tag])
    const noQ = query.q === undefined || query.q === ''
    // A scan's hosts are its rows: each written with its host and deleted with it (the primary key's own order).
    if (scoped(query)) return Number((await this.pool.query<{ n: string }>(counting, p.values)).rows[0].n)
    if (query.scanId !== undefined && facets.length === 0 && noQ && query.minSeverity === undefined && query.hasFindings === undefined) {
      return Number((await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM scan_hosts WHERE scan_id = $1', [query.scanId])).rows[0].n)
    }
    const kept = facets.length <= 1 && noQ && query.scanId === undefined
    if (!kept) return Number((await this.pool.query<{ n: string }>(counting, p.values)).rows[0].n)
    const k = new Params()
    const [facet, value] = facets[0] ?? ['', '']
    const where = [`facet = ${k.add(facet)}`, `value = ${k.add(value)}`]
    if (query.minSeverity !== undefined) where.push(`severity_score >= ${k.add(SEVERITY_RANK[query.minSeverity])}`)
    if (query.hasFindings !== undefined) where.push(`has_findings = ${k.add(query.hasFindings)}`)
    const r = await this.pool.query<{ n: string | null }>(`SELECT sum(n) AS n FROM host_counts WHERE ${where.join(' AND ')}`, k.values)
    return Number(r.rows[0].n ?? 0)
  }

  /** The page after a place in the order (keyset paging): the sort index walked from that place, however deep it is. */
  private async pageAfter<T> (table: string, where: string[], p: Params, column: string, tie: string, order: 'asc' | 'desc', after: ListPosition, limit: number): Promise<T[]> {
    if (limit <= 0) return []
    const dir = order === 'asc' ? 'ASC' : 'DESC'
    const beyond = `(${column}, ${tie}) ${order === 'asc' ? '>' : '<'} (${p.add(after.value)}, ${p.add(after.key)})`
    const sql = `SELECT record FROM ${table} WHERE ${[...where, beyond].join(' AND ')} ORDER BY ${column} ${dir}, ${tie} ${dir} LIMIT ${p.add(limit)}`
    return (await this.pool.query<{ record: T }>(sql, p.values)).rows.map((r) => r.record)
  }

  /** The first page, read before the count: a list shorter than a page (a host's findings, a narrow filter) is its own total. */
  private async firstPage<T> (select: string, p: Params, column: string, tie: string, order: 'asc' | 'desc', limit: number, count: () => Promise<number>): Promise<Page<T>> {
    const items = await this.page<T>(select, p, column, tie, order, 0, limit, Number.POSITIVE_INFINITY)
    return { items, total: items.length < limit ? items.length : await count() }
  }

  /**
   * One page of an ordered list. A page past the middle is read from the other end (a short OFFSET in the
   * reverse order) and turned around: the last page costs what the first does.
   */
  private async page<T> (select: string, p: Params, column: string, tie: string, order: 'asc' | 'desc', offset: number, limit: number, total: number): Promise<T[]> {
    if (offset >= total || limit <= 0) return []
    const fromEnd = total - offset - limit
    const reverse = fromEnd < offset
    const dir = (order === 'asc') !== reverse ? 'ASC' : 'DESC'
    const n = Math.min(limit, total - offset)
    const skip = reverse ? Math.max(0, fromEnd) : offset
    const values = [...p.values, n, skip]
    const sql = `${select} ORDER BY ${column} ${dir}, ${tie} ${dir} LIMIT $${values.length - 1} OFFSET $${values.length}`
    const rows = (await this.pool.query<{ record: T }>(sql, values)).rows.map((r) => r.record)
    return reverse ? rows.reverse() : rows
  }

  async getHost (address: string): Promise<HostRecord | null> {
    const r = await this.pool.query<{ record: HostRecord }>('SELECT record FROM hosts WHERE address = $1', [normalizeAddress(address) ?? address])
    return r.rows[0]?.record ?? null
  }

  async hostsRevision (): Promise<string> {
    return String((await this.pool.query<{ hosts: string }>('SELECT hosts FROM results_revision')).rows[0].hosts)
  }

  async deleteHost (address: string): Promise<boolean> {
    const key = normalizeAddress(address) ?? address
    return await this.transaction(async (c) => {
      await c.query(LOCK_HOSTS, [[key]])
      const found = await c.query<{ record: HostRecord }>('SELECT record FROM hosts WHERE address = $1', [key])
      if (found.rowCount === 0) return false
      const gone = await c.query<{ record: FindingRecord }>('SELECT record FROM findings WHERE address = $1 ORDER BY id FOR UPDATE', [key])
      await c.query('DELETE FROM findings WHERE address = $1', [key])
      const host = await c.query<{ tags: string[] }>('DELETE FROM hosts WHERE address = $1 RETURNING tags', [key])
      const scans = await c.query<{ scan_id: string, finding_ids: string[] }>('DELETE FROM scan_hosts WHERE address = $1 RETURNING scan_id, finding_ids', [key])
      const deltas = new CountDeltas()
      for (const r of gone.rows) deltas.add(r.record, -1)
      const hostDeltas = new HostCountDeltas()
      hostDeltas.add(found.rows[0].record, -1)
      // The host's findings leave every group: its tags' and those of the scans that saw them.
      const groups = new GroupDeltas()
      const byId = new Map(gone.rows.map((r) => [r.record.id, r.record]))
      for (const tag of host.rows[0]?.tags ?? []) for (const f of byId.values()) groups.moveFinding(tagGroup(tag), f, undefined)
      for (const r of scans.rows) for (const id of r.finding_ids) groups.moveFinding(scanGroup(r.scan_id), byId.get(id), undefined)
      await applyCounts(c, deltas, hostDeltas)
      await applyGroupCounts(c, groups)
      await this.bumpRevision(c, -1)
      return true
    })
  }

  /**
   * `group`, for a scan's or a tag's list: `walk` tests rows met on the sort index for membership one by one (a scan
   * row by its key, a host by its address); `read` reads the group's findings host by host (findings_by_host).
   */
  private findingSql (query: FindingExportQuery, group?: 'walk' | 'read'): FindingSql {
    const sort = query.sort ?? 'cvss'
    const order = query.order ?? FINDING_SORT_DEFAULT_ORDER[sort]
    const p = new Params()
    const where: string[] = []
    if (query.host !== undefined) where.push(`address = ${p.add(normalizeAddress(query.host) ?? query.host)}`)
    if (query.cveId !== undefined) where.push(`cve_id = ${p.add(query.cveId.toUpperCase())}`)
    // Rare beside the others (package findings are read per host): tested on the record, counted row by row.
    if (query.source !== undefined) where.push(`record->>'source' = ${p.add(query.source)}`)
    if (query.scanId !== undefined) {
      // The planner cannot estimate `id = ANY(finding_ids)` and guesses a handful of matches: it joins the scan's rows
      // to their findings through findings_by_host, a host's findings together (a quarter of the pages the ids'
      // index lookups read for a 1,000-host scan). To walk, OFFSET 0 keeps the probe a per-row test, or it would do
      // that join for a whole-network scan too and sort its millions (6 s at 2,000,000 findings, against 3 ms).
      if (group === undefined) where.push(this.scanFindingsWhere(query.scanId, query.host, p))
      else {
        where.push(`EXISTS (SELECT 1 FROM scan_hosts sh WHERE sh.scan_id = ${p.add(query.scanId)} AND sh.address = findings.address AND findings.id = ANY(sh.finding_ids)` +
          (group === 'walk' ? ' OFFSET 0)' : ')'))
      }
    }
    where.push(...this.countedWhere(query, p))
    // Only CISA's listing is a counted dimension (the counts tables' kev); any other kev filter is tested row by row.
    if (query.kev !== undefined && query.kev !== 'cisa') where.push(kevWhere(query.kev))
    if (query.minEpss !== undefined) where.push(`epss >= ${p.add(query.minEpss)}`)
    if (scoped(query)) where.push(`address::inet <<= ANY(${p.add(scopeInets(query.scope ?? []))}::inet[])`)
    if (query.minConfidence !== undefined) where.push(`confidence_score >= ${p.add(query.minConfidence)}`)
    if (query.tag !== undefined) {
      where.push(group === 'walk'
        ? `EXISTS (SELECT 1 FROM hosts h WHERE h.address = findings.address AND h.tags @> ARRAY[${p.add(query.tag)}::text])`
        : `address IN (SELECT address FROM hosts WHERE tags @> ARRAY[${p.add(query.tag)}::text])`)
    }
    return { where: where.length > 0 ? `WHERE ${where.join(' AND ')}` : '', conditions: where, params: p, order, column: FINDING_SORT_COLUMN[sort] }
  }

  /** The findings a scan observed (on one host, when given): the ids its rows hold. */
  private scanFindingsWhere (scanId: string, host: string | undefined, p: Params): string {
    const onHost = host === undefined ? '' : ` AND address = ${p.add(normalizeAddress(host) ?? host)}`
    return `id IN (SELECT unnest(finding_ids) FROM scan_hosts WHERE scan_id = ${p.add(scanId)}${onHost})`
  }

  /** The conditions on counted dimensions: the same text filters finding_counts and findings. */
  private countedWhere (query: FindingExportQuery, p: Params): string[] {
    const where: string[] = []
    if (query.status !== undefined) where.push(`status = ${p.add(query.status)}`)
    else where.push(`status <> ALL(${p.add(HIDDEN_BY_DEFAULT)}::text[])`)
    if (query.severity !== undefined) where.push(`severity = ${p.add(query.severity)}`)
    if (query.kev === 'cisa') where.push('kev')
    if (query.confidence !== undefined) where.push(`confidence = ${p.add(query.confidence)}`)
    // A missing score (-1) never passes, whatever the threshold.
    if (query.minCvss !== undefined) where.push(`cvss_sort >= ${p.add(query.minCvss)} AND cvss_sort >= 0`)
    return where
  }

  /** The one group whose counts answer the query's total: a scan's or a tag's, with counted filters only beside it. */
  private countedGroup (query: FindingExportQuery): string | null {
    if (scoped(query)) return null
    // The counts know nothing of scores or deciding sources either.
    if (query.host !== undefined || query.cveId !== undefined || query.minEpss !== undefined || query.source !== undefined || query.minConfidence !== undefined) return null
    if (!kevCounted(query)) return null
    if (query.scanId !== undefined) return query.tag === undefined ? scanGroup(query.scanId) : null
    return query.tag === undefined ? null : tagGroup(query.tag)
  }

  /**
   * A group's findings passing the query's counted filters (`n`), all findings passing them (`all`), and the
   * group's findings whatever they are (`members`).
   */
  private async groupCounts (query: FindingExportQuery, group: string): Promise<{ n: number, all: number, members: number }> {
    const p = new Params()
    const g = p.add(group)
    const where = this.countedWhere(query, p).join(' AND ')
    const r = await this.pool.query<{ n: string | null, all: string | null, members: string | null }>(`
      SELECT (SELECT sum(n) FROM finding_group_counts WHERE grp = ${g} AND ${where}) AS n, (SELECT sum(n) FROM finding_counts WHERE ${where}) AS all,
        (SELECT sum(n) FROM finding_group_counts WHERE grp = ${g}) AS members`, p.values)
    return { n: Number(r.rows[0].n ?? 0), all: Number(r.rows[0].all ?? 0), members: Number(r.rows[0].members ?? 0) }
  }

  private async countFindings (query: FindingExportQuery, sql: FindingSql): Promise<number> {
    const group = this.countedGroup(query)
    if (group !== null) return (await this.groupCounts(query, group)).n
    // The counts tables know nothing of hosts, CVEs or scopes: those filters are counted row by row.
    if (scoped(query) || !kevCounted(query)) return Number((await this.pool.query<{ n: string }>(`SELECT count(*) AS n FROM findings ${sql.where}`, sql.params.values)).rows[0].n)
    if (query.minEpss !== undefined && query.host === undefined && query.cveId === undefined && query.scanId === undefined && query.severity === undefined &&
      query.confidence === undefined && query.minCvss === undefined && query.tag === undefined && query.source === undefined && query.minConfidence === undefined) {
      return await this.countByEpss(query, query.minEpss)
    }
    if (query.host === undefined && query.cveId === undefined && query.scanId === undefined && query.minEpss === undefined && query.tag === undefined &&
      query.source === undefined && query.minConfidence === undefined) {
      const p = new Params()
      const where = this.countedWhere(query, p)
      const r = await this.pool.query<{ n: string | null }>(`SELECT sum(n) AS n FROM finding_counts WHERE ${where.join(' AND ')}`, p.values)
      return Number(r.rows[0].n ?? 0)
    }
    const r = await this.pool.query<{ n: string }>(`SELECT count(*) AS n FROM findings ${sql.where}`, sql.params.values)
    return Number(r.rows[0].n)
  }

  /**
   * Findings at or above an EPSS score (with the status and KEV filters): whole buckets above the threshold's
   * from the counts, and the threshold's own bucket counted exactly. A bucket above it holds only scores above
   * the threshold and one below only scores under it, as floor(x × 10000) keeps the order of x.
   */
  private async countByEpss (query: FindingExportQuery, minEpss: number): Promise<number> {
    const bucket = epssBucket(minEpss)
    const p = new Params()
    const where: string[] = []
    if (query.status !== undefined) where.push(`status = ${p.add(query.status)}`)
    else where.push(`status <> ALL(${p.add(HIDDEN_BY_DEFAULT)}::text[])`)
    if (query.kev === 'cisa') where.push('kev')
    const b = p.add(bucket)
    const m = p.add(minEpss)
    const r = await this.pool.query<{ whole: string | null, edge: string }>(`
      SELECT (SELECT sum(n) FROM finding_epss_counts WHERE epss_bucket > ${b}::integer AND ${where.join(' AND ')}) AS whole,
        (SELECT count(*) FROM findings WHERE epss >= ${m}::double precision AND epss < (${b}::integer + 2)::double precision / ${EPSS_BUCKETS}
          AND floor(epss * ${EPSS_BUCKETS}) <= ${b}::integer AND ${where.join(' AND ')}) AS edge`, p.values)
    return Number(r.rows[0].whole ?? 0) + Number(r.rows[0].edge)
  }

  async listFindings (query: FindingQuery): Promise<Page<FindingRecord>> {
    const group = this.countedGroup(query)
    if (group !== null) return await this.listGroupFindings(query, group)
    const sql = this.findingSql(query)
    // A host's or a CVE's findings are few beside the whole table: read them through their own index and sort them,
    // rather than walk the sort index until enough of them turn up (a hot CVE's share of millions can be far down it).
    // A CVE's findings have an index in CVSS order of their own (findings_by_cve).
    // A scan's findings likewise.
    const ownIndex = query.host === undefined && query.scanId === undefined && query.cveId !== undefined && sql.column === 'cvss_sort'
    const column = (query.host !== undefined || query.cveId !== undefined || query.scanId !== undefined) && !ownIndex ? `(${sql.column} + 0)` : sql.column
    const select = `SELECT record FROM findings ${sql.where}`
    if (query.offset === 0 && query.after === undefined) {
      return await this.firstPage<FindingRecord>(select, sql.params, column, 'id', sql.order, query.limit, async () => await this.countFindings(query, sql))
    }
    const total = await this.countFindings(query, sql)
    if (query.after !== undefined) {
      const items = await this.pageAfter<FindingRecord>('findings', sql.conditions, sql.params, column, 'id', sql.order, query.after, query.limit)
      return { items, total }
    }
    const items = await this.page<FindingRecord>(select, sql.params, column, 'id', sql.order, query.offset, query.limit, total)
    return { items, total }
  }

  /**
   * A scan's or a tag's findings, counted first from the group counts. A page is found either by reading the group's
   * findings (a scan's rows or the tag's hosts, then their findings) and sorting those that pass, or by walking the
   * sort index and probing each row's membership: whichever reads fewer rows. The walk passes about `all / n` rows
   * per match (the group's share of the findings passing the filters), the read every member (the filters are
   * tested on the rows read); a probed row costs about two read ones. A whole-network scan's first page walks about
   * a page of rows; a small group's is read and sorted.
   */
  private async listGroupFindings (query: FindingQuery, group: string): Promise<Page<FindingRecord>> {
    const { n: total, all, members } = await this.groupCounts(query, group)
    if (total === 0 || query.limit <= 0) return { items: [], total }
    // Rows the page needs in the walk's order: a cursor's page starts at the cursor; an offset page is read from the
    // nearer end (see `page`).
    const needed = query.after !== undefined ? query.limit : Math.min(query.offset, Math.max(0, total - query.offset - query.limit)) + query.limit
    const walk = 2 * needed * (all / total) < members
    const sql = this.findingSql(query, walk ? 'walk' : 'read')
    const column = walk ? sql.column : `(${sql.column} + 0)`
    if (query.after !== undefined) {
      return { items: await this.pageAfter<FindingRecord>('findings', sql.conditions, sql.params, column, 'id', sql.order, query.after, query.limit), total }
    }
    return { items: await this.page<FindingRecord>(`SELECT record FROM findings ${sql.where}`, sql.params, column, 'id', sql.order, query.offset, query.limit, total), total }
  }

  /**
   * A cursor inside one REPEATABLE READ transaction: one snapshot from the first row to the last, a page of rows in
   * memory. The transaction holds its connection as long as the reader takes, so at most half the pool streams at
   * once and later exports wait their turn here: ten reports at once otherwise took every connection, and the lists
   * and exports behind them failed after waiting for one (and cut the reports that waited, mid-stream).
   */
  async * streamFindings (query: FindingExportQuery): AsyncGenerator<FindingRecord> {
    await this.exports.acquire()
    try {
      yield * this.streamFindingsNow(query)
    } finally {
      this.exports.release()
    }
  }

  private async * streamFindingsNow (query: FindingExportQuery): AsyncGenerator<FindingRecord> {
    const sql = this.findingSql(query)
    const dir = sql.order === 'asc' ? 'ASC' : 'DESC'
    const values = [...sql.params.values]
    let text = `SELECT record FROM findings ${sql.where} ORDER BY ${sql.column} ${dir}, id ${dir}`
    if (query.limit !== undefined) {
      values.push(query.limit)
      text += ` LIMIT $${values.length}`
    }
    if (query.offset !== undefined && query.offset > 0) {
      values.push(query.offset)
      text += ` OFFSET $${values.length}`
    }
    // The reader may take its time between rows: the connection can be lost while no query runs.
    const checkout = await this.checkout()
    yield * readCursor<{ record: FindingRecord }, FindingRecord>(checkout, text, values, {
      rows: STREAM_ROWS,
      limitMs: this.pool.options.query_timeout ?? READ_LIMIT_MS,
      pick: (r) => r.record
    })
  }

  async getFinding (id: string): Promise<FindingRecord | null> {
    const r = await this.pool.query<{ record: FindingRecord }>('SELECT record FROM findings WHERE id = $1', [id])
    return r.rows[0]?.record ?? null
  }

  async decideFinding (id: string, status: 'accepted' | 'false_positive' | 'open', comment: string | null, by: string): Promise<FindingRecord | null> {
    return await this.transaction(async (c) => {
      for (;;) {
        const found = await c.query<{ address: string }>('SELECT address FROM findings WHERE id = $1', [id])
        if (found.rowCount === 0) return null
        const address = found.rows[0].address
        await c.query(LOCK_HOSTS, [[address]])
        const rows = await c.query<{ record: FindingRecord }>('SELECT record FROM findings WHERE address = $1 ORDER BY id FOR UPDATE', [address])
        const findings = rows.rows.map((r) => r.record)
        const prev = findings.find((f) => f.id === id)
        // Deleted with its host (and maybe written again elsewhere) before the lock: look again.
        if (prev === undefined) continue
        const next = decide(prev, status, comment, by, new Date().toISOString())
        await c.query(UPSERT_FINDINGS, findingParams([next]))
        const host = (await c.query<{ record: HostRecord }>('SELECT record FROM hosts WHERE address = $1', [address])).rows[0]?.record
        const hostDeltas = new HostCountDeltas()
        if (host !== undefined) {
          const tallied = { ...host, ...hostTallies(findings.map((f) => f.id === id ? next : f)) }
          await c.query(UPSERT_HOSTS, hostParams([tallied]))
          hostDeltas.add(host, -1)
          hostDeltas.add(tallied, 1)
        }
        const deltas = new CountDeltas()
        deltas.add(prev, -1)
        deltas.add(next, 1)
        await applyCounts(c, deltas, hostDeltas)
        const groups = new GroupDeltas()
        for (const tag of host?.tags ?? []) groups.moveFinding(tagGroup(tag), prev, next)
        await moveInScans(c, groups, [{ prev, next }])
        await applyGroupCounts(c, groups)
        await this.bumpRevision(c)
        return next
      }
    })
  }

  async refreshExploitContext (lookup: ExploitLookup): Promise<number> {
    const cves = (await this.pool.query<{ cve_id: string }>('SELECT DISTINCT cve_id FROM findings ORDER BY cve_id')).rows.map((r) => r.cve_id)
    let changed = 0
    for (let i = 0; i < cves.length; i += EXPLOIT_BATCH) {
      const context = await lookup(cves.slice(i, i + EXPLOIT_BATCH))
      const asked = [...context.keys()]
      if (asked.length === 0) continue
      let after = ''
      for (;;) {
        const chunk = await this.transaction(async (c) => {
          const rows = await c.query<{ record: FindingRecord }>(
            'SELECT record FROM findings WHERE cve_id = ANY($1::text[]) AND id > $2 ORDER BY id LIMIT $3 FOR UPDATE', [asked, after, REFRESH_CHUNK])
          const deltas = new CountDeltas()
          const next: FindingRecord[] = []
          const moved: Moved[] = []
          for (const { record: f } of rows.rows) {
            const u = context.get(f.cveId)
            const n = u === undefined ? null : withExploit(f, u)
            if (n === null) continue
            next.push(n)
            deltas.add(f, -1)
            deltas.add(n, 1)
            if (!sameFindingKey(f, n)) moved.push({ prev: f, next: n })
          }
          if (next.length > 0) {
            await c.query(UPSERT_FINDINGS, findingParams(next))
            await applyCounts(c, deltas)
            await applyGroupCounts(c, await this.exploitGroupDeltas(c, moved))
          }
          return { rows: rows.rows.length, last: rows.rows.at(-1)?.record.id, changed: next.length }
        })
        changed += chunk.changed
        if (chunk.last === undefined || chunk.rows < REFRESH_CHUNK) break
        after = chunk.last
      }
    }
    if (changed > 0) await this.pool.query('UPDATE results_revision SET hosts = hosts + 1')
    return changed
  }

  /**
   * Findings whose KEV flag changed move in their scans' and their hosts' tags' groups. The refresh holds no host
   * lock, but the findings' row locks: a scan or tag change of their hosts locks them too, and waits or is waited for.
   */
  private async exploitGroupDeltas (c: PoolClient, moved: readonly Moved[]): Promise<GroupDeltas> {
    const g = new GroupDeltas()
    if (moved.length === 0) return g
    await moveInScans(c, g, moved)
    const tagged = await c.query<{ address: string, tags: string[] }>(
      "SELECT address, tags FROM hosts WHERE address = ANY($1::text[]) AND tags <> '{}'", [[...new Set(moved.map((m) => m.next.address))]])
    const tags = new Map(tagged.rows.map((r) => [r.address, r.tags]))
    for (const m of moved) for (const tag of tags.get(m.next.address) ?? []) g.moveFinding(tagGroup(tag), m.prev, m.next)
    return g
  }

  async setHostTags (address: string, tags: string[]): Promise<HostRecord | null> {
    return await this.changeTags(address, () => tags)
  }

  async addHostTags (address: string, tags: string[], remove: string[] = []): Promise<HostRecord | null> {
    return await this.changeTags(address, (current) => editedTags(current, tags, remove))
  }

  /** The host with its tags changed by `change`, under the host's lock (a scan writing the host waits, or is waited for). */
  private async changeTags (address: string, change: (current: readonly string[]) => string[]): Promise<HostRecord | null> {
    const key = normalizeAddress(address) ?? address
    return await this.transaction(async (c) => {
      await c.query(LOCK_HOSTS, [[key]])
      const found = await c.query<{ record: HostRecord }>('SELECT record FROM hosts WHERE address = $1', [key])
      const host = found.rows[0]?.record
      if (host === undefined) return null
      const before = host.tags ?? []
      const tags = change(before)
      if (host.tags !== undefined && tags.length === before.length && tags.every((t, i) => t === before[i])) return host
      // The host's findings leave the groups of the tags it lost and join those of the tags it gained. Locked as every
      // writer of findings locks them: a KEV refresh (which holds no host lock) moving one in these groups waits.
      const keys = await c.query<CountKey>('SELECT status, severity, kev, confidence, cvss_sort FROM findings WHERE address = $1 ORDER BY id FOR UPDATE', [key])
      const next = withHostTags(host, tags)
      await c.query(UPSERT_HOSTS, hostParams([next]))
      const hostDeltas = new HostCountDeltas()
      hostDeltas.add(host, -1)
      hostDeltas.add(next, 1)
      await applyCounts(c, null, hostDeltas)
      const groups = new GroupDeltas()
      for (const tag of before) if (!tags.includes(tag)) for (const k of keys.rows) groups.move(tagGroup(tag), k, undefined)
      for (const tag of tags) if (!before.includes(tag)) for (const k of keys.rows) groups.move(tagGroup(tag), undefined, k)
      await applyGroupCounts(c, groups)
      await this.bumpRevision(c)
      return next
    })
  }

  async hostsWithTags (tags: string[]): Promise<string[]> {
    const r = await this.pool.query<{ address: string }>('SELECT address FROM hosts WHERE tags && $1::text[]', [tags])
    return sortAddresses(r.rows.map((row) => row.address))
  }

  async scanHosts (scanId: string): Promise<ScanHostRecord[]> {
    // One snapshot for both reads: a host written or deleted in between would otherwise miss its findings.
    return await this.transaction(async (c) => {
      const rows = await c.query<{ address: string, text: string, finding_ids: string[], finding_ports: number[] }>(
        'SELECT address, record::text AS text, finding_ids, finding_ports FROM scan_hosts WHERE scan_id = $1', [scanId])
      if (rows.rows.length === 0) return []
      const found = await c.query<{ id: string, cve_id: string, severity: string, cvss: number | null, status: FindingRecord['status'] }>(
        'SELECT id, cve_id, severity, cvss, status FROM findings WHERE id IN (SELECT unnest(finding_ids) FROM scan_hosts WHERE scan_id = $1)', [scanId])
      const byId = new Map(found.rows.map((r) => [r.id, r]))
      return byAddress(rows.rows.map((r) => {
        const head = JSON.parse(r.text) as ScanHostHead
        return {
          address: r.address,
          ...head,
          findings: r.finding_ids.flatMap((id, i) => {
            const f = byId.get(id)
            return f === undefined ? [] : [{ id, ...fromPortKey(r.finding_ports[i]), cveId: f.cve_id, severity: f.severity as FindingRecord['severity'], cvss: f.cvss, status: f.status }]
          })
        }
      }))
    }, 'REPEATABLE READ READ ONLY')
  }

  async hostsForCve (cveId: string): Promise<string[]> {
    const r = await this.pool.query<{ address: string, status: FindingRecord['status'] }>('SELECT address, status FROM findings WHERE cve_id = $1', [cveId.toUpperCase()])
    return sortAddresses([...new Set(r.rows.filter((row) => isStanding(row.status)).map((row) => row.address))])
  }
}
