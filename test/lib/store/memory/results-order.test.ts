// The embedded results store keeps its orders up to date write by write: after many interleaved writes,
// decisions, exploit refreshes and deletes, every list must equal a plain sort of every record.
import { test } from 'tap'
import { MemoryResultsStore } from '../../../../lib/store/memory/results'
import { compareBy, FINDING_SORT_DEFAULT_ORDER, findingMatches, findingSortValue, HOST_SORT_DEFAULT_ORDER, hostSortValue, SEVERITY_RANK } from '../../../../lib/store/results-merge'
import type { FindingQuery, HostQuery } from '../../../../lib/store/results-types'
import type { FindingRecord, NewFinding } from '../../../../lib/domain/findings'
import type { HostRecord } from '../../../../lib/domain/hosts'
import { write } from '../../../support/results'

function random (seed: number): () => number {
  let s = seed
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  }
}

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const
const PORTS = [
  { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' },
  { port: 80, service: 'http', product: 'nginx', version: '1.22.1' },
  { port: 443, service: 'https', product: 'Apache httpd', version: '2.4.62' },
  { port: 6379, service: 'redis', product: 'Redis', version: '7.0.15' }
]

function newFinding (rnd: () => number, address: string, port: number, cve: number): NewFinding {
  // Few distinct CVSS, EPSS and KEV values, so that ties (broken by id) are the common case.
  const cvss = rnd() < 0.1 ? null : [5, 7.5, 9.8][Math.floor(rnd() * 3)]
  return {
    address,
    port,
    cveId: `CVE-2024-${1000 + cve}`,
    severity: cvss === null ? 'unknown' : SEVERITIES[Math.floor(rnd() * 4)],
    cvss,
    cvssVersion: cvss === null ? null : '3.1',
    cvssVector: null,
    kev: rnd() < 0.2 ? { dateAdded: '2025-01-01', ransomware: rnd() < 0.5 } as NewFinding['kev'] : null,
    epss: rnd() < 0.5 ? { score: [0.1, 0.5][Math.floor(rnd() * 2)], percentile: 0.5, date: '2026-01-01' } : null,
    description: 'a test CVE',
    product: 'p',
    version: '1',
    matchedCpe: 'cpe:2.3:a:p:p:1:*:*:*:*:*:*:*',
    criterion: 'cpe:2.3:a:p:p:*:*:*:*:*:*:*:*',
    reason: 'r',
    source: 'nvd',
    rule: 'r',
    observed: rnd() < 0.1 ? 'potential' : rnd() < 0.1 ? 'fixed_by_distribution' : 'open',
    distribution: null,
    confidence: rnd() < 0.5 ? 'high' : 'medium',
    confidenceNote: null,
    evidence: 'e',
    requiresPlatform: []
  }
}

test('lists equal a plain sort of every record after many interleaved changes', async (t) => {
  const rnd = random(11)
  const store = new MemoryResultsStore()
  const addresses = Array.from({ length: 60 }, (_, i) => `10.9.${i % 3}.${i}`)
  // Read every order once first, so that each is kept up to date by the writes rather than built after them.
  for (const sort of ['cvss', 'lastSeen', 'firstSeen', 'risk'] as const) await store.listFindings({ limit: 1, offset: 0, sort })
  for (const sort of ['lastSeen', 'address', 'findings', 'severity'] as const) await store.listHosts({ limit: 1, offset: 0, sort })

  for (let step = 0; step < 700; step++) {
    const address = addresses[Math.floor(rnd() * addresses.length)]
    const r = rnd()
    if (r < 0.05) {
      await store.deleteHost(address)
    } else if (r < 0.12) {
      const page = await store.listFindings({ limit: 50, offset: Math.floor(rnd() * 50), sort: 'lastSeen' })
      const f = page.items[Math.floor(rnd() * page.items.length)]
      if (f !== undefined) await store.decideFinding(f.id, (['accepted', 'false_positive', 'open'] as const)[Math.floor(rnd() * 3)], null, 'k')
    } else if (r < 0.15) {
      await store.refreshExploitContext(async (cves) => new Map(cves.filter(() => rnd() < 0.3).map((c) => [c, { epss: rnd() < 0.5 ? null : { score: rnd(), percentile: 0.5, date: '2026-02-01' } }])))
    } else {
      const services = PORTS.filter(() => rnd() < 0.6)
      const findings = services.flatMap((s) => Array.from({ length: Math.floor(rnd() * 4) }, () => newFinding(rnd, address, s.port, Math.floor(rnd() * 30))))
      // Out-of-order arrivals too: a write may be older than what the store holds.
      const at = T0 + Math.floor(rnd() * 400) * 60_000
      await store.recordHosts([write({ address, at, hostnames: [`h${step % 7}.test`], services, findings })])
    }
  }

  const hosts = (await Promise.all(addresses.map((a) => store.getHost(a)))).filter((h): h is HostRecord => h !== null)
  const findings: FindingRecord[] = []
  for await (const f of store.streamFindings({ status: 'open' })) findings.push(f)
  for (const status of ['reopened', 'fixed', 'accepted', 'false_positive', 'fixed_by_distribution', 'potential'] as const) {
    for await (const f of store.streamFindings({ status })) findings.push(f)
  }
  t.ok(hosts.length > 20 && findings.length > 300, `a real mix: ${hosts.length} hosts, ${findings.length} findings`)
  t.equal(new Set(findings.map((f) => f.id)).size, findings.length, 'no finding listed twice')
  for (const f of findings) t.same(await store.getFinding(f.id), f) || t.fail(f.id)

  const findingQueries: Omit<FindingQuery, 'limit' | 'offset'>[] = [
    {}, { kev: true, minCvss: 7 }, { severity: 'critical', status: 'open' }, { minEpss: 0.3 }, { confidence: 'medium' },
    { status: 'potential' }, { cveId: 'cve-2024-1003' }, { host: addresses[4] }, { kev: false }
  ]
  for (const sort of ['cvss', 'lastSeen', 'firstSeen', 'risk'] as const) {
    for (const order of ['asc', 'desc'] as const) {
      for (const filters of findingQueries) {
        const q = { ...filters, sort, order }
        const expected = findings.filter((f) => findingMatches(f, q)).sort(compareBy((f) => findingSortValue(f, sort), (f) => f.id, order))
        const got = await store.listFindings({ ...q, limit: 100_000, offset: 0 })
        t.equal(got.total, expected.length, `total of ${JSON.stringify(q)}`)
        t.same(got.items.map((f) => f.id), expected.map((f) => f.id), `order of ${JSON.stringify(q)}`)
        const deep = await store.listFindings({ ...q, limit: 7, offset: 13 })
        t.same(deep.items.map((f) => f.id), expected.slice(13, 20).map((f) => f.id), `a page inside ${JSON.stringify(q)}`)
        const tailOffset = Math.max(0, expected.length - 7)
        const tail = await store.listFindings({ ...q, limit: 10, offset: tailOffset })
        t.same(tail.items.map((f) => f.id), expected.slice(tailOffset).map((f) => f.id), `the last page of ${JSON.stringify(q)}`)
        const near = await store.listFindings({ ...q, limit: 5, offset: Math.max(0, expected.length - 12) })
        t.same(near.items.map((f) => f.id), expected.slice(Math.max(0, expected.length - 12), Math.max(0, expected.length - 7)).map((f) => f.id), `a page near the end of ${JSON.stringify(q)}`)
      }
    }
  }
  t.same((await store.listFindings({ limit: 3, offset: 0 })).items.map((f) => f.id),
    findings.filter((f) => findingMatches(f, {})).sort(compareBy((f) => findingSortValue(f, 'cvss'), (f) => f.id, FINDING_SORT_DEFAULT_ORDER.cvss)).slice(0, 3).map((f) => f.id),
    'the default order')

  const hostQueries: Omit<HostQuery, 'limit' | 'offset'>[] = [{}, { port: 22 }, { service: 'HTTP' }, { product: 'redis', minSeverity: 'high' }, { q: 'h3' }, { hasFindings: false }]
  const hostMatches = (h: HostRecord, q: Omit<HostQuery, 'limit' | 'offset'>): boolean => {
    const open = h.ports.filter((p) => p.state === 'open')
    if (q.port !== undefined && !open.some((p) => p.port === q.port)) return false
    if (q.service !== undefined && !open.some((p) => p.service === q.service!.toLowerCase())) return false
    if (q.product !== undefined && !open.some((p) => p.product?.toLowerCase() === q.product!.toLowerCase())) return false
    if (q.q !== undefined && ![h.address, ...h.hostnames].join(' ').includes(q.q)) return false
    if (q.minSeverity !== undefined && (h.maxSeverity === null || SEVERITY_RANK[h.maxSeverity] < SEVERITY_RANK[q.minSeverity])) return false
    if (q.hasFindings !== undefined && (h.findingsCount > 0) !== q.hasFindings) return false
    return true
  }
  for (const sort of ['lastSeen', 'address', 'findings', 'severity'] as const) {
    for (const order of ['asc', 'desc', undefined] as const) {
      for (const filters of hostQueries) {
        const q = { ...filters, sort, order }
        const expected = hosts.filter((h) => hostMatches(h, q)).sort(compareBy((h) => hostSortValue(h, sort), (h) => h.address, order ?? HOST_SORT_DEFAULT_ORDER[sort]))
        const got = await store.listHosts({ ...q, limit: 100_000, offset: 0 })
        t.equal(got.total, expected.length, `host total of ${JSON.stringify(q)}`)
        t.same(got.items.map((h) => h.address), expected.map((h) => h.address), `host order of ${JSON.stringify(q)}`)
      }
    }
  }
})

test('records handed out are the stored ones, frozen: a caller cannot change the store by accident', async (t) => {
  const store = new MemoryResultsStore()
  const a = '10.9.9.1'
  const rnd = random(3)
  await store.recordHost(write({ address: a, at: T0, services: [PORTS[0]], findings: [{ ...newFinding(rnd, a, 22, 1), observed: 'open' }] }))
  const host = await store.getHost(a)
  t.throws(() => { (host as { up: boolean }).up = false })
  const [f] = (await store.listFindings({ limit: 1, offset: 0 })).items
  t.throws(() => { (f as { status: string }).status = 'fixed' })
  t.equal((await store.getFinding(f.id))!.status, 'open')
})

test('a batch with an address that is not one stores nothing', async (t) => {
  const store = new MemoryResultsStore()
  await t.rejects(store.recordHosts([write({ address: '10.9.9.2', at: T0 }), write({ address: 'nope', at: T0 })]), /not an IP address/)
  t.equal(await store.getHost('10.9.9.2'), null)
})
