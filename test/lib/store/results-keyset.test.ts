// The results-store contract for keyset paging (`after`), on both backends: paging a list from place to place gives
// exactly the list an offset read gives, in every sort, order and common filter, ties included; and writes made
// between two pages neither repeat an item nor skip one that was there before.
import { test } from 'tap'
import type { FindingQuery, HostQuery, ResultsStore } from '../../../lib/store/results-types'
import { findingSortValue, hostSortValue } from '../../../lib/store/results-merge'
import type { HostRecord } from '../../../lib/domain/hosts'
import { backends } from '../../helper'
import { finding, findingsByPlace, openResults, write } from '../../support/results'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const H = 3600_000
const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const HTTP = { port: 80, service: 'http', product: 'Apache httpd', version: '2.4.49' }
const REDIS = { port: 6379, service: 'redis', product: 'Redis', version: '6.0.5' }

/** 30 hosts: three to each scan time (ties in lastSeen), with 0 to 3 findings each (ties in CVSS and counts). */
async function seed (store: ResultsStore): Promise<void> {
  const writes = []
  for (let i = 0; i < 30; i++) {
    const address = `10.7.${i % 4}.${100 - i}`
    const services = [SSH, ...(i % 2 === 0 ? [HTTP] : []), ...(i % 3 === 0 ? [REDIS] : [])]
    const findings = [
      ...(i % 5 !== 4 ? [finding(address, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] : []),
      ...(i % 2 === 0 ? [finding(address, 80, 'CVE-2021-41773', 'Apache httpd', '2.4.49')] : []),
      ...(i % 3 === 0 ? [finding(address, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')] : [])
    ]
    writes.push(write({ address, at: T0 + Math.floor(i / 3) * H, scanId: `scan-${Math.floor(i / 3)}`, services, findings }))
  }
  await store.recordHosts(writes)
}

async function hostsByKeyset (store: ResultsStore, query: Omit<HostQuery, 'limit' | 'offset'>, limit: number, start?: HostQuery['after']): Promise<string[]> {
  const sort = query.sort ?? 'lastSeen'
  const out: string[] = []
  let after = start
  for (let pages = 0; pages < 100; pages++) {
    const { items } = await store.listHosts({ ...query, limit, offset: 0, after })
    out.push(...items.map((h: HostRecord) => h.address))
    if (items.length < limit) return out
    const last = items[items.length - 1]
    after = { value: hostSortValue(last, sort), key: last.address }
  }
  throw new Error('keyset paging did not end')
}

test('keyset paging contract', async (t) => {
  for (const backend of await backends()) {
    t.test(`${backend}: host lists paged by place equal the offset list, in every sort, order and filter`, async (t) => {
      const { store } = await openResults(t, backend, 'keyset-hosts')
      await seed(store)
      const filters: Omit<HostQuery, 'limit' | 'offset' | 'sort' | 'order'>[] = [{}, { port: 80 }, { minSeverity: 'critical' }, { scanId: 'scan-2' }, { q: '10.7.1.' }]
      for (const sort of ['lastSeen', 'address', 'findings', 'severity'] as const) {
        for (const order of ['asc', 'desc'] as const) {
          for (const f of filters) {
            const query = { ...f, sort, order }
            const whole = (await store.listHosts({ ...query, limit: 500, offset: 0 })).items.map((h) => h.address)
            t.ok(whole.length > 0, `${JSON.stringify(query)}: hosts to page`)
            t.same(await hostsByKeyset(store, query, 4), whole, `${JSON.stringify(query)}: pages of 4 by place`)
          }
        }
      }
      const { items, total } = await store.listHosts({ sort: 'address', order: 'asc', limit: 3, offset: 0, after: { value: 'zzz', key: 'zzz' } })
      t.same(items, [], 'a place past the end: an empty page')
      t.equal(total, 30, 'the total counts the whole list, whatever the place')
    })

    t.test(`${backend}: finding lists paged by place equal the offset list, in every sort, order and filter`, async (t) => {
      const { store } = await openResults(t, backend, 'keyset-findings')
      await seed(store)
      const filters: Omit<FindingQuery, 'limit' | 'offset' | 'sort' | 'order'>[] = [
        {}, { cveId: 'CVE-2024-6387' }, { host: '10.7.0.100' }, { severity: 'critical' }, { minCvss: 9 }, { scanId: 'scan-1' }, { kev: false }
      ]
      for (const sort of ['cvss', 'lastSeen', 'firstSeen', 'risk'] as const) {
        for (const order of ['asc', 'desc'] as const) {
          for (const f of filters) {
            const query = { ...f, sort, order }
            const whole = (await store.listFindings({ ...query, limit: 500, offset: 0 })).items.map((x) => x.id)
            t.ok(whole.length > 0, `${JSON.stringify(query)}: findings to page`)
            t.same(await findingsByPlace(store, query, 5), whole, `${JSON.stringify(query)}: pages of 5 by place`)
          }
        }
      }
    })

    t.test(`${backend}: writes between pages neither repeat nor skip what was there`, async (t) => {
      const { store } = await openResults(t, backend, 'keyset-writes')
      await seed(store)
      const before = (await store.listHosts({ sort: 'address', order: 'asc', limit: 500, offset: 0 })).items.map((h) => h.address)
      const first = await store.listHosts({ sort: 'address', order: 'asc', limit: 10, offset: 0 })
      const last = first.items[first.items.length - 1]
      // One host sorts before the place reached, one after it: an offset read would now repeat the 10th host.
      await store.recordHost(write({ address: '10.7.0.1', at: T0 + 50 * H, scanId: 'late', services: [SSH] }))
      await store.recordHost(write({ address: '10.7.3.250', at: T0 + 50 * H, scanId: 'late', services: [SSH] }))
      const rest = await hostsByKeyset(store, { sort: 'address', order: 'asc' }, 10, { value: hostSortValue(last, 'address'), key: last.address })
      const after = rest.filter((a) => !first.items.some((h) => h.address === a))
      t.equal(after.length, rest.length, 'no host of the first page comes again')
      const seen = [...first.items.map((h) => h.address), ...rest]
      t.equal(new Set(seen).size, seen.length, 'no host twice')
      t.same(before.filter((a) => !seen.includes(a)), [], 'every host there before the writes is listed')
      t.ok(rest.includes('10.7.3.250'), 'a host written past the place reached is listed')
      t.notOk(seen.includes('10.7.0.1'), 'a host written before the place reached is not')
      const offsetRead = (await store.listHosts({ sort: 'address', order: 'asc', limit: 10, offset: 10 })).items.map((h) => h.address)
      t.equal(offsetRead[0], last.address, 'where an offset read repeats the last host of the page before')

      // Findings: one written between two pages is listed if it sorts past the place reached, and not otherwise
      // (highest CVSS first, ties by id descending).
      const fBefore = (await store.listFindings({ limit: 500, offset: 0 })).items.map((f) => f.id)
      const fFirst = await store.listFindings({ limit: 7, offset: 0 })
      const fLast = fFirst.items[fFirst.items.length - 1]
      await store.recordHost(write({ address: '10.7.3.251', at: T0 + 51 * H, scanId: 'late-2', services: [REDIS], findings: [finding('10.7.3.251', 6379, 'CVE-2022-0543', 'Redis', '6.0.5')] }))
      const fRest = (await store.listFindings({ limit: 500, offset: 0, after: { value: findingSortValue(fLast, 'cvss'), key: fLast.id } })).items
      const fSeen = [...fFirst.items, ...fRest].map((f) => f.id)
      t.equal(new Set(fSeen).size, fSeen.length, 'no finding twice')
      t.same(fBefore.filter((id) => !fSeen.includes(id)), [], 'every finding there before the write is listed')
      const added = (await store.listFindings({ host: '10.7.3.251', limit: 10, offset: 0 })).items[0]
      const pastPlace = findingSortValue(added, 'cvss') < findingSortValue(fLast, 'cvss') ||
        (findingSortValue(added, 'cvss') === findingSortValue(fLast, 'cvss') && added.id < fLast.id)
      t.equal(fSeen.includes(added.id), pastPlace, `the new finding is listed exactly when it sorts past the place (${pastPlace ? 'it does' : 'it does not'})`)
    })
  }
})
