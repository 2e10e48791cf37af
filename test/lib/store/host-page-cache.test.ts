import { test } from 'tap'
import { MemoryResultsStore } from '../../../lib/store/memory/results'
import { withHostPageCache } from '../../../lib/store/host-page-cache'
import { write } from '../../support/results'

const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }

test('a host page is read from the store once per hosts revision', async (t) => {
  const inner = new MemoryResultsStore()
  let reads = 0
  const listHosts = inner.listHosts.bind(inner)
  inner.listHosts = async (query) => { reads++; return await listHosts(query) }
  const cached = withHostPageCache(inner)
  await cached.recordHost(write({ address: '10.0.0.1', at: Date.parse('2026-01-01T00:00:00Z'), services: [SSH] }))

  const first = await cached.listHosts({ limit: 10, offset: 0 })
  t.same(first.items.map((h) => h.address), ['10.0.0.1'])
  t.same(await cached.listHosts({ limit: 10, offset: 0 }), first)
  t.equal(reads, 1, 'the second read of the same page is served from the cache')
  await cached.listHosts({ limit: 5, offset: 0 })
  t.equal(reads, 2, 'another query is another page')

  await cached.recordHost(write({ address: '10.0.0.2', at: Date.parse('2026-01-02T00:00:00Z'), services: [SSH] }))
  t.same((await cached.listHosts({ limit: 10, offset: 0 })).items.map((h) => h.address), ['10.0.0.2', '10.0.0.1'], 'a write is seen at once')
  t.equal(reads, 3)
})

test('the cache holds at most maxHosts hosts across its pages, the oldest pages dropped first', async (t) => {
  const inner = new MemoryResultsStore()
  let reads = 0
  const listHosts = inner.listHosts.bind(inner)
  inner.listHosts = async (query) => { reads++; return await listHosts(query) }
  const cached = withHostPageCache(inner, { maxHosts: 10 })
  await cached.recordHosts(Array.from({ length: 12 }, (_, i) => write({ address: `10.0.0.${i + 1}`, at: Date.parse('2026-01-01T00:00:00Z') + i, services: [SSH] })))
  await cached.listHosts({ limit: 4, offset: 0 })
  await cached.listHosts({ limit: 4, offset: 4 })
  t.equal(reads, 2)
  await cached.listHosts({ limit: 4, offset: 0 })
  await cached.listHosts({ limit: 4, offset: 4 })
  t.equal(reads, 2, 'two pages of 4 hosts are within the bound of 10')
  await cached.listHosts({ limit: 4, offset: 8 })
  t.equal(reads, 3)
  await cached.listHosts({ limit: 4, offset: 4 })
  t.equal(reads, 3, 'the newer pages are kept')
  await cached.listHosts({ limit: 4, offset: 0 })
  t.equal(reads, 4, 'the oldest page was dropped when a third took the cache past 10 hosts')
  const big = await cached.listHosts({ limit: 12, offset: 0 })
  t.equal(big.items.length, 12)
  await cached.listHosts({ limit: 12, offset: 0 })
  t.equal(reads, 5, 'a page larger than the bound is kept alone')
  await cached.listHosts({ limit: 4, offset: 8 })
  t.equal(reads, 6, 'the others made room for it')
})

test('a failed page read is not kept', async (t) => {
  const inner = new MemoryResultsStore()
  let fail = true
  const listHosts = inner.listHosts.bind(inner)
  inner.listHosts = async (query) => { if (fail) throw new Error('store down'); return await listHosts(query) }
  const cached = withHostPageCache(inner)
  await t.rejects(cached.listHosts({ limit: 10, offset: 0 }), /store down/)
  fail = false
  t.same(await cached.listHosts({ limit: 10, offset: 0 }), { items: [], total: 0 })
})
