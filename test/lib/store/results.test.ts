// One contract for both results-store backends: hosts and findings as scans leave them and users decide them.
import { readdirSync } from 'node:fs'
import { test } from 'tap'
import { Client } from 'pg'
import { MemoryResultsStore } from '../../../lib/store/memory/results'
import { migrateResults, MIGRATIONS_DIR } from '../../../lib/store/postgres/migrate'
import { PostgresResultsStore } from '../../../lib/store/postgres/results'
import { findingId } from '../../../lib/store/results-merge'
import type { ResultsStore } from '../../../lib/store/results-types'
import type { HostRecord } from '../../../lib/domain/hosts'
import { backends, DATABASE_TEST_URL, dropSchema, openBackendsIn, uniqueSchema, type Backend } from '../../helper'
import { finding, write, openResults, type OpenedResults } from '../../support/results'

type Opened = OpenedResults

const open = async (t: { teardown(fn: () => unknown): void }, backend: Backend): Promise<Opened> => await openResults(t, backend, 'results')

/** Every row of every results table but the hosts revision (it moves with every write by design), in key order. */
async function dump (db: Client, schema: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {}
  const tables = await db.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name NOT IN ('results_revision', 'pgmigrations') ORDER BY 1", [schema])
  for (const { table_name: table } of tables.rows) {
    out[table] = (await db.query(`SELECT * FROM "${schema}"."${table}" AS r ORDER BY r::text`)).rows
  }
  return out
}

/** A schema of its own migrated up to just before `migration` (a file of MIGRATIONS_DIR), on a client the test owns. */
async function schemaBefore (t: { teardown(fn: () => unknown): void }, name: string, migration: string): Promise<{ old: Client, legacy: string }> {
  const legacy = uniqueSchema(name)
  const old = new Client({ connectionString: DATABASE_TEST_URL, options: `-c search_path=${legacy}` })
  await old.connect()
  t.teardown(async () => { await old.end(); await dropSchema(legacy) })
  const before = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f < migration).length
  const { runner } = await import('node-pg-migrate')
  await runner({ dbClient: old, schema: legacy, createSchema: true, migrationsTable: 'pgmigrations', dir: MIGRATIONS_DIR, direction: 'up', count: before, checkOrder: true, advisoryLockMode: 'wait', log: () => {} })
  return { old, legacy }
}

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const H = 3600_000
const iso = (ms: number): string => new Date(ms).toISOString()

const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1', distro: 'deb12u3' }
const HTTP = { port: 80, service: 'http', product: 'Apache httpd', version: '2.4.49' }
const REDIS = { port: 6379, service: 'redis', product: 'Redis', version: '6.0.5' }

async function addresses (store: ResultsStore, query: Parameters<ResultsStore['listHosts']>[0]): Promise<string[]> {
  return (await store.listHosts(query)).items.map((h) => h.address)
}

test('results store contract', async (t) => {
  for (const backend of await backends()) {
    t.test(`${backend}: a first write creates the host and open findings`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.0.0.5'
      const w = write({
        address: a, at: T0, scanId: 's1', hostnames: ['Web.example.test'], services: [SSH, HTTP, { port: 443, service: 'https', state: 'filtered' }],
        findings: [finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1', 'medium'), finding(a, 80, 'CVE-2021-41773', 'Apache httpd', '2.4.49')]
      })
      t.match(await store.recordHost(w), { newFindings: 2, fixed: 0, reopened: 0 })
      const host = await store.getHost(a)
      t.match(host, {
        address: a, hostnames: ['web.example.test'], up: true, firstSeen: iso(T0), lastSeen: iso(T0), lastScanId: 's1', rttMs: 0.4,
        findingsCount: 2, maxSeverity: 'high'
      })
      t.same(host!.ports.map((p) => [p.port, p.state, p.service, p.product, p.version]), [
        [22, 'open', 'ssh', 'OpenSSH', '9.2p1'], [80, 'open', 'http', 'Apache httpd', '2.4.49'], [443, 'filtered', undefined, undefined, undefined]
      ])
      t.equal(host!.ports[0].distro, 'deb12u3')
      const id = findingId(a, 80, 'CVE-2021-41773')
      t.match(id, /^[0-9a-f]{24}$/, 'finding id: 24 hex digits')
      const f = await store.getFinding(id)
      t.match(f, { id, address: a, port: 80, cveId: 'CVE-2021-41773', status: 'open', firstSeen: iso(T0), lastSeen: iso(T0), lastScanId: 's1', fixedAt: null, severity: 'high', cvss: 7.5 })
      t.ok(f!.kev?.dateAdded, 'KEV kept from the NVD record')
      t.equal((await store.getFinding(findingId(a, 22, 'CVE-2024-6387')))!.confidence, 'medium')
      t.equal(await store.getHost('10.0.0.6'), null)
      t.equal(await store.getFinding('0'.repeat(24)), null)
    })

    t.test(`${backend}: the same write twice leaves the same state`, async (t) => {
      const { store, db, schema } = await open(t, backend)
      const a = '10.0.0.7'
      const w = write({ address: a, at: T0, services: [SSH, REDIS], findings: [finding(a, 22, 'CVE-2023-51385', 'OpenSSH', '9.2p1'), finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')] })
      await store.recordHost(w)
      const host1 = await store.getHost(a)
      const findings1 = await store.listFindings({ limit: 50, offset: 0 })
      const state1 = db ? await dump(db, schema) : null
      t.match(await store.recordHost(w), { newFindings: 0, fixed: 0, reopened: 0 }, 'nothing new the second time')
      t.same(await store.getHost(a), host1)
      t.same(await store.listFindings({ limit: 50, offset: 0 }), findings1)
      t.equal(findings1.total, 2)
      if (db) t.same(await dump(db, schema), state1, 'every row identical, no count or index entry duplicated')
      // A later scan that re-fixes and a re-run of the first job do not duplicate anything either.
      const later = write({ address: a, at: T0 + H, services: [SSH, REDIS], findings: [finding(a, 22, 'CVE-2023-51385', 'OpenSSH', '9.2p1')] })
      await store.recordHost(later)
      await store.recordHost(later)
      t.equal((await store.listFindings({ limit: 50, offset: 0 })).total, 2)
      t.equal((await store.listHosts({ limit: 50, offset: 0 })).total, 1)
    })

    t.test(`${backend}: one host per address; hostnames merged, firstSeen kept, ports replaced only where scanned`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.0.0.8'
      await store.recordHost(write({ address: a, at: T0, scanId: 's1', hostnames: ['a.test'], services: [SSH, HTTP, REDIS] }))
      await store.recordHost(write({ address: a, at: T0 + H, scanId: 's2', hostnames: ['b.test', 'a.test'], up: true, services: [{ ...SSH, version: '9.6p1' }], scannedPorts: [22, 80] }))
      const host = await store.getHost(a)
      t.same(host!.hostnames, ['a.test', 'b.test'])
      t.equal(host!.firstSeen, iso(T0))
      t.equal(host!.lastSeen, iso(T0 + H))
      t.equal(host!.lastScanId, 's2')
      t.same(host!.ports.map((p) => [p.port, p.version]), [[22, '9.6p1'], [6379, '6.0.5']], 'port 80 closed now and disappears; 6379 was not scanned and stays')
      t.equal((await store.listHosts({ limit: 10, offset: 0 })).total, 1)
      await store.recordHost(write({ address: a, at: T0 + 2 * H, scanId: 's3', up: false, services: [], scannedPorts: [] }))
      t.match(await store.getHost(a), { up: false, lastScanId: 's3' })
      t.equal((await store.getHost(a))!.ports.length, 2, 'a scan that covered no port keeps them all')
    })

    t.test(`${backend}: fixed, reopened, unsettled ports untouched, tallies kept right`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.0.0.9'
      const crit = finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')
      const ssh = finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
      await store.recordHost(write({ address: a, at: T0, services: [SSH, REDIS], findings: [crit, ssh] }))
      t.match(await store.getHost(a), { findingsCount: 2, maxSeverity: 'critical' })

      // Port 6379 re-scanned and settled without its finding; port 22 scanned but its product could not be checked.
      t.match(await store.recordHost(write({ address: a, at: T0 + H, services: [SSH, REDIS], settledPorts: [6379] })), { newFindings: 0, fixed: 1, reopened: 0 })
      t.match(await store.getFinding(crit.cveId && findingId(a, 6379, crit.cveId)), { status: 'fixed', fixedAt: iso(T0 + H), lastSeen: iso(T0) })
      t.match(await store.getFinding(findingId(a, 22, ssh.cveId)), { status: 'open', lastSeen: iso(T0) }, 'unsettled port: left alone')
      t.match(await store.getHost(a), { findingsCount: 1, maxSeverity: 'high' })

      t.match(await store.recordHost(write({ address: a, at: T0 + 2 * H, services: [SSH, REDIS], findings: [crit, ssh] })), { newFindings: 0, fixed: 0, reopened: 1 })
      t.match(await store.getFinding(findingId(a, 6379, crit.cveId)), { status: 'reopened', lastSeen: iso(T0 + 2 * H), firstSeen: iso(T0), fixedAt: iso(T0 + H) })
      t.match(await store.getHost(a), { findingsCount: 2, maxSeverity: 'critical' })

      t.match(await store.recordHost(write({ address: a, at: T0 + 3 * H, services: [SSH, REDIS] })), { newFindings: 0, fixed: 2, reopened: 0 }, 'a reopened finding can be fixed again')
      t.match(await store.getHost(a), { findingsCount: 0, maxSeverity: null })
      t.same(await store.hostsForCve('CVE-2022-0543'), [], 'a fixed finding does not make its host affected')

      // An older result arriving late (a retried job) does not undo what a newer scan established.
      t.match(await store.recordHost(write({ address: a, at: T0 + 2 * H, services: [SSH, REDIS], findings: [crit] })), { newFindings: 0, fixed: 0, reopened: 0 })
      t.equal((await store.getFinding(findingId(a, 6379, crit.cveId)))!.status, 'fixed')
      t.equal((await store.getHost(a))!.lastSeen, iso(T0 + 3 * H))
    })

    t.test(`${backend}: user decisions survive later scans`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.0.0.10'
      const f1 = finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
      const f2 = finding(a, 22, 'CVE-2023-51385', 'OpenSSH', '9.2p1')
      await store.recordHost(write({ address: a, at: T0, services: [SSH], findings: [f1, f2] }))
      const id1 = findingId(a, 22, f1.cveId)
      const id2 = findingId(a, 22, f2.cveId)
      t.equal(await store.decideFinding('f'.repeat(24), 'accepted', null, 'k'), null, 'unknown finding')
      const accepted = await store.decideFinding(id1, 'accepted', 'behind the VPN', 'key-1')
      t.match(accepted, { status: 'accepted', comment: 'behind the VPN', decidedBy: 'key-1' })
      t.ok(accepted!.decidedAt)
      await store.decideFinding(id2, 'false_positive', 'patched by the distro', 'key-1')
      t.match(await store.getHost(a), { findingsCount: 1, maxSeverity: 'high' }, 'a false positive no longer counts; an accepted risk does')

      await store.recordHost(write({ address: a, at: T0 + H, services: [SSH], findings: [f1, f2] }))
      t.match(await store.getFinding(id1), { status: 'accepted', lastSeen: iso(T0 + H), comment: 'behind the VPN' })
      t.match(await store.getFinding(id2), { status: 'false_positive', lastSeen: iso(T0 + H) })
      await store.recordHost(write({ address: a, at: T0 + 2 * H, services: [SSH] }))
      t.match(await store.getFinding(id1), { status: 'accepted', fixedAt: null }, 'not seen on a settled port: still as decided')
      t.match(await store.getFinding(id2), { status: 'false_positive' })
      t.same(await store.hostsForCve(f1.cveId), [a])
      t.same(await store.hostsForCve(f2.cveId), [], 'a false positive does not make its host affected')

      t.match(await store.decideFinding(id1, 'open', null, 'key-2'), { status: 'open', comment: null, decidedBy: 'key-2' }, 'open withdraws the decision')
      await store.recordHost(write({ address: a, at: T0 + 3 * H, services: [SSH] }))
      t.match(await store.getFinding(id1), { status: 'fixed' }, 'and the usual lifecycle resumes')
      t.match(await store.getHost(a), { findingsCount: 0 })
    })

    t.test(`${backend}: fixed_by_distribution and potential findings are kept, never counted, and move with later scans`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.0.0.11'
      const open1 = finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
      const backported = { ...finding(a, 22, 'CVE-2023-51385', 'OpenSSH', '9.2p1'), observed: 'fixed_by_distribution' as const, source: 'distribution' as const }
      const guess = { ...finding(a, 21, 'CVE-2015-3306', 'ProFTPD', null, 'low'), observed: 'potential' as const }
      const counts = await store.recordHost(write({ address: a, at: T0, services: [SSH, { port: 21, service: 'ftp', product: 'ProFTPD' }], findings: [open1, backported, guess] }))
      t.match(counts, { newFindings: 1, fixed: 0, reopened: 0 }, 'only the open finding counts as new')
      const idB = findingId(a, 22, backported.cveId)
      const idG = findingId(a, 21, guess.cveId)
      t.match(await store.getFinding(idB), { status: 'fixed_by_distribution', source: 'distribution' })
      t.match(await store.getFinding(idG), { status: 'potential', confidence: 'low' })
      t.match(await store.getHost(a), { findingsCount: 1, maxSeverity: 'high' }, 'the host counts the open finding alone')
      t.same(await store.hostsForCve(backported.cveId), [], 'a backported fix does not make its host affected')
      t.same(await store.hostsForCve(guess.cveId), [], 'nor does a guess')

      const ids = async (q: Partial<Parameters<ResultsStore['listFindings']>[0]>): Promise<string[]> =>
        (await store.listFindings({ limit: 50, offset: 0, host: a, ...q })).items.map((f) => f.cveId).sort()
      t.same(await ids({}), [open1.cveId], 'the default list leaves both out')
      t.same((await store.listFindings({ limit: 50, offset: 0 })).total, 1, 'and so does the unfiltered total')
      t.same(await ids({ status: 'fixed_by_distribution' }), [backported.cveId], 'visible with a filter')
      t.same(await ids({ status: 'potential' }), [guess.cveId])

      // The tracker changes its mind (or the package is downgraded): the same CVE is open again.
      await store.recordHost(write({ address: a, at: T0 + H, services: [SSH, { port: 21, service: 'ftp', product: 'ProFTPD' }], findings: [open1, { ...backported, observed: 'open', source: 'nvd' }, guess] }))
      t.match(await store.getFinding(idB), { status: 'open', source: 'nvd' })
      t.match(await store.getHost(a), { findingsCount: 2 })
      // The FTP server shows its version now and it is not affected: the potential finding goes.
      await store.recordHost(write({ address: a, at: T0 + 2 * H, services: [SSH, { port: 21, service: 'ftp', product: 'ProFTPD', version: '1.3.8' }], findings: [open1, backported] }))
      t.match(await store.getFinding(idB), { status: 'fixed_by_distribution' }, 'and back once the fix is in')
      t.match(await store.getFinding(idG), { status: 'fixed' })
      // A user's decision outranks what a scan concludes.
      await store.decideFinding(idB, 'accepted', 'ok', 'key-1')
      await store.recordHost(write({ address: a, at: T0 + 3 * H, services: [SSH], findings: [open1, backported] }))
      t.match(await store.getFinding(idB), { status: 'accepted' })
    })

    t.test(`${backend}: EPSS filter, risk order, and KEV/EPSS refreshed without a re-scan`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.0.0.12'
      const v2 = finding(a, 80, 'CVE-2021-41773', 'Apache', '2.4.49')
      const ssh = finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
      const redis = finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')
      await store.recordHost(write({ address: a, at: T0, services: [SSH, HTTP, REDIS], findings: [v2, ssh, redis] }))
      const order = async (q: Partial<Parameters<ResultsStore['listFindings']>[0]> = {}): Promise<string[]> =>
        (await store.listFindings({ limit: 50, offset: 0, sort: 'risk', ...q })).items.map((f) => f.cveId)

      const context = new Map([
        ['CVE-2024-6387', { kev: null, epss: { score: 0.4312, percentile: 0.97, date: '2026-11-23' } }],
        ['CVE-2022-0543', { kev: { dateAdded: '2022-03-28', ransomware: true }, epss: { score: 0.9443, percentile: 0.999, date: '2026-11-23' } }],
        ['CVE-2021-41773', { kev: { dateAdded: '2021-11-03', ransomware: false }, epss: { score: 0.9447, percentile: 0.9999, date: '2026-11-23' } }]
      ])
      let asked: string[] = []
      const changed = await store.refreshExploitContext(async (cves) => {
        asked = asked.concat(cves)
        return new Map(cves.filter((c) => context.has(c)).map((c) => [c, context.get(c)!]))
      })
      t.equal(changed, 3, 'every finding took the new data')
      t.same(asked.sort(), ['CVE-2021-41773', 'CVE-2022-0543', 'CVE-2024-6387'], 'each CVE asked once')
      t.match(await store.getFinding(findingId(a, 22, ssh.cveId)), { epss: { score: 0.4312, percentile: 0.97, date: '2026-11-23' }, kev: null })
      t.same(await order(), ['CVE-2022-0543', 'CVE-2021-41773', 'CVE-2024-6387'], 'ransomware KEV, then KEV, then by EPSS')
      t.same(await order({ order: 'asc' }), ['CVE-2024-6387', 'CVE-2021-41773', 'CVE-2022-0543'])
      t.same(await order({ minEpss: 0.5 }), ['CVE-2022-0543', 'CVE-2021-41773'], 'minEpss leaves out lower scores')
      t.same(await order({ minEpss: 0.95 }), [], 'and missing scores')
      t.equal(await store.refreshExploitContext(async (cves) => new Map(cves.filter((c) => context.has(c)).map((c) => [c, context.get(c)!]))), 0, 'nothing changes twice')
      t.equal(await store.refreshExploitContext(async (cves) => new Map(cves.map((c) => [c, { kev: null, epss: null }]))), 3, 'data withdrawn is withdrawn from the findings')
      t.same(await order({ minEpss: 0 }), [], 'no EPSS left')
      t.same(await order({ kev: true }), [], 'no KEV left')

      // ENISA's EUVD, once imported: the EU KEV listing and the EUVD id; a lookup without them keeps what findings hold.
      t.same(await order(), ['CVE-2022-0543', 'CVE-2024-6387', 'CVE-2021-41773'], 'no KEV, no EPSS: by CVSS (10.0, 8.1, 7.5)')
      const eu = new Map([['CVE-2021-41773', { epss: null, euKev: true, euvdId: 'EUVD-2021-1234' }], ['CVE-2024-6387', { epss: null, euKev: false, euvdId: 'EUVD-2024-5678' }]])
      t.equal(await store.refreshExploitContext(async (cves) => new Map(cves.filter((c) => eu.has(c)).map((c) => [c, eu.get(c)!]))), 2)
      t.match(await store.getFinding(findingId(a, 80, v2.cveId)), { kev: null, kevCatalogues: ['eu'], euvdId: 'EUVD-2021-1234' })
      t.match(await store.getFinding(findingId(a, 22, ssh.cveId)), { kevCatalogues: [], euvdId: 'EUVD-2024-5678' })
      t.same(await order({ kev: 'eu' }), ['CVE-2021-41773'], 'kev=eu lists the finding the refresh put on the EU KEV')
      t.same(await order({ kev: true }), ['CVE-2021-41773'], 'and kev=true, any catalogue')
      t.same(await order(), ['CVE-2021-41773', 'CVE-2022-0543', 'CVE-2024-6387'], 'risk: known exploited (the EU KEV) before a higher CVSS')
      t.same(await order({ order: 'asc' }), ['CVE-2024-6387', 'CVE-2022-0543', 'CVE-2021-41773'], 'and the exact reverse')
      t.same(await order({ sort: 'severity' }), ['CVE-2022-0543', 'CVE-2021-41773', 'CVE-2024-6387'], 'severity first: critical, then the highs with the EU-listed first')
      t.equal(await store.refreshExploitContext(async (cves) => new Map(cves.map((c) => [c, { epss: null }]))), 0, 'no EUVD data: the findings keep theirs')
      t.equal(await store.refreshExploitContext(async (cves) => new Map(cves.map((c) => [c, { epss: null, euKev: false, euvdId: null }]))), 1, 'off the EU KEV: one change')
      t.match(await store.getFinding(findingId(a, 80, v2.cveId)), { kevCatalogues: [], euvdId: 'EUVD-2021-1234' }, 'the id stays when the dump gives none')
      t.same(await order({ kev: 'eu' }), [])
      t.same(await order(), ['CVE-2022-0543', 'CVE-2024-6387', 'CVE-2021-41773'], 'and back to CVSS order')
    })

    t.test(`${backend}: sort=severity: severity first (an exposure finding without CVSS in its rank), then KEV, EPSS, CVSS`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.0.0.13'
      const base = finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
      const make = (port: number, cveId: string, severity: 'critical' | 'high' | 'medium' | 'low', cvss: number | null, kev: boolean) => ({
        ...base, port, cveId, severity, cvss, cvssVersion: cvss === null ? null : '3.1', cvssVector: null,
        kev: kev ? { dateAdded: '2024-07-01', ransomware: false } : null
      })
      const exposure = make(6379, 'VULNSCAN-REDIS-NO-AUTH', 'critical', null, false)
      const highKev = make(80, 'CVE-2021-41773', 'high', 7.5, true)
      const highPlain = make(22, 'CVE-2024-6387', 'high', 8.1, false)
      const medium = make(443, 'CVE-2023-0001', 'medium', 6.5, false)
      const low = make(8080, 'CVE-2023-0002', 'low', 3.1, false)
      const services = [6379, 80, 22, 443, 8080].map((port) => ({ port, service: 'x', product: 'OpenSSH', version: '9.2p1' }))
      await store.recordHost(write({ address: a, at: T0, scanId: 's1', services, findings: [low, exposure, medium, highPlain, highKev] }))
      const order = async (q: Partial<Parameters<ResultsStore['listFindings']>[0]>): Promise<string[]> =>
        (await store.listFindings({ limit: 50, offset: 0, ...q })).items.map((f) => f.cveId)
      const bySeverity = ['VULNSCAN-REDIS-NO-AUTH', 'CVE-2021-41773', 'CVE-2024-6387', 'CVE-2023-0001', 'CVE-2023-0002']
      t.same(await order({ sort: 'severity' }), bySeverity, 'the critical exposure first, KEV before a higher CVSS within high')
      t.same(await order({ sort: 'severity', order: 'asc' }), [...bySeverity].reverse())
      t.same(await order({ sort: 'severity', scanId: 's1' }), bySeverity, 'a scan\'s findings in the same order')
      t.same(await order({ sort: 'cvss' }), ['CVE-2024-6387', 'CVE-2021-41773', 'CVE-2023-0001', 'CVE-2023-0002', 'VULNSCAN-REDIS-NO-AUTH'], 'cvss: the exposure last')
      const first = await store.listFindings({ limit: 2, offset: 0, sort: 'severity' })
      const rest = await store.listFindings({ limit: 50, offset: 2, sort: 'severity' })
      t.same([...first.items, ...rest.items].map((f) => f.cveId), bySeverity, 'pages follow the order')
    })

    t.test(`${backend}: the re-match of a pending product keeps the scan's exposure findings on its ports`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.0.0.14'
      // Scan s1 saw Redis on 6379 without auth (an exposure check) and OpenSSH on 22; the NVD could not supply Redis,
      // so 6379's CVE findings were left unsettled (settledPorts holds 22 only) and the product pending.
      const exposure = { ...finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5'), cveId: 'VULNSCAN-REDIS-NO-AUTH', source: 'vulnscan' as const, severity: 'critical' as const, cvss: null, cvssVersion: null, cvssVector: null, kev: null }
      const ssh = finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
      const first = write({ address: a, at: T0, scanId: 's1', services: [SSH, REDIS], findings: [exposure, ssh], settledPorts: [22] })
      await store.recordHost({ ...first, settledChecks: [6379, 22] })
      const ids = async (scanId: string): Promise<string[]> => (await store.listFindings({ limit: 50, offset: 0, scanId })).items.map((f) => f.cveId).sort()
      t.same(await ids('s1'), ['CVE-2024-6387', 'VULNSCAN-REDIS-NO-AUTH'])
      // The worker's re-match once the index has Redis: the host's stored services, under its last scan, CVE findings only.
      await store.recordHost({
        scanId: 's1', at: iso(T0), host: first.host, scannedPorts: [], findings: [finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')],
        settledPorts: [6379], settledUdpPorts: []
      })
      t.same(await ids('s1'), ['CVE-2022-0543', 'CVE-2024-6387', 'VULNSCAN-REDIS-NO-AUTH'], 'the scan still lists its exposure finding, with the re-matched CVE')
      const row = (await store.scanHosts('s1')).find((h) => h.address === a)
      t.same(row?.findings.map((f) => f.cveId).sort(), ['CVE-2022-0543', 'CVE-2024-6387', 'VULNSCAN-REDIS-NO-AUTH'], 'and so does its snapshot (what diff reads)')
      t.match(await store.getFinding(findingId(a, 6379, 'VULNSCAN-REDIS-NO-AUTH')), { status: 'open' })
    })

    t.test(`${backend}: deleteHost removes the host, its findings and every index entry`, async (t) => {
      const { store, db, schema } = await open(t, backend)
      const a = '10.0.0.11'
      const b = '10.0.0.12'
      await store.recordHost(write({ address: b, at: T0, hostnames: ['keep.test'], services: [SSH], findings: [finding(b, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] }))
      const before = db ? await dump(db, schema) : null
      await store.recordHost(write({ address: a, at: T0, hostnames: ['gone.test'], services: [SSH, REDIS], findings: [finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1'), finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')] }))
      await store.decideFinding(findingId(a, 22, 'CVE-2024-6387'), 'accepted', null, 'k')
      t.equal(await store.deleteHost(a), true)
      t.equal(await store.deleteHost(a), false)
      t.equal(await store.getHost(a), null)
      t.equal(await store.getFinding(findingId(a, 6379, 'CVE-2022-0543')), null)
      t.same(await addresses(store, { limit: 10, offset: 0 }), [b])
      t.same(await addresses(store, { limit: 10, offset: 0, port: 6379 }), [])
      t.same(await addresses(store, { limit: 10, offset: 0, q: 'gone' }), [])
      t.equal((await store.listFindings({ limit: 10, offset: 0 })).total, 1)
      t.equal((await store.listFindings({ limit: 10, offset: 0, kev: true })).total, 0)
      t.same(await store.hostsForCve('CVE-2024-6387'), [b])
      if (db) t.same(await dump(db, schema), before, 'the database holds exactly what it held before the deleted host arrived')
      t.equal(await store.deleteHost('10.9.9.9'), false)
      await store.recordHost(write({ address: a, at: T0 + H, services: [SSH], findings: [finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] }))
      t.match(await store.getFinding(findingId(a, 22, 'CVE-2024-6387')), { status: 'open', firstSeen: iso(T0 + H) }, 'seen again after a delete: a new finding')
    })

    t.test(`${backend}: host filters and sorting`, async (t) => {
      const { store } = await open(t, backend)
      await store.recordHost(write({ address: '10.0.0.2', at: T0 + 3 * H, hostnames: ['db.corp.test'], services: [REDIS], findings: [finding('10.0.0.2', 6379, 'CVE-2022-0543', 'Redis', '6.0.5')] }))
      await store.recordHost(write({ address: '10.0.0.10', at: T0 + H, hostnames: ['web.corp.test'], services: [SSH, HTTP], findings: [finding('10.0.0.10', 80, 'CVE-2021-41773', 'Apache httpd', '2.4.49'), finding('10.0.0.10', 80, 'CVE-2023-25690', 'Apache httpd', '2.4.49'), finding('10.0.0.10', 22, 'CVE-2016-6210', 'OpenSSH', '9.2p1')] }))
      await store.recordHost(write({ address: '9.1.1.1', at: T0 + 2 * H, services: [SSH], findings: [finding('9.1.1.1', 22, 'CVE-2016-6210', 'OpenSSH', '9.2p1')] }))
      await store.recordHost(write({ address: '2001:db8:0:0::1', at: T0 + 4 * H, hostnames: ['v6.test'], services: [{ port: 22, service: 'ssh', product: 'Dropbear sshd', version: '2022.83' }] }))
      await store.recordHost(write({ address: '10.0.0.3', at: T0, services: [{ port: 80, service: 'http', state: 'filtered' }] }))
      const page = { limit: 50, offset: 0 }

      t.same(await addresses(store, page), ['2001:db8::1', '10.0.0.2', '9.1.1.1', '10.0.0.10', '10.0.0.3'], 'most recently seen first; IPv6 in canonical form')
      t.same(await addresses(store, { ...page, order: 'asc' }), ['10.0.0.3', '10.0.0.10', '9.1.1.1', '10.0.0.2', '2001:db8::1'])
      t.same(await addresses(store, { ...page, sort: 'address' }), ['9.1.1.1', '10.0.0.2', '10.0.0.3', '10.0.0.10', '2001:db8::1'], 'numeric address order, IPv4 first')
      t.same(await addresses(store, { ...page, sort: 'address', order: 'desc' }), ['2001:db8::1', '10.0.0.10', '10.0.0.3', '10.0.0.2', '9.1.1.1'])
      t.same(await addresses(store, { ...page, sort: 'findings' }), ['10.0.0.10', '9.1.1.1', '10.0.0.2', '2001:db8::1', '10.0.0.3'], 'most findings first, ties by address text in reverse')
      t.same(await addresses(store, { ...page, sort: 'severity' }), ['10.0.0.2', '10.0.0.10', '9.1.1.1', '2001:db8::1', '10.0.0.3'])
      t.same(await addresses(store, { ...page, sort: 'severity', order: 'asc' }), ['10.0.0.3', '2001:db8::1', '9.1.1.1', '10.0.0.10', '10.0.0.2'])

      t.same(await addresses(store, { ...page, q: 'CORP' }), ['10.0.0.2', '10.0.0.10'], 'q: hostname text, case-insensitive')
      t.same(await addresses(store, { ...page, q: '10.0.0.1' }), ['10.0.0.10'], 'q: address text')
      t.same(await addresses(store, { ...page, q: 'db8::' }), ['2001:db8::1'])
      t.same(await addresses(store, { ...page, port: 22 }), ['2001:db8::1', '9.1.1.1', '10.0.0.10'])
      t.same(await addresses(store, { ...page, port: 80 }), ['10.0.0.10'], 'a filtered port is not an open port')
      t.same(await addresses(store, { ...page, service: 'SSH', sort: 'address' }), ['9.1.1.1', '10.0.0.10', '2001:db8::1'])
      t.same(await addresses(store, { ...page, product: 'openssh' }), ['9.1.1.1', '10.0.0.10'])
      t.same(await addresses(store, { ...page, product: 'dropbear sshd' }), ['2001:db8::1'])
      t.same(await addresses(store, { ...page, product: 'nginx' }), [])
      t.same(await addresses(store, { ...page, minSeverity: 'critical' }), ['10.0.0.2', '10.0.0.10'])
      t.same(await addresses(store, { ...page, minSeverity: 'medium' }), ['10.0.0.2', '9.1.1.1', '10.0.0.10'])
      t.same(await addresses(store, { ...page, hasFindings: false }), ['2001:db8::1', '10.0.0.3'])
      t.same(await addresses(store, { ...page, hasFindings: true, sort: 'address' }), ['9.1.1.1', '10.0.0.2', '10.0.0.10'])
      t.same(await addresses(store, { ...page, port: 22, minSeverity: 'critical', q: 'web' }), ['10.0.0.10'], 'filters combine')
      t.same(await addresses(store, { ...page, service: 'ssh', port: 22, hasFindings: true, sort: 'findings', order: 'asc' }), ['9.1.1.1', '10.0.0.10'])

      const slice = await store.listHosts({ limit: 2, offset: 1, sort: 'address' })
      t.equal(slice.total, 5)
      t.same(slice.items.map((h) => h.address), ['10.0.0.2', '10.0.0.3'])
      const filteredSlice = await store.listHosts({ limit: 1, offset: 1, port: 22, sort: 'address' })
      t.same([filteredSlice.total, filteredSlice.items.map((h) => h.address)], [3, ['10.0.0.10']])
      const walkedSlice = await store.listHosts({ limit: 1, offset: 2, minSeverity: 'low' })
      t.same([walkedSlice.total, walkedSlice.items.map((h) => h.address)], [3, ['10.0.0.10']])
      t.same(await store.listHosts({ limit: 5, offset: 10 }), { items: [], total: 5 })
      t.equal((await store.getHost('2001:DB8::0:1'))?.address, '2001:db8::1', 'lookups normalize the address')
    })

    t.test(`${backend}: finding filters and sorting`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.1.0.1'
      const b = '10.1.0.2'
      await store.recordHost(write({ address: a, at: T0, services: [SSH, HTTP], findings: [
        finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1', 'medium'),
        finding(a, 80, 'CVE-2021-41773', 'Apache httpd', '2.4.49'),
        finding(a, 80, 'CVE-2024-38474', 'Apache httpd', '2.4.49')
      ] }))
      await store.recordHost(write({ address: b, at: T0 + H, services: [REDIS, SSH], findings: [
        finding(b, 6379, 'CVE-2022-0543', 'Redis', null, 'low'),
        finding(b, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
      ] }))
      await store.recordHost(write({ address: b, at: T0 + 2 * H, services: [REDIS, SSH], findings: [finding(b, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] }))
      const page = { limit: 50, offset: 0 }
      const ids = async (q: Partial<Parameters<ResultsStore['listFindings']>[0]>): Promise<string[]> =>
        (await store.listFindings({ ...page, ...q })).items.map((f) => `${f.address}:${f.port}:${f.cveId}`)

      const all = (await store.listFindings(page)).items
      t.same(all.map((f) => f.cvss), [10, 8.1, 8.1, 7.5, null], 'highest CVSS first, a missing score last')
      t.same((await store.listFindings({ ...page, order: 'asc' })).items.map((f) => f.cvss), [null, 7.5, 8.1, 8.1, 10])
      t.same(await ids({ severity: 'critical' }), [`${b}:6379:CVE-2022-0543`])
      t.same(await ids({ severity: 'unknown' }), [`${a}:80:CVE-2024-38474`], 'no CVSS: severity unknown')
      t.same((await store.listFindings({ ...page, minCvss: 8 })).items.map((f) => f.cvss), [10, 8.1, 8.1])
      t.equal((await store.listFindings({ ...page, minCvss: 0 })).total, 4, 'a missing score never passes minCvss')
      t.same((await ids({ kev: true })).sort(), [`${a}:80:CVE-2021-41773`, `${b}:6379:CVE-2022-0543`].sort())
      t.same((await ids({ kev: false })).sort(), [`${a}:22:CVE-2024-6387`, `${a}:80:CVE-2024-38474`, `${b}:22:CVE-2024-6387`].sort())
      t.same((await ids({ cveId: 'cve-2024-6387' })).sort(), [`${a}:22:CVE-2024-6387`, `${b}:22:CVE-2024-6387`])
      t.same(await ids({ host: b }), [`${b}:6379:CVE-2022-0543`, `${b}:22:CVE-2024-6387`])
      t.same(await ids({ status: 'fixed' }), [`${b}:6379:CVE-2022-0543`])
      t.same(await ids({ status: 'open', host: b }), [`${b}:22:CVE-2024-6387`])
      t.same(await ids({ confidence: 'low' }), [`${b}:6379:CVE-2022-0543`])
      t.same(await ids({ confidence: 'medium' }), [`${a}:22:CVE-2024-6387`])
      t.same(await ids({ host: a, kev: false, minCvss: 5 }), [`${a}:22:CVE-2024-6387`], 'filters combine')
      t.same(await ids({ sort: 'lastSeen' }).then((l) => l[0]), `${b}:22:CVE-2024-6387`, 'most recently seen first')
      t.same(await ids({ sort: 'firstSeen', order: 'asc' }).then((l) => l.slice(-2).sort()), [`${b}:22:CVE-2024-6387`, `${b}:6379:CVE-2022-0543`])
      const sliced = await store.listFindings({ limit: 2, offset: 1 })
      t.same([sliced.total, sliced.items.map((f) => f.cvss)], [5, [8.1, 8.1]])
      const filteredSlice = await store.listFindings({ limit: 1, offset: 1, cveId: 'CVE-2024-6387' })
      t.same([filteredSlice.total, filteredSlice.items.length], [2, 1])
      t.same(await store.hostsForCve('CVE-2024-6387'), [a, b])
      t.same(await store.hostsForCve('CVE-1999-0001'), [])
    })

    t.test(`${backend}: concurrent writes to one host lose nothing`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.2.0.1'
      const services = Array.from({ length: 12 }, (_, i) => ({ port: 1000 + i, service: 'http', product: 'nginx', version: '1.20.0' }))
      await Promise.all(services.map((s, i) => store.recordHost(write({
        address: a, at: T0 + i, services: [s], findings: [finding(a, s.port, 'CVE-2021-23017', 'nginx', '1.20.0')]
      }))))
      const host = await store.getHost(a)
      t.equal(host!.ports.length, 12, 'every batch\'s port is kept')
      t.equal(host!.findingsCount, 12)
      t.equal((await store.listFindings({ limit: 50, offset: 0, host: a })).total, 12)
      const id = findingId(a, 1000, 'CVE-2021-23017')
      await Promise.all([
        store.decideFinding(id, 'false_positive', 'not exposed', 'k'),
        store.recordHost(write({ address: a, at: T0 + H, services: [services[0]], findings: [finding(a, 1000, 'CVE-2021-23017', 'nginx', '1.20.0')] }))
      ])
      t.match(await store.getFinding(id), { status: 'false_positive', lastSeen: iso(T0 + H) }, 'a decision racing a scan keeps both')
      t.equal((await store.getHost(a))!.findingsCount, 11)
    })

    t.test(`${backend}: bounded texts and rejected addresses`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.3.0.1'
      const f = { ...finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1'), evidence: 'x'.repeat(100_000) }
      await store.recordHost(write({ address: a, at: T0, services: [{ ...SSH, banner: 'b'.repeat(100_000) }], findings: [f] }))
      t.ok((await store.getFinding(findingId(a, 22, f.cveId)))!.evidence.length <= 4096)
      t.ok((await store.getHost(a))!.ports[0].banner!.length <= 4096)
      await store.recordHost(write({ address: a, at: T0 + 1, hostnames: [...Array.from({ length: 500 }, (_, i) => `n${i}.test`), 'x'.repeat(300)] }))
      const names = (await store.getHost(a))!.hostnames
      t.ok(names.length <= 64, 'hostnames bounded in number')
      t.notOk(names.some((n) => n.length > 253), 'and in length')
      await t.rejects(store.recordHost(write({ address: 'not-an-ip', at: T0 })), /not an IP address/)
    })
  }
})

test('openBackends picks the results backend', async (t) => {
  const kinds = await backends()
  t.type((await openBackendsIn(t, 'memory')).results, MemoryResultsStore)
  if (kinds.includes('redis')) t.type((await openBackendsIn(t, 'redis')).results, PostgresResultsStore)
  // The scaled deployment keeps results in PostgreSQL: REDIS_URL alone is a startup error that names both variables.
  await t.rejects(openBackendsIn(t, 'redis', { DATABASE_URL: undefined }), /REDIS_URL is set but DATABASE_URL is not/)
})

test('the hosts revision moves with every host write and delete, and only then', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { store } = await open(t, backend)
      const r0 = await store.hostsRevision()
      t.equal(await store.hostsRevision(), r0, 'reads do not move it')
      await store.recordHost(write({ address: '10.1.1.1', at: T0, services: [SSH], findings: [] }))
      const r1 = await store.hostsRevision()
      t.not(r1, r0, 'a write moves it')
      await store.listHosts({ limit: 10, offset: 0 })
      t.equal(await store.hostsRevision(), r1)
      await store.deleteHost('10.1.1.1')
      t.not(await store.hostsRevision(), r1, 'a delete moves it')
    })
  }
})

test('every list total is the number of findings the list holds, after writes, decisions, refreshes and deletes', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { store } = await open(t, backend)
      const cves = ['CVE-2024-6387', 'CVE-2023-51385', 'CVE-2021-41773', 'CVE-2022-0543', 'CVE-2016-6210', 'CVE-2023-25690']
      const epssOf = (i: number): { score: number, percentile: number, date: string } | null =>
        i % 5 === 0 ? null : { score: [0.00005, 0.0001, 0.12345, 0.1234, 0.5, 0.97][i % 6], percentile: 0.5, date: '2026-11-20' }
      let n = 0
      for (let h = 0; h < 12; h++) {
        const a = `10.9.0.${h + 1}`
        const findings = cves.slice(0, 2 + (h % 5)).map((c, i) => {
          const f = finding(a, 22, c, 'OpenSSH', '9.2p1', (['high', 'medium', 'low'] as const)[(h + i) % 3])
          const observed = (['open', 'open', 'fixed_by_distribution', 'potential'] as const)[(h + i) % 4]
          return { ...f, epss: epssOf(n++), observed }
        })
        await store.recordHost(write({ address: a, at: T0 + h, services: [SSH], findings }))
      }
      // Later scans fix some, decisions and a refresh move others, one host goes.
      await store.recordHost(write({ address: '10.9.0.3', at: T0 + H, services: [SSH], findings: [] }))
      const some = (await store.listFindings({ limit: 3, offset: 0, host: '10.9.0.4' })).items
      await store.decideFinding(some[0].id, 'false_positive', null, 'k')
      await store.decideFinding(some[1].id, 'accepted', null, 'k')
      await store.refreshExploitContext(async (ids) => new Map(ids.map((c, i) => [c, { kev: i % 2 === 0 ? { dateAdded: '2024-01-01', ransomware: false } : null, epss: i === 0 ? null : { score: [0.1234, 0.12345, 0.5, 0.00005][i % 4], percentile: 0.9, date: '2026-11-21' } }])))
      await store.deleteHost('10.9.0.7')

      const queries: Partial<Parameters<ResultsStore['listFindings']>[0]>[] = [
        {}, { status: 'open' }, { status: 'fixed' }, { status: 'potential' }, { status: 'fixed_by_distribution' }, { status: 'accepted' },
        { severity: 'critical' }, { severity: 'high', status: 'open' }, { kev: true }, { kev: false }, { kev: true, minCvss: 7 }, { minCvss: 9.8 },
        { confidence: 'low' }, { minEpss: 0 }, { minEpss: 0.00005 }, { minEpss: 0.0001 }, { minEpss: 0.12345 }, { minEpss: 0.1234 }, { minEpss: 0.12344 },
        { minEpss: 0.125, kev: true }, { minEpss: 0.5, status: 'fixed' }, { minEpss: 0.2, severity: 'critical' }, { host: '10.9.0.4' }, { cveId: 'CVE-2024-6387' }
      ]
      for (const q of queries) {
        const page = await store.listFindings({ limit: 1000, offset: 0, ...q })
        t.equal(page.total, page.items.length, `total of ${JSON.stringify(q)}`)
        const tail = await store.listFindings({ limit: 2, offset: Math.max(0, page.total - 2), ...q })
        t.same(tail.items.map((f) => f.id), page.items.slice(-2).map((f) => f.id), `last page of ${JSON.stringify(q)} read from the end`)
      }
    })
  }
})

/** host_counts as the hosts rows make it: every key the writes keep, counted afresh from the columns the filters read. */
const HOST_COUNTS_FROM_ROWS = `
SELECT facet, value, severity_score, has_findings, count(*)::bigint AS n FROM (
  SELECT '' AS facet, '' AS value, severity_score, findings_count > 0 AS has_findings FROM hosts
  UNION ALL SELECT 'port', v::text, severity_score, findings_count > 0 FROM hosts, unnest(ports) AS v
  UNION ALL SELECT 'service', v, severity_score, findings_count > 0 FROM hosts, unnest(services) AS v
  UNION ALL SELECT 'product', v, severity_score, findings_count > 0 FROM hosts, unnest(products) AS v
  UNION ALL SELECT 'tag', v, severity_score, findings_count > 0 FROM hosts, unnest(tags) AS v
) AS f GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`

const HOST_COUNTS = 'SELECT facet, value, severity_score, has_findings, n FROM host_counts ORDER BY 1, 2, 3, 4'

/** Hosts on three products with findings of every severity, then re-scans that drop ports, decisions, tag edits and deletes. */
async function hostHistory (store: ResultsStore): Promise<void> {
  const services = [[SSH], [SSH, HTTP], [HTTP, REDIS], [SSH, HTTP, REDIS], [REDIS], []]
  const cves = { 22: ['CVE-2024-6387', 'CVE-2016-6210'], 80: ['CVE-2021-41773', 'CVE-2023-25690'], 6379: ['CVE-2022-0543'] } as Record<number, string[]>
  for (let h = 0; h < 18; h++) {
    const a = `10.8.0.${h + 1}`
    const on = services[h % services.length]
    const findings = h % 4 === 3 ? [] : on.flatMap((s) => cves[s.port].slice(0, 1 + (h % 2)).map((c) => finding(a, s.port, c, s.product, s.version)))
    await store.recordHost(write({ address: a, at: T0 + h, services: on, findings }))
  }
  // Re-scans: 10.8.0.2 loses HTTP (and its findings are fixed), 10.8.0.4 loses every port, 10.8.0.9 gains SSH.
  await store.recordHost(write({ address: '10.8.0.2', at: T0 + H, services: [SSH], scannedPorts: [22, 80], findings: [finding('10.8.0.2', 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] }))
  await store.recordHost(write({ address: '10.8.0.4', at: T0 + H, services: [], scannedPorts: [22, 80, 6379], settledPorts: [22, 80, 6379] }))
  await store.recordHost(write({ address: '10.8.0.9', at: T0 + H, services: [SSH, HTTP, REDIS] }))
  // Decisions: a host's only finding set aside (it has no findings left), another one's reopened.
  const only = (await store.listFindings({ limit: 10, offset: 0, host: '10.8.0.5' })).items
  for (const f of only) await store.decideFinding(f.id, 'false_positive', null, 'k')
  const some = (await store.listFindings({ limit: 10, offset: 0, host: '10.8.0.3' })).items
  await store.decideFinding(some[0].id, 'accepted', null, 'k')
  await store.decideFinding(some[0].id, 'open', null, 'k')
  await store.setHostTags('10.8.0.1', ['prod', 'web'])
  await store.setHostTags('10.8.0.2', ['prod'])
  await store.addHostTags('10.8.0.3', ['web'])
  await store.addHostTags('10.8.0.1', ['dmz'], ['web'])
  await store.setHostTags('10.8.0.3', [])
  await store.setHostTags('10.8.0.10', ['prod', 'dmz'])
  await store.deleteHost('10.8.0.10')
  await store.deleteHost('10.8.0.7')
}

test('every host list total is the number of hosts the list holds, after writes, re-scans, decisions, tag edits and deletes', async (t) => {
  const queries: Partial<Parameters<ResultsStore['listHosts']>[0]>[] = [
    {}, { port: 22 }, { port: 80 }, { port: 6379 }, { port: 443 }, { service: 'SSH' }, { service: 'http' }, { product: 'openssh' },
    { product: 'Apache httpd' }, { product: 'nginx' }, { tag: 'prod' }, { tag: 'dmz' }, { tag: 'web' }, { minSeverity: 'critical' },
    { minSeverity: 'high' }, { minSeverity: 'low' }, { hasFindings: true }, { hasFindings: false }, { port: 22, minSeverity: 'high' },
    { port: 80, hasFindings: false }, { service: 'redis', minSeverity: 'critical', hasFindings: true }, { tag: 'prod', minSeverity: 'medium' },
    { minSeverity: 'high', hasFindings: true }, { port: 22, service: 'ssh' }, { port: 22, q: '10.8.0.1' }, { tag: 'prod', port: 22 }
  ]
  const totals = new Map<string, number[]>()
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { store, db, schema } = await open(t, backend)
      await hostHistory(store)
      const seen: number[] = []
      for (const q of queries) {
        const page = await store.listHosts({ limit: 1000, offset: 0, ...q })
        t.equal(page.total, page.items.length, `total of ${JSON.stringify(q)}`)
        // Past the first page too: the total is asked for before any row is read.
        t.equal((await store.listHosts({ limit: 1, offset: 1, ...q })).total, page.total, `total of ${JSON.stringify(q)} past the first page`)
        seen.push(page.total)
      }
      totals.set(backend, seen)
      if (db === undefined) return
      await db.query(`SET search_path = "${schema}"`)
      const kept = (await db.query(HOST_COUNTS)).rows
      t.ok(kept.length > 0)
      t.same(kept, (await db.query(HOST_COUNTS_FROM_ROWS)).rows, 'every kept count is the count of its rows; no empty count is left')
    })
  }
  t.test('the backends agree', async (t) => {
    const [first, ...rest] = [...totals.values()]
    for (const other of rest) t.same(other, first)
    t.ok(first.some((n) => n > 0) && first.some((n) => n === 0), 'the queries find some hosts and none')
  })
})

test('the host counts migration counts the hosts a database already holds', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: PostgreSQL or Redis does not answer')
  // The hosts as the store leaves them, copied into a schema migrated up to just before host_counts.
  const { store, db, schema } = await open(t, 'redis')
  await hostHistory(store)
  const { old, legacy } = await schemaBefore(t, 'hostcountsmig', '1767571200000_host_counts.sql')
  const columns = 'address, addr_key, last_seen_ms, findings_count, severity_score, search, ports, services, products, tags, record'
  const copied = await old.query(`INSERT INTO hosts (${columns}) SELECT ${columns} FROM "${schema}".hosts`)
  t.ok((copied.rowCount ?? 0) > 10)
  t.ok((await migrateResults(old, legacy)).includes('1767571200000_host_counts'))
  const kept = (await db?.query(`SELECT facet, value, severity_score, has_findings, n FROM "${schema}".host_counts ORDER BY 1, 2, 3, 4`))?.rows
  t.same((await old.query(HOST_COUNTS)).rows, kept, 'the counts the writes keep')
})

test('the confidence score migration scores the findings a database already holds, as the store would write them', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: PostgreSQL or Redis does not answer')
  const { store, schema } = await open(t, 'redis')
  const a = '10.9.0.1'
  await store.recordHost(write({
    address: a, at: T0, services: [SSH, REDIS],
    findings: [finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1', 'medium'), finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5', 'high')]
  }))
  const { old, legacy } = await schemaBefore(t, 'confscoremig', '1768500000000_finding_confidence_score.sql')
  // The rows as the store wrote them before the score: without the column, and without the field in the record.
  const columns = 'id, address, cve_id, severity, cvss, cvss_sort, epss, kev, status, confidence, first_seen_ms, last_seen_ms, risk'
  await old.query(`INSERT INTO findings (${columns}, record) SELECT ${columns}, regexp_replace(record::text, '"confidenceScore":[0-9]+,', '')::json FROM "${schema}".findings`)
  t.equal((await old.query("SELECT count(*)::int AS n FROM findings WHERE record->>'confidenceScore' IS NULL")).rows[0].n, 2)
  t.ok((await migrateResults(old, legacy)).includes('1768500000000_finding_confidence_score'))
  const now = await old.query<{ cve_id: string, confidence_score: number, text: string }>('SELECT cve_id, confidence_score, record::text AS text FROM findings ORDER BY cve_id')
  const written = await old.query<{ text: string }>(`SELECT record::text AS text FROM "${schema}".findings ORDER BY cve_id`)
  t.same(now.rows.map((r) => [r.cve_id, r.confidence_score]), [['CVE-2022-0543', 80], ['CVE-2024-6387', 50]], 'the column from the label')
  t.same(now.rows.map((r) => r.text), written.rows.map((r) => r.text), 'and the record\'s text exactly as the store writes it now')
})

test('the EU KEV risk migration moves the stored findings only the EU KEV lists into the known-exploited rank', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: PostgreSQL or Redis does not answer')
  const { store, schema } = await open(t, 'redis')
  const a = '10.9.0.2'
  const euOnly = { ...finding(a, 80, 'CVE-2021-41773', 'Apache httpd', '2.4.49'), kev: null, kevCatalogues: ['eu' as const] }
  const both = { ...finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5'), kevCatalogues: ['cisa' as const, 'eu' as const] }
  await store.recordHost(write({ address: a, at: T0, services: [HTTP, REDIS, SSH], findings: [euOnly, both, finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] }))
  const { old, legacy } = await schemaBefore(t, 'riskeumig', '1769100000000_risk_eu_kev.sql')
  // The rows as the store wrote them before: an EU-only finding in the unlisted rank of both sort columns.
  const columns = 'id, address, cve_id, severity, cvss, cvss_sort, epss, kev, status, confidence, first_seen_ms, last_seen_ms, confidence_score, kev_eu, record'
  const old12 = 'CASE WHEN kev_eu AND NOT kev THEN 1000000000000 ELSE 0 END'
  await old.query(`INSERT INTO findings (${columns}, risk, severity_risk) SELECT ${columns}, risk - ${old12}, severity_risk - ${old12} FROM "${schema}".findings`)
  const sorted = 'SELECT cve_id, risk::text, severity_risk::text FROM findings ORDER BY cve_id'
  const written = (await old.query(`SELECT cve_id, risk::text, severity_risk::text FROM "${schema}".findings ORDER BY cve_id`)).rows
  t.not((await old.query(sorted)).rows[0].risk, written[0].risk, 'the EU-only finding was below before')
  t.ok((await migrateResults(old, legacy)).includes('1769100000000_risk_eu_kev'))
  t.same((await old.query(sorted)).rows, written, 'both sort columns exactly as the store writes them now')
})
