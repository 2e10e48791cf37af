// The denormalised counts of the PostgreSQL results store, kept in the same transaction as the rows they count:
// findings per low-cardinality filter (finding_counts), per EPSS bucket (finding_epss_counts), per scan and host tag
// (finding_group_counts), and hosts per facet (host_counts). A write collects its changes as deltas and applies them
// in key order, so that concurrent writers lock count rows in one order; a count that reaches zero is dropped. The
// memory store keeps the same counts in lib/store/memory/finding-table.ts; the contract tests in test/lib/store/
// hold both to the same answers.
import type { PoolClient } from 'pg'
import type { HostRecord } from '../../domain/hosts'
import type { FindingRecord } from '../../domain/findings'
import type { ScanHostHead } from '../scan-hosts'
import { hostFacets, hostSortValue } from '../results-merge'

/** The counted dimensions of a finding: one row of finding_counts. */
export interface CountKey { status: string, severity: string, kev: boolean, confidence: string, cvss_sort: number }
/** One row of finding_epss_counts. */
export interface EpssKey { epss_bucket: number, status: string, kev: boolean }

/** EPSS buckets per unit of score: fine enough that the one bucket a threshold cuts holds few findings. */
export const EPSS_BUCKETS = 10_000

/** The bucket of a score, as `floor(epss * 10000)` computes it in SQL (the same IEEE double arithmetic). */
export function epssBucket (score: number): number {
  return Math.floor(score * EPSS_BUCKETS)
}

export class CountDeltas {
  private readonly counts = new Map<string, CountKey & { n: number }>()
  private readonly epss = new Map<string, EpssKey & { n: number }>()

  add (f: FindingRecord, n: number): void {
    const k = countKeyOf(f)
    const text = `${k.status}|${k.severity}|${k.kev ? 1 : 0}|${k.confidence}|${k.cvss_sort}`
    const e = this.counts.get(text)
    if (e === undefined) this.counts.set(text, { ...k, n })
    else e.n += n
    if (f.epss === null || f.epss === undefined) return
    const ek: EpssKey = { epss_bucket: epssBucket(f.epss.score), status: f.status, kev: f.kev !== null }
    const etext = `${ek.epss_bucket}|${ek.status}|${ek.kev ? 1 : 0}`
    const ee = this.epss.get(etext)
    if (ee === undefined) this.epss.set(etext, { ...ek, n })
    else ee.n += n
  }

  /** The non-zero deltas (the SQL writes them in key order, so concurrent writers lock count rows in one order). */
  rows (): { counts: (CountKey & { n: number })[], epss: (EpssKey & { n: number })[] } {
    return { counts: [...this.counts.values()].filter((e) => e.n !== 0), epss: [...this.epss.values()].filter((e) => e.n !== 0) }
  }
}

/** One row of host_counts: the hosts with one value of a facet (facet '' for every host), per severity and findings. */
export interface HostCountKey { facet: string, value: string, severity_score: number, has_findings: boolean }

export class HostCountDeltas {
  private readonly counts = new Map<string, HostCountKey & { n: number }>()

  /** The host's rows, from what hostParams writes its columns from: the counts and the rows cannot disagree. */
  add (h: HostRecord, n: number): void {
    const facets = hostFacets(h)
    const severity = hostSortValue(h, 'severity') as number
    const hasFindings = h.findingsCount > 0
    const one = (facet: string, value: string): void => {
      const text = JSON.stringify([facet, value, severity, hasFindings])
      const e = this.counts.get(text)
      if (e === undefined) this.counts.set(text, { facet, value, severity_score: severity, has_findings: hasFindings, n })
      else e.n += n
    }
    one('', '')
    // Each value once per host, as an array filter matches a host once.
    for (const v of new Set(facets.ports)) one('port', String(v))
    for (const v of new Set(facets.services)) one('service', v)
    for (const v of new Set(facets.products)) one('product', v)
    for (const v of new Set(h.tags ?? [])) one('tag', v)
  }

  /** The non-zero deltas: a host write that leaves its facets, severity and findings as they were has none. */
  rows (): (HostCountKey & { n: number })[] {
    return [...this.counts.values()].filter((e) => e.n !== 0)
  }
}

const APPLY_COUNTS = `
INSERT INTO finding_counts (status, severity, kev, confidence, cvss_sort, n)
SELECT status, severity, kev, confidence, cvss_sort, n
FROM json_to_recordset($1::json) AS x(status text, severity text, kev boolean, confidence text, cvss_sort double precision, n bigint)
ORDER BY status, severity, kev, confidence, cvss_sort
ON CONFLICT (status, severity, kev, confidence, cvss_sort) DO UPDATE SET n = finding_counts.n + EXCLUDED.n`

// Only the rows this transaction changed (and holds locked): a zero count is no count, as if never written.
const DROP_EMPTY_COUNTS = `
DELETE FROM finding_counts c USING json_to_recordset($1::json) AS x(status text, severity text, kev boolean, confidence text, cvss_sort double precision)
WHERE c.status = x.status AND c.severity = x.severity AND c.kev = x.kev AND c.confidence = x.confidence AND c.cvss_sort = x.cvss_sort AND c.n = 0`

const APPLY_EPSS_COUNTS = `
INSERT INTO finding_epss_counts (epss_bucket, status, kev, n)
SELECT epss_bucket, status, kev, n FROM json_to_recordset($1::json) AS x(epss_bucket integer, status text, kev boolean, n bigint)
ORDER BY epss_bucket, status, kev
ON CONFLICT (epss_bucket, status, kev) DO UPDATE SET n = finding_epss_counts.n + EXCLUDED.n`

const DROP_EMPTY_EPSS_COUNTS = `
DELETE FROM finding_epss_counts c USING json_to_recordset($1::json) AS x(epss_bucket integer, status text, kev boolean)
WHERE c.epss_bucket = x.epss_bucket AND c.status = x.status AND c.kev = x.kev AND c.n = 0`

const APPLY_HOST_COUNTS = `
INSERT INTO host_counts (facet, value, severity_score, has_findings, n)
SELECT facet, value, severity_score, has_findings, n
FROM json_to_recordset($1::json) AS x(facet text, value text, severity_score smallint, has_findings boolean, n bigint)
ORDER BY facet, value, severity_score, has_findings
ON CONFLICT (facet, value, severity_score, has_findings) DO UPDATE SET n = host_counts.n + EXCLUDED.n`

const DROP_EMPTY_HOST_COUNTS = `
DELETE FROM host_counts c USING json_to_recordset($1::json) AS x(facet text, value text, severity_score smallint, has_findings boolean)
WHERE c.facet = x.facet AND c.value = x.value AND c.severity_score = x.severity_score AND c.has_findings = x.has_findings AND c.n = 0`

/** The group of a scan's findings (the ids its scan_hosts rows list) in finding_group_counts. */
export function scanGroup (scanId: string): string {
  return `scan:${scanId}`
}

/** The group of the findings of the hosts carrying a tag. */
export function tagGroup (tag: string): string {
  return `tag:${tag}`
}

/** The counted dimensions of a finding as its columns hold them. */
export function countKeyOf (f: FindingRecord): CountKey {
  return { status: f.status, severity: f.severity, kev: f.kev !== null, confidence: f.confidence, cvss_sort: f.cvss ?? -1 }
}

export function sameCountKey (a: CountKey, b: CountKey): boolean {
  return a.status === b.status && a.severity === b.severity && a.kev === b.kev && a.confidence === b.confidence && a.cvss_sort === b.cvss_sort
}

export function sameFindingKey (a: FindingRecord, b: FindingRecord): boolean {
  return a.status === b.status && a.severity === b.severity && (a.kev === null) === (b.kev === null) && a.confidence === b.confidence &&
    (a.cvss ?? -1) === (b.cvss ?? -1)
}

/** Changes to finding_group_counts in one transaction: findings joining and leaving groups, or moving inside one. */
export class GroupDeltas {
  private readonly counts = new Map<string, CountKey & { grp: string, n: number }>()

  add (grp: string, k: CountKey, n: number): void {
    const text = `${grp}\n${k.status}|${k.severity}|${k.kev ? 1 : 0}|${k.confidence}|${k.cvss_sort}`
    const e = this.counts.get(text)
    if (e === undefined) this.counts.set(text, { grp, status: k.status, severity: k.severity, kev: k.kev, confidence: k.confidence, cvss_sort: k.cvss_sort, n })
    else e.n += n
  }

  /** A finding in `grp` as `prev` before (absent: not a member) and as `next` after. */
  move (grp: string, prev: CountKey | undefined, next: CountKey | undefined): void {
    if (prev !== undefined && next !== undefined && sameCountKey(prev, next)) return
    if (prev !== undefined) this.add(grp, prev, -1)
    if (next !== undefined) this.add(grp, next, 1)
  }

  /** `move` for records, without building keys for a finding that stays in its count row. */
  moveFinding (grp: string, prev: FindingRecord | undefined, next: FindingRecord | undefined): void {
    if (prev !== undefined && next !== undefined && sameFindingKey(prev, next)) return
    this.move(grp, prev === undefined ? undefined : countKeyOf(prev), next === undefined ? undefined : countKeyOf(next))
  }

  rows (): (CountKey & { grp: string, n: number })[] {
    return [...this.counts.values()].filter((e) => e.n !== 0)
  }
}

// In key order, as finding_counts: concurrent writers (a scan's hosts written by several workers at once share its
// group's rows) lock them in one order.
const APPLY_GROUP_COUNTS = `
INSERT INTO finding_group_counts (grp, status, severity, kev, confidence, cvss_sort, n)
SELECT grp, status, severity, kev, confidence, cvss_sort, n
FROM json_to_recordset($1::json) AS x(grp text, status text, severity text, kev boolean, confidence text, cvss_sort double precision, n bigint)
ORDER BY grp COLLATE "C", status, severity, kev, confidence, cvss_sort
ON CONFLICT (grp, status, severity, kev, confidence, cvss_sort) DO UPDATE SET n = finding_group_counts.n + EXCLUDED.n`

const DROP_EMPTY_GROUP_COUNTS = `
DELETE FROM finding_group_counts c
USING json_to_recordset($1::json) AS x(grp text, status text, severity text, kev boolean, confidence text, cvss_sort double precision)
WHERE c.grp = x.grp AND c.status = x.status AND c.severity = x.severity AND c.kev = x.kev AND c.confidence = x.confidence
  AND c.cvss_sort = x.cvss_sort AND c.n = 0`

/** The scan rows of `addresses` that list any of `ids`. */
const SCAN_ROWS_LISTING = 'SELECT scan_id, address, finding_ids FROM scan_hosts WHERE address = ANY($1::text[]) AND finding_ids && $2::text[]'

/** A finding before and after a change. */
export interface Moved { prev: FindingRecord, next: FindingRecord }

/** What recordHosts read before merging: hosts by address, findings by id, scan rows by `<scanId>\n<address>`. */
export interface WriteState { hosts: ReadonlyMap<string, HostRecord>, findings: ReadonlyMap<string, FindingRecord>, scans: ReadonlyMap<string, ScanHostRow> }

/** One row of scan_hosts as the write path reads and makes it. */
export interface ScanHostRow { head: ScanHostHead, text: string, ids: string[], ports: number[] }
// `ports` holds portKey values: a UDP port negated, so that the integer column tells the transports apart.

/** Finding counts, then host counts: every writer locks count rows in this order. */
export async function applyCounts (c: PoolClient, deltas: CountDeltas | null, hostDeltas?: HostCountDeltas): Promise<void> {
  const rows = deltas?.rows() ?? { counts: [], epss: [] }
  if (rows.counts.length > 0) {
    const json = JSON.stringify(rows.counts)
    await c.query(APPLY_COUNTS, [json])
    await c.query(DROP_EMPTY_COUNTS, [json])
  }
  if (rows.epss.length > 0) {
    const json = JSON.stringify(rows.epss)
    await c.query(APPLY_EPSS_COUNTS, [json])
    await c.query(DROP_EMPTY_EPSS_COUNTS, [json])
  }
  const hostRows = hostDeltas?.rows() ?? []
  if (hostRows.length > 0) {
    await c.query(APPLY_HOST_COUNTS, [JSON.stringify(hostRows)])
    // Only a row that lost hosts can be empty: a first scan of new hosts (the bulk of writes) has none to drop.
    const shrunk = hostRows.filter((e) => e.n < 0)
    if (shrunk.length > 0) await c.query(DROP_EMPTY_HOST_COUNTS, [JSON.stringify(shrunk)])
  }
}

export async function applyGroupCounts (c: PoolClient, deltas: GroupDeltas): Promise<void> {
  const rows = deltas.rows()
  if (rows.length === 0) return
  const json = JSON.stringify(rows)
  await c.query(APPLY_GROUP_COUNTS, [json])
  // Only a count that went down can have reached zero (a first scan's counts only go up).
  if (rows.some((r) => r.n < 0)) await c.query(DROP_EMPTY_GROUP_COUNTS, [json])
}

/**
 * Findings whose counted fields changed move in the group of every scan whose row for their host lists them,
 * but the rows in `skip` (keyed `<scanId>\n<address>`: the caller accounted for them).
 */
export async function moveInScans (c: PoolClient, g: GroupDeltas, changed: readonly Moved[], skip?: ReadonlyMap<string, unknown>): Promise<void> {
  const moved = new Map(changed.filter((m) => !sameFindingKey(m.prev, m.next)).map((m) => [m.next.id, m]))
  if (moved.size === 0) return
  const addresses = [...new Set([...moved.values()].map((m) => m.next.address))]
  const rows = await c.query<{ scan_id: string, address: string, finding_ids: string[] }>(SCAN_ROWS_LISTING, [addresses, [...moved.keys()]])
  for (const r of rows.rows) {
    if (skip?.has(`${r.scan_id}\n${r.address}`) === true) continue
    const grp = scanGroup(r.scan_id)
    for (const id of r.finding_ids) {
      const m = moved.get(id)
      if (m !== undefined) g.moveFinding(grp, m.prev, m.next)
    }
  }
}

/**
 * What a batch of host writes changes in finding_group_counts, from the state before and after it (the hosts
 * locked): findings joining, leaving or moving in the groups of the scan rows written and of the hosts' tags,
 * and in the other scans' groups that list a finding whose counted fields changed.
 */
export async function writeGroupDeltas (c: PoolClient, before: WriteState, after: { hosts: ReadonlyMap<string, HostRecord>, findings: ReadonlyMap<string, FindingRecord[]>, scans: ReadonlyMap<string, ScanHostRow> }): Promise<GroupDeltas> {
  const g = new GroupDeltas()
  const next = new Map<string, FindingRecord>()
  const changed: Moved[] = []
  for (const list of after.findings.values()) {
    for (const f of list) {
      next.set(f.id, f)
      const prev = before.findings.get(f.id)
      if (prev !== undefined && !sameFindingKey(prev, f)) changed.push({ prev, next: f })
    }
  }
  // A write never drops a finding: the host's findings after it are all those it had and the new ones.
  for (const [address, host] of after.hosts) {
    const was = before.hosts.get(address)?.tags ?? []
    const is = host.tags ?? []
    if (was.length === 0 && is.length === 0) continue
    const list = after.findings.get(address) ?? []
    for (const tag of new Set([...was, ...is])) {
      const grp = tagGroup(tag)
      const wasIn = was.includes(tag)
      const isIn = is.includes(tag)
      for (const f of list) g.moveFinding(grp, wasIn ? before.findings.get(f.id) : undefined, isIn ? f : undefined)
    }
  }
  for (const [key, row] of after.scans) {
    const grp = scanGroup(key.slice(0, key.lastIndexOf('\n')))
    const old = before.scans.get(key)?.ids ?? []
    const had = new Set(old)
    for (const id of row.ids) g.moveFinding(grp, had.has(id) ? before.findings.get(id) : undefined, next.get(id))
    if (old.length === 0) continue
    const has = new Set(row.ids)
    for (const id of old) if (!has.has(id)) g.moveFinding(grp, before.findings.get(id), undefined)
  }
  // Other scans' rows are read only when a finding's counted fields changed (a re-scan fixed it, NVD data moved).
  await moveInScans(c, g, changed, after.scans)
  return g
}
