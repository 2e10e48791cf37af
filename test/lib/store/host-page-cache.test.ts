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
