// The embedded results store keeps findings in slots with typed-array columns that grow, an id index that is
// rebuilt as it fills, and slots that deleted hosts free for new findings: what it hands out must not show any
// of that. An export started before writes yields the state it started from.
import { test } from 'tap'
import { MemoryResultsStore } from '../../../../lib/store/memory/results'
import { findingId } from '../../../../lib/store/results-merge'
import type { FindingRecord, NewFinding } from '../../../../lib/domain/findings'
import { write } from '../../../support/results'

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const HTTP = { port: 80, service: 'http', product: 'nginx', version: '1.22.1' }

function newFinding (address: string, port: number, n: number): NewFinding {
  const cvss = [null, 5, 7.5, 9.8][n % 4]
  return {
    address,
    port,
    cveId: `cve-2024-${10_000 + n}`,
    severity: cvss === null ? 'unknown' : cvss >= 9 ? 'critical' : cvss >= 7 ? 'high' : 'medium',
    cvss,
    cvssVersion: cvss === null ? null : '3.1',
    cvssVector: null,
    kev: n % 9 === 0 ? { dateAdded: '2025-01-01', ransomware: n % 2 === 0 } : null,
    epss: n % 3 === 0 ? null : { score: (n % 10) / 10, percentile: 0.5, date: '2026-01-01' },
    description: `CVE number ${n % 50}`,
    product: port === 22 ? 'OpenSSH' : 'nginx',
    version: '1',
    matchedCpe: `cpe:2.3:a:p:p${port}:1:*:*:*:*:*:*:*`,
    criterion: 'cpe:2.3:a:p:p:*:*:*:*:*:*:*:*',
    reason: 'r',
    source: 'nvd',
    rule: `rule ${n % 7}`,
    observed: n % 11 === 0 ? 'potential' : 'open',
    distribution: null,
    confidence: n % 5 === 0 ? 'medium' : 'high',
    confidenceNote: null,
    evidence: 'e',
    requiresPlatform: []
  }
}

function hostWrite (i: number, at: number, shift = 0): ReturnType<typeof write> {
  const address = `10.7.${Math.floor(i / 250)}.${(i % 250) + 1}`
  const findings = Array.from({ length: 20 }, (_, k) => newFinding(address, k % 2 === 0 ? 22 : 80, i * 3 + k + shift))
  return write({ address, at, services: [SSH, HTTP], findings })
}

async function everything (store: MemoryResultsStore): Promise<FindingRecord[]> {
  const out: FindingRecord[] = []
  for (const status of ['open', 'reopened', 'fixed', 'accepted', 'false_positive', 'fixed_by_distribution', 'potential'] as const) {
    for await (const f of store.streamFindings({ status })) out.push(f)
  }
  return out
}

test('ids, records and totals survive column growth, index rebuilds and slots taken again after deletes', async (t) => {
  const store = new MemoryResultsStore()
  // 1,200 hosts of 20 findings: past the columns' first capacity (16,384 slots) and through several index rebuilds.
  for (let i = 0; i < 1200; i += 100) await store.recordHosts(Array.from({ length: 100 }, (_, k) => hostWrite(i + k, T0 + i + k)))
  await store.listFindings({ limit: 1, offset: 0, sort: 'risk' })
  for (let i = 0; i < 1200; i += 3) t.equal(await store.deleteHost(`10.7.${Math.floor(i / 250)}.${(i % 250) + 1}`), true)
  // New hosts take the freed slots; the hosts left are re-scanned with some findings gone and some new.
  for (let i = 1200; i < 1500; i++) await store.recordHost(hostWrite(i, T0 + 10_000 + i))
  for (let i = 1; i < 1200; i += 3) await store.recordHost(hostWrite(i, T0 + 20_000 + i, 5))

  const all = await everything(store)
  const ids = all.map((f) => f.id)
  t.equal(new Set(ids).size, ids.length, 'no finding listed twice')
  // The shifted re-scan puts each CVE on the other port: 20 new findings, and the 20 earlier ones fixed.
  t.equal(all.length, 400 * 40 + 400 * 20 + 300 * 20, 'every finding of the hosts left, the fixed ones included')
  t.equal(all.filter((f) => f.status === 'fixed').length, 400 * 20, 'the re-scans fixed what they no longer saw')
  for (const f of all) {
    if (f.id !== findingId(f.address, f.port, f.cveId)) t.fail(`${f.id} is not the id of ${f.address} ${f.port} ${f.cveId}`)
    const got = await store.getFinding(f.id)
    if (got === null || got.id !== f.id || got.status !== f.status) t.fail(`getFinding(${f.id})`)
  }
  t.equal(await store.getFinding(findingId('10.7.0.1', 22, 'CVE-2024-10000')), null, 'a deleted host\'s finding is gone')
  t.equal(await store.getFinding('not-an-id'), null)

  const open = all.filter((f) => f.status === 'open' || f.status === 'reopened' || f.status === 'fixed' || f.status === 'accepted' || f.status === 'false_positive')
  t.equal((await store.listFindings({ limit: 1, offset: 0 })).total, open.length, 'the default total')
  const kev = open.filter((f) => f.kev !== null && f.cvss !== null && f.cvss >= 7)
  const page = await store.listFindings({ limit: 10_000, offset: 0, kev: true, minCvss: 7, sort: 'risk' })
  t.equal(page.total, kev.length, 'a filtered total')
  t.same(new Set(page.items.map((f) => f.id)), new Set(kev.map((f) => f.id)))
})

test('an export yields the state it started from, whatever is written while it runs', async (t) => {
  const store = new MemoryResultsStore()
  for (let i = 0; i < 40; i++) await store.recordHost(hostWrite(i, T0 + i))
  const before = (await store.listFindings({ limit: 100_000, offset: 0, sort: 'lastSeen', order: 'asc' })).items
  const exported: FindingRecord[] = []
  const it = store.streamFindings({ sort: 'lastSeen', order: 'asc' })[Symbol.asyncIterator]()
  exported.push((await it.next()).value as FindingRecord)
  // Meanwhile: a re-scan fixes and changes findings, a decision, deleted hosts, and new hosts in the freed slots.
  for (let i = 0; i < 40; i += 2) await store.recordHost(hostWrite(i, T0 + 1000 + i, 3))
  await store.decideFinding(before[before.length - 1].id, 'accepted', 'known', 'k')
  for (let i = 1; i < 40; i += 4) await store.deleteHost(`10.7.0.${i + 1}`)
  for (let i = 100; i < 120; i++) await store.recordHost(hostWrite(i, T0 + 2000 + i))
  for (let r = await it.next(); r.done !== true; r = await it.next()) exported.push(r.value)
  t.same(exported, before, 'the records, in order, as they were')
  t.not((await store.getFinding(before[before.length - 1].id))?.status, before[before.length - 1].status, 'while the store moved on')
})
