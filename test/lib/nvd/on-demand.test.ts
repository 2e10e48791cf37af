import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { before, teardown, test } from 'tap'
import { createNvdClient } from '../../../lib/nvd/client'
import { createMemoryIndex } from '../../../lib/nvd/memory/cve-index'
import { createRedisIndex, type RedisIndex } from '../../../lib/nvd/redis/cve-index'
import { ensureProducts } from '../../../lib/nvd/on-demand'
import type { CveIndex } from '../../../lib/nvd/types'
import { startFakeNvd } from '../../support/fake-nvd'

const redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true, maxRetriesPerRequest: 1 })
const redisIndexes: RedisIndex[] = []
before(async () => { await redis.connect() })
teardown(async () => {
  for (const idx of redisIndexes) await idx.drop()
  redis.disconnect()
})

const backends: Array<{ name: string, open: () => Promise<CveIndex> }> = [
  { name: 'memory', open: async () => await createMemoryIndex() },
  {
    name: 'redis',
    open: async () => {
      const idx = createRedisIndex({ redis, prefix: `vulnscan-test:on-demand:${randomBytes(6).toString('hex')}:` })
      redisIndexes.push(idx)
      return idx
    }
  }
]

for (const backend of backends) {
  test(`${backend.name}: fetches unknown products once, then trusts the index`, async (t) => {
    const nvd = await startFakeNvd({ rateLimit: null })
    t.teardown(nvd.close)
    const index = await backend.open()
    t.teardown(() => index.close())
    const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000, resultsPerPage: 4 })
    t.same(await index.match('cpe:2.3:a:redis:redis:6.0.0:*:*:*:*:*:*:*'), [], 'empty index knows nothing')

    const products = [
      { vendor: 'redis', product: 'redis' },
      { vendor: 'f5', product: 'nginx' },
      { vendor: 'acme', product: 'no_such_product' },
      { vendor: 'Redis', product: 'Redis' }
    ]
    const r = await ensureProducts({ client, index, products, ttlSeconds: 3600 })
    t.same(r.failed, [])
    t.same(r.known, [])
    t.same(r.fetched, [
      { vendor: 'redis', product: 'redis', records: 6 },
      { vendor: 'f5', product: 'nginx', records: 1 },
      { vendor: 'acme', product: 'no_such_product', records: 0 }
    ], 'duplicates (in any case) are fetched once')
    t.ok(nvd.requests.every((q) => q.params.virtualMatchString !== undefined))
    t.same(nvd.requests.filter((q) => q.params.startIndex === '0').map((q) => q.params.virtualMatchString),
      ['cpe:2.3:*:redis:redis', 'cpe:2.3:*:f5:nginx', 'cpe:2.3:*:acme:no_such_product'])
    t.equal(nvd.requests.filter((q) => q.params.virtualMatchString === 'cpe:2.3:*:redis:redis').length, 2, 'six redis records in pages of four')

    const matches = await index.match('cpe:2.3:a:redis:redis:6.0.0:*:*:*:*:*:*:*')
    t.ok(matches.length > 0, 'fetched records now match')
    t.ok(await index.knowsProduct('acme', 'no_such_product'), 'an empty answer is remembered too')

    nvd.requests.length = 0
    const again = await ensureProducts({ client, index, products, ttlSeconds: 3600 })
    t.equal(nvd.requests.length, 0, 'nothing fetched the second time')
    t.equal(again.known.length, 3)
    t.same(again.fetched, [])
  })
}

test('an expired "nothing there" marker is fetched again', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const index = await createMemoryIndex()
  t.teardown(() => index.close())
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000 })
  await ensureProducts({ client, index, products: [{ vendor: 'acme', product: 'gadget' }], ttlSeconds: 0.2 })
  t.equal(nvd.requests.length, 1)
  await new Promise((resolve) => setTimeout(resolve, 300))
  const r = await ensureProducts({ client, index, products: [{ vendor: 'acme', product: 'gadget' }], ttlSeconds: 0.2 })
  t.equal(nvd.requests.length, 2)
  t.same(r.fetched, [{ vendor: 'acme', product: 'gadget', records: 0 }])
})

test('NVD unreachable: reports every product as failed, does not throw, gives up fast', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  const deadUrl = nvd.baseUrl
  await nvd.close()
  const index = await createMemoryIndex()
  t.teardown(() => index.close())
  const client = createNvdClient({ baseUrl: deadUrl, requestsPerWindow: 1000, maxRetries: 2, retryBaseMs: 20 })
  const started = Date.now()
  const r = await ensureProducts({
    client,
    index,
    ttlSeconds: 3600,
    products: [{ vendor: 'redis', product: 'redis' }, { vendor: 'f5', product: 'nginx' }, { vendor: 'openbsd', product: 'openssh' }]
  })
  t.same(r.fetched, [])
  t.same(r.failed.map((f) => f.product), ['redis', 'nginx', 'openssh'])
  t.match(r.failed[0].error, /unreachable/)
  t.match(r.failed[1].error, /not tried/)
  t.ok(Date.now() - started < 2000, 'one product\'s retries, not three')
  t.notOk(await index.knowsProduct('redis', 'redis'), 'a failed product is not marked as fetched')
})

test('a product refused by NVD fails alone; a listing cut short is not stored', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const index = await createMemoryIndex()
  t.teardown(() => index.close())
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000, resultsPerPage: 4, maxRetries: 0 })
  nvd.failNext(1, { status: 404, message: 'Invalid virtualMatchString' })
  const r = await ensureProducts({
    client,
    index,
    ttlSeconds: 3600,
    products: [{ vendor: 'eclipse', product: 'mosquitto' }, { vendor: 'redis', product: 'redis' }, { vendor: 'bad:vendor', product: 'x' }, { vendor: 'v', product: '*' }]
  })
  t.same(r.failed.map((f) => f.vendor), ['bad:vendor', 'v', 'eclipse'], 'invalid names are refused before any request')
  t.match(r.failed[2].error, /Invalid virtualMatchString/)
  t.same(r.fetched, [{ vendor: 'redis', product: 'redis', records: 6 }])

  // Second page of redis fails: the first page is kept, but the product is not remembered as done.
  const index2 = await createMemoryIndex()
  t.teardown(() => index2.close())
  let calls = 0
  const flaky = {
    async * cvePages () {
      for await (const page of client.cvePages({ virtualMatchString: 'cpe:2.3:*:redis:redis' })) {
        if (++calls === 2) throw new Error('connection lost')
        yield page
      }
    }
  }
  // No back-off here: this is about what is stored, the back-off has its own test.
  const partial = await ensureProducts({ client: flaky, index: index2, ttlSeconds: 3600, backoffSeconds: 0, products: [{ vendor: 'redis', product: 'redis' }] })
  t.same(partial.failed.map((f) => f.error), ['connection lost'])
  t.equal((await index2.stats()).cves, 0, 'nothing of the cut-short listing was stored')
  t.notOk(await index2.knowsProduct('redis', 'redis'), 'so the product is fetched again next time')
  calls = -10
  const complete = await ensureProducts({ client: flaky, index: index2, ttlSeconds: 3600, products: [{ vendor: 'redis', product: 'redis' }] })
  t.same(complete.fetched, [{ vendor: 'redis', product: 'redis', records: 6 }])
  t.equal((await index2.stats()).cves, 6)
})

test('an aborted signal reports the remaining products without throwing', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null, delayMs: 300 })
  t.teardown(nvd.close)
  const index = await createMemoryIndex()
  t.teardown(() => index.close())
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000 })
  const r = await ensureProducts({
    client,
    index,
    ttlSeconds: 3600,
    signal: AbortSignal.timeout(100),
    products: [{ vendor: 'redis', product: 'redis' }, { vendor: 'f5', product: 'nginx' }]
  })
  t.same(r.failed.map((f) => f.error), ['aborted', 'aborted'])
})

test('an index that cannot answer is reported per product, not thrown', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const real = await createMemoryIndex()
  t.teardown(() => real.close())
  const broken: CveIndex = Object.assign(Object.create(real) as CveIndex, {
    knowsProduct: async () => { throw new Error('connection is closed') }
  })
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000 })
  const r = await ensureProducts({ client, index: broken, ttlSeconds: 60, products: [{ vendor: 'redis', product: 'redis' }] })
  t.same(r.failed, [{ vendor: 'redis', product: 'redis', error: 'index unavailable: connection is closed' }])
  t.equal(nvd.requests.length, 0)
})

test('a failed fetch backs off every caller sharing the index; an authoritative index or NVD_ON_DEMAND=false never fetches', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000, maxRetries: 0 })
  const index = await createMemoryIndex()
  t.teardown(() => index.close())
  let clock = Date.parse('2026-11-24T10:00:00Z')
  const now = (): number => clock
  const products = [{ vendor: 'eclipse', product: 'mosquitto' }, { vendor: 'redis', product: 'redis' }]

  nvd.failNext(1, { status: 503, message: 'Service Unavailable' })
  const first = await ensureProducts({ client, index, ttlSeconds: 3600, products, now, backoffSeconds: 120 })
  t.same(first.failed.map((f) => f.vendor), ['eclipse', 'redis'])
  const asked = nvd.requests.length
  const second = await ensureProducts({ client, index, ttlSeconds: 3600, products, now, backoffSeconds: 120 })
  t.equal(nvd.requests.length, asked, 'within the back-off nothing is sent to the NVD')
  t.match(second.failed[0].error, /failed recently; on-demand fetches resume after 2026-11-24T10:02:00/)
  clock += 121_000
  const third = await ensureProducts({ client, index, ttlSeconds: 3600, products, now, backoffSeconds: 120 })
  t.same(third.fetched.map((f) => f.vendor), ['eclipse', 'redis'], 'after it, the NVD is asked again')

  const off = await createMemoryIndex()
  t.teardown(() => off.close())
  const before = nvd.requests.length
  const r = await ensureProducts({ client, index: off, ttlSeconds: 3600, products, onDemand: false })
  t.same(r.absent, [], 'on-demand off and a partial index: a product it never saw is not said to have no CVEs')
  t.same(r.failed.map((f) => f.vendor), ['eclipse', 'redis'], 'it is not checked')
  t.match(r.failed[0].error, /partial.*NVD_ON_DEMAND=false/)
  await off.setMeta('authoritativeAsOf', '2026-11-20T00:00:00.000Z')
  const r2 = await ensureProducts({ client, index: off, ttlSeconds: 3600, products })
  t.same(r2.absent, products, 'an authoritative index: the same')
  t.equal(nvd.requests.length, before, 'neither asked the NVD')
})
