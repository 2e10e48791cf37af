// The results-store contract for a key's scope (`scope` on host and finding queries), on both backends: every list,
// count, page and export holds exactly the hosts inside the networks, whatever other filter goes with it, including the
// filters whose totals the PostgreSQL store reads from its kept counts (tags, scans, facets) when there is no scope.
import { test } from 'tap'
import type { FindingQuery, HostQuery, ResultsStore } from '../../../lib/store/results-types'
import { backends } from '../../helper'
import { finding, findingsByPlace, openResults, write } from '../../support/results'
import { parseScope } from '../../../lib/scanner/targets'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const REDIS = { port: 6379, service: 'redis', product: 'Redis', version: '6.0.5' }
const SCOPE = ['10.50.0.0/24', '10.52.0.7']
const inside = parseScope(SCOPE, [])

/** 40 hosts in 10.50.0.0/24, 10.51.0.0/24 and 10.52.0.0/24, two scans, tags on some; one IPv4-mapped address. */
async function seed (store: ResultsStore): Promise<string[]> {
  const addresses: string[] = []
  const writes = []
  for (let i = 0; i < 40; i++) {
    const address = `10.5${i % 3}.0.${i + 1}`
    addresses.push(address)
    const services = [SSH, ...(i % 2 === 0 ? [REDIS] : [])]
    const findings = [finding(address, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1'), ...(i % 2 === 0 ? [finding(address, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')] : [])]
    writes.push(write({ address, at: T0 + i * 1000, scanId: i % 2 === 0 ? 'even' : 'odd', services, findings }))
  }
  await store.recordHosts(writes)
  for (let i = 0; i < 40; i += 4) await store.setHostTags(addresses[i], ['prod'])
  return addresses
}

test('a scope bounds every list, count, page and export', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { store } = await openResults(t, backend, 'results-scope')
      const addresses = await seed(store)
      const seen = addresses.filter((a) => inside.allows(a))
      t.ok(seen.length > 5 && seen.length < addresses.length, `${seen.length} of ${addresses.length} hosts inside the scope`)
      const hostFilters: Partial<HostQuery>[] = [{}, { port: 6379 }, { service: 'redis' }, { product: 'openssh' }, { tag: 'prod' }, { scanId: 'even' }, { minSeverity: 'low' },
        { hasFindings: true }, { q: '10.50' }, { tag: 'prod', minSeverity: 'low' }, { sort: 'address', order: 'asc' }]
      for (const f of hostFilters) {
        const all = await store.listHosts({ ...f, limit: 500, offset: 0 })
        const scoped = await store.listHosts({ ...f, scope: SCOPE, limit: 500, offset: 0 })
        const want = all.items.map((h) => h.address).filter((a) => inside.allows(a))
        t.same(scoped.items.map((h) => h.address), want, `hosts ${JSON.stringify(f)}: the unscoped list, those inside`)
        t.equal(scoped.total, want.length, `hosts ${JSON.stringify(f)}: the total counts them only`)
        const first = await store.listHosts({ ...f, scope: SCOPE, limit: 2, offset: 0 })
        t.equal(first.total, want.length, `hosts ${JSON.stringify(f)}: a first page's total too`)
      }
      const findingFilters: Partial<FindingQuery>[] = [{}, { severity: 'critical' }, { cveId: 'CVE-2022-0543' }, { tag: 'prod' }, { scanId: 'even' }, { scanId: 'odd', tag: 'prod' },
        { kev: false }, { minCvss: 5 }, { status: 'open' }, { sort: 'risk' }, { host: '10.50.0.1' }, { host: '10.51.0.2' }]
      for (const f of findingFilters) {
        const all = await store.listFindings({ ...f, limit: 500, offset: 0 })
        const scoped = await store.listFindings({ ...f, scope: SCOPE, limit: 500, offset: 0 })
        const want = all.items.filter((x) => inside.allows(x.address)).map((x) => x.id)
        t.same(scoped.items.map((x) => x.id), want, `findings ${JSON.stringify(f)}: the unscoped list, those inside`)
        t.equal(scoped.total, want.length, `findings ${JSON.stringify(f)}: the total counts them only`)
        t.same(await findingsByPlace(store, { ...f, scope: SCOPE }, 3), want, `findings ${JSON.stringify(f)}: paged by place`)
        const exported: string[] = []
        for await (const x of store.streamFindings({ ...f, scope: SCOPE })) exported.push(x.id)
        t.same(exported, want, `findings ${JSON.stringify(f)}: exported`)
      }
      t.same((await store.listHosts({ scope: ['10.99.0.0/16'], limit: 10, offset: 0 })), { items: [], total: 0 }, 'a scope holding no host: nothing')
      t.equal((await store.listHosts({ scope: [], limit: 500, offset: 0 })).total, 40, 'an empty scope is no limit')
    })
  }
})
