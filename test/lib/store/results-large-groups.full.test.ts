// The results-store contract for finding lists filtered by a scan or a tag that holds more findings than a page can
// sort (over 10,000: a scan of a whole network), on both backends: every page, by offset or by place, and the
// total are those of the whole list filtered down to the group's hosts, in every order.
import { test } from 'tap'
import type { FindingQuery, ResultsStore } from '../../../lib/store/results-types'
import { backends } from '../../helper'
import { finding, findingsByPlace, openResults, write } from '../../support/results'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const HOSTS = 640
/** Hosts 0-599 are in the big scan (12,000 findings), the rest in another; nine hosts in ten carry `north`. */
const IN_BIG = 600
const CVES = ['CVE-2024-6387', 'CVE-2021-41773', 'CVE-2022-0543', 'CVE-2023-51385', 'CVE-2021-23017']

function address (i: number): string {
  return `10.9.${Math.floor(i / 250)}.${(i % 250) + 1}`
}

async function seed (store: ResultsStore): Promise<void> {
  for (let from = 0; from < HOSTS; from += 100) {
    const writes = []
    for (let i = from; i < Math.min(from + 100, HOSTS); i++) {
      const addr = address(i)
      // 20 findings a host: one per port, CVEs (and so CVSS, severity and KEV) in turn, two of them medium confidence.
      const findings = Array.from({ length: 20 }, (_, k) => finding(addr, 1000 + k, CVES[(i + k) % CVES.length], 'Product', '1.0', k % 10 === 3 ? 'medium' : 'high'))
      const services = findings.map((f) => ({ port: f.port, service: 'http', product: 'Product', version: '1.0' }))
      // Hosts seen at a few different times: ties in lastSeen, and orders that differ from CVSS order.
      const w = write({ address: addr, at: T0 + (i % 7) * 60_000, scanId: i < IN_BIG ? 'big' : 'other', services, findings })
      writes.push(i % 10 === 0 ? w : { ...w, tags: ['north'] })
    }
    await store.recordHosts(writes)
  }
}

async function whole (store: ResultsStore, query: Omit<FindingQuery, 'limit' | 'offset'>): Promise<string[]> {
  const out: string[] = []
  for await (const f of store.streamFindings(query)) out.push(f.id)
  return out
}

test('finding lists of a large scan or tag', async (t) => {
  for (const backend of await backends()) {
    t.test(`${backend}: pages and totals of groups over 10,000 findings equal the whole list filtered to the group`, async (t) => {
      const { store } = await openResults(t, backend, 'large-groups')
      await seed(store)
      // Decisions: some findings leave the default list, and the status filter has something to find.
      const decided = (await store.listFindings({ host: address(5), limit: 5, offset: 0 })).items
      for (const f of decided) await store.decideFinding(f.id, 'false_positive', 'lab', 'test')
      const big = new Set(Array.from({ length: IN_BIG }, (_, i) => address(i)))
      const north = new Set(Array.from({ length: HOSTS }, (_, i) => i).filter((i) => i % 10 !== 0).map(address))
      const addressOf = new Map<string, string>()
      for await (const f of store.streamFindings({ status: 'open' })) addressOf.set(f.id, f.address)
      for await (const f of store.streamFindings({ status: 'false_positive' })) addressOf.set(f.id, f.address)
      t.equal(addressOf.size, HOSTS * 20, 'every finding written')

      const groups: { group: Partial<FindingQuery>, hosts: Set<string> }[] = [
        { group: { scanId: 'big' }, hosts: big },
        { group: { tag: 'north' }, hosts: north },
        { group: { scanId: 'big', tag: 'north' }, hosts: new Set([...big].filter((a) => north.has(a))) }
      ]
      const filters: Partial<FindingQuery>[] = [{}, { severity: 'critical' }, { confidence: 'medium' }, { status: 'false_positive' }]
      for (const { group, hosts } of groups) {
        for (const filter of filters) {
          for (const [sort, order] of [['cvss', 'desc'], ['lastSeen', 'desc'], ['risk', 'asc']] as const) {
            const query = { ...filter, sort, order }
            const label = JSON.stringify({ ...group, ...query })
            const expected = (await whole(store, query)).filter((id) => hosts.has(addressOf.get(id) as string))
            const { items, total } = await store.listFindings({ ...group, ...query, limit: 50, offset: 0 })
            t.equal(total, expected.length, `${label}: the total`)
            t.same(items.map((f) => f.id), expected.slice(0, 50), `${label}: the first page`)
            const middle = Math.floor(expected.length / 2)
            t.same((await store.listFindings({ ...group, ...query, limit: 50, offset: middle })).items.map((f) => f.id), expected.slice(middle, middle + 50), `${label}: a middle page`)
            const last = Math.max(0, expected.length - 30)
            t.same((await store.listFindings({ ...group, ...query, limit: 50, offset: last })).items.map((f) => f.id), expected.slice(last), `${label}: the last page`)
            if (filter.severity === undefined && filter.confidence === undefined) {
              t.same(await findingsByPlace(store, { ...group, ...query }, 2000), expected, `${label}: every page by place`)
              t.same(await whole(store, { ...group, ...query }), expected, `${label}: the export`)
            }
          }
        }
      }
      t.ok(groups.every(({ hosts }) => hosts.size * 20 > 10_000), 'each group holds more findings than a page sorts')
    })
  }
})
