// Finding lists filtered on a scan or a host tag, on both backends: the PostgreSQL store answers their totals from
// finding_group_counts, kept by every write, and pages them either through the group or by walking a sort index.
// After each kind of write the totals must be what counting the rows gives and what the embedded store says, every
// page a slice of the whole list, and the counts what the migration computes from the rows.
import { readdirSync } from 'node:fs'
import { test } from 'tap'
import type { Client } from 'pg'
import { MemoryResultsStore } from '../../../lib/store/memory/results'
import { migrateResults, MIGRATIONS_DIR } from '../../../lib/store/postgres/migrate'
import { findingId, findingSortValue } from '../../../lib/store/results-merge'
import type { FindingQuery, HostScanWrite, ResultsStore } from '../../../lib/store/results-types'
import { backends } from '../../helper'
import { finding, openResults, write } from '../../support/results'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const H = 3600_000
const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const HTTP = { port: 80, service: 'http', product: 'Apache httpd', version: '2.4.49' }
const REDIS = { port: 6379, service: 'redis', product: 'Redis', version: '6.0.5' }

const GROUPS: Partial<FindingQuery>[] = [{ scanId: 's1' }, { scanId: 's2' }, { scanId: 's3' }, { tag: 'site-a' }, { tag: 'site-b' }, { tag: 'pci' }, { tag: 'none' }]
const FILTERS: Partial<FindingQuery>[] = [
  {}, { severity: 'critical' }, { severity: 'high' }, { status: 'open' }, { status: 'fixed' }, { status: 'accepted' }, { status: 'potential' },
  { kev: true }, { severity: 'critical', status: 'open' }, { minCvss: 9 }, { confidence: 'medium' },
  // Counted row by row beside the group.
  { host: '10.6.0.1' }, { cveId: 'CVE-2024-6387', status: 'fixed' }
]

/** finding_group_counts as kept, and as counted from the rows (the migration's own grouping). */
const KEPT = 'SELECT grp, status, severity, kev, confidence, cvss_sort, n FROM finding_group_counts ORDER BY grp COLLATE "C", status, severity, kev, confidence, cvss_sort'
const COUNTED = `
SELECT grp, status, severity, kev, confidence, cvss_sort, count(*) AS n FROM (
  SELECT 'scan:' || sh.scan_id AS grp, f.status, f.severity, f.kev, f.confidence, f.cvss_sort
  FROM scan_hosts sh CROSS JOIN LATERAL unnest(sh.finding_ids) AS u(id) JOIN findings f ON f.id = u.id
  UNION ALL
  SELECT 'tag:' || t.tag, f.status, f.severity, f.kev, f.confidence, f.cvss_sort
  FROM hosts h CROSS JOIN LATERAL unnest(h.tags) AS t(tag) JOIN findings f ON f.address = h.address
) AS m
GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY grp COLLATE "C", status, severity, kev, confidence, cvss_sort`

const hosts = ['10.6.0.1', '10.6.0.2', '10.6.0.3', '10.6.0.4', '10.6.0.5', '10.6.0.6']

/** Host i's first scan: two to six findings over three ports, tags by host. */
function first (i: number, scanId: string, at: number): HostScanWrite {
  const a = hosts[i]
  const all = [
    finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1'), finding(a, 80, 'CVE-2021-41773', 'Apache httpd', '2.4.49'),
    finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5'), finding(a, 22, 'CVE-2023-51385', 'OpenSSH', '9.2p1', 'medium'),
    { ...finding(a, 80, 'CVE-2023-25690', 'Apache httpd', '2.4.49'), observed: 'potential' as const }, finding(a, 22, 'CVE-2016-6210', 'OpenSSH', '9.2p1', 'low')
  ]
  const tags = [['site-a'], ['site-a', 'pci'], ['site-b'], ['site-a'], ['site-b', 'pci'], []][i]
  return { ...write({ address: a, at, scanId, services: [SSH, HTTP, REDIS], findings: all.slice(0, 2 + (i % 5)) }), tags }
}

test('scan and tag list totals stay exact through every write, on both backends', async (t) => {
  const list = await backends()
  const embedded = new MemoryResultsStore()
  const opened = list.includes('redis') ? await openResults(t, 'redis', 'group_counts') : null
  const stores: ResultsStore[] = [embedded, ...(opened === null ? [] : [opened.store])]
  const db = opened?.db
  if (db !== undefined) await db.query(`SET search_path TO ${opened!.schema}`)
  const each = async (fn: (s: ResultsStore) => Promise<unknown>): Promise<void> => { for (const s of stores) await fn(s) }

  async function check (step: string): Promise<void> {
    for (const g of GROUPS) {
      for (const f of FILTERS) {
        const q = { ...g, ...f }
        const name = `${step}: ${JSON.stringify(q)}`
        const want = await embedded.listFindings({ limit: 1000, offset: 0, ...q })
        t.equal(want.total, want.items.length, `${name}: embedded total`)
        if (opened === null) continue
        const whole = await opened.store.listFindings({ limit: 1000, offset: 0, ...q })
        const ids = whole.items.map((x) => x.id)
        t.equal(whole.total, want.total, `${name}: total as the embedded store's`)
        t.equal(whole.total, ids.length, `${name}: total as the rows`)
        t.same([...ids].sort(), want.items.map((x) => x.id).sort(), `${name}: the same findings`)
        // Short pages walk the sort index when the group is a large share; each must be its slice of the whole list.
        for (const offset of [0, 3, Math.max(0, whole.total - 2)]) {
          const page = await opened.store.listFindings({ limit: 2, offset, ...q })
          t.same(page.items.map((x) => x.id), ids.slice(offset, offset + 2), `${name}: offset ${offset}`)
        }
        if (ids.length > 2) {
          const at = whole.items[1]
          const after = await opened.store.listFindings({ limit: 2, offset: 0, ...q, after: { value: findingSortValue(at, 'cvss'), key: at.id } })
          t.same(after.items.map((x) => x.id), ids.slice(2, 4), `${name}: the page after a cursor`)
        }
      }
    }
    if (db !== undefined) t.same((await db.query(KEPT)).rows, (await db.query(COUNTED)).rows, `${step}: the kept counts are the rows' counts`)
  }

  await each(async (s) => { for (let i = 0; i < hosts.length; i++) await s.recordHost(first(i, 's1', T0 + i)) })
  await check('first scans')

  // A second scan of three hosts in one batch: port 6379 settled without its finding (fixed), a new finding on 22.
  const rescan = (i: number): HostScanWrite => {
    const a = hosts[i]
    return write({ address: a, at: T0 + H + i, scanId: 's2', services: [SSH, HTTP, REDIS], findings: [finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1'), finding(a, 22, 'CVE-2023-51385', 'OpenSSH', '9.2p1')] })
  }
  await each(async (s) => await s.recordHosts([rescan(0), rescan(1), rescan(2)]))
  await check('a re-scan that fixes findings')

  // The first scan re-run on a host, later: its row keeps the ports the write does not speak for.
  await each(async (s) => await s.recordHost(write({ address: hosts[3], at: T0 + 2 * H, scanId: 's1', services: [SSH], findings: [] })))
  await check('a scan re-run on a host')

  await each(async (s) => {
    await s.decideFinding(findingId(hosts[4], 80, 'CVE-2021-41773'), 'accepted', null, 'k')
    await s.decideFinding(findingId(hosts[1], 22, 'CVE-2024-6387'), 'false_positive', null, 'k')
    await s.decideFinding(findingId(hosts[4], 80, 'CVE-2021-41773'), 'open', null, 'k')
    await s.decideFinding(findingId(hosts[3], 80, 'CVE-2021-41773'), 'accepted', null, 'k')
  })
  await check('decisions')

  await each(async (s) => await s.refreshExploitContext(async (cves) => new Map(cves.map((c) => [c,
    { kev: c === 'CVE-2024-6387' ? { dateAdded: '2024-07-01', ransomware: false } : c === 'CVE-2021-41773' ? null : undefined, epss: null }]))))
  await check('a KEV refresh')

  await each(async (s) => {
    await s.setHostTags(hosts[1], ['pci'])
    await s.addHostTags(hosts[4], ['site-a'], ['site-b'])
    await s.setHostTags(hosts[5], ['site-b', 'site-a'])
  })
  await check('tag edits')

  // A third scan adds a tag to a host (scans only add) and fixes a finding there.
  await each(async (s) => await s.recordHost({ ...write({ address: hosts[2], at: T0 + 3 * H, scanId: 's3', services: [SSH, HTTP, REDIS], findings: [finding(hosts[2], 80, 'CVE-2021-41773', 'Apache httpd', '2.4.49')] }), tags: ['pci'] }))
  await check('a scan that adds tags')

  await each(async (s) => { await s.deleteHost(hosts[1]); await s.deleteHost(hosts[2]) })
  await check('host deletes')

  if (db === undefined) return
  // The migration's fill: its own migration and those after it undone (the rows stay), then brought up again.
  const kept = (await db.query(KEPT)).rows
  t.ok(kept.length > 0)
  const files = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort()
  const count = files.length - files.indexOf('1767600000000_finding_group_counts.sql')
  const { runner } = await import('node-pg-migrate')
  await runner({ dbClient: db, schema: opened!.schema, migrationsTable: 'pgmigrations', dir: MIGRATIONS_DIR, direction: 'down', count, checkOrder: true, log: () => {} })
  t.equal((await db.query("SELECT to_regclass('finding_group_counts') AS t")).rows[0].t, null, 'the table gone')
  t.ok((await migrateResults(db as Client, opened!.schema)).includes('1767600000000_finding_group_counts'))
  t.same((await db.query(KEPT)).rows, kept, 'the migration counts the existing rows as the writes kept them')
})
