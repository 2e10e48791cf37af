import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { before, teardown, test } from 'tap'
import { createNvdClient } from '../../../lib/nvd/client'
import { createMemoryIndex } from '../../../lib/nvd/memory/cve-index'
import { createRedisIndex, type RedisIndex } from '../../../lib/nvd/redis/cve-index'
import { META_PROGRESS, META_WATERMARK, syncIndex, type SyncProgress } from '../../../lib/nvd/sync'
import type { CveIndex } from '../../../lib/nvd/types'
import { startFakeNvd, type FakeNvd } from '../../support/fake-nvd'

interface Backend { name: string, open: () => Promise<CveIndex> }

const redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true, maxRetriesPerRequest: 1 })
const redisIndexes: RedisIndex[] = []
const backends: Backend[] = [
  { name: 'memory', open: async () => await createMemoryIndex() },
  {
    name: 'redis',
    open: async () => {
      // Each index gets its own prefix so parallel test files never share keys.
      const idx = createRedisIndex({ redis, prefix: `vulnscan-test:sync:${randomBytes(6).toString('hex')}:` })
      redisIndexes.push(idx)
      return idx
    }
  }
]

before(async () => { await redis.connect() })
teardown(async () => {
  for (const idx of redisIndexes) await idx.drop()
  redis.disconnect()
})

/** Counts how often each CVE id reaches the index. */
function counting (index: CveIndex): CveIndex & { counts: Map<string, number> } {
  const counts = new Map<string, number>()
  return {
    counts,
    upsertRaw: async (raw) => {
      for (const r of raw) {
        const id = (r as { id: string }).id
        counts.set(id, (counts.get(id) ?? 0) + 1)
      }
      return await index.upsertRaw(raw)
    },
    get: async (id) => await index.get(id),
    match: async (cpe) => await index.match(cpe),
    knowsProduct: async (v, p) => await index.knowsProduct(v, p),
    markProductFetched: async (v, p, ttl) => await index.markProductFetched(v, p, ttl),
    stats: async () => await index.stats(),
    getMeta: async (k) => await index.getMeta(k),
    setMeta: async (k, v) => await index.setMeta(k, v),
    close: async () => await index.close()
  }
}

/** A settable clock: each test says what "now" is for each run. */
function clockAt (iso: string): { now: () => Date, set: (iso: string) => void } {
  let t = new Date(iso)
  return { now: () => new Date(t), set: (s) => { t = new Date(s) } }
}

function clientFor (nvd: FakeNvd, extra: Record<string, unknown> = {}) {
  return createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000, resultsPerPage: 5, retryBaseMs: 1, maxRetries: 1, ...extra })
}

const lastModifiedOf = (nvd: FakeNvd, id: string): string => (JSON.parse(nvd.rawRecord(id)!) as { lastModified: string }).lastModified

for (const backend of backends) {
  test(`${backend.name}: full on first run, then incremental picks up only the modified record`, async (t) => {
    const nvd = await startFakeNvd({ rateLimit: null })
    t.teardown(nvd.close)
    const index = counting(await backend.open())
    t.teardown(() => index.close())
    const clock = clockAt('2026-11-10T00:00:00.000Z')
    const client = clientFor(nvd)

    const first = await syncIndex({ client, index, now: clock.now })
    t.equal(first.mode, 'full')
    t.equal(first.resumed, false)
    t.equal(first.records, nvd.ids().length)
    t.equal(first.pages, Math.ceil(nvd.ids().length / 5))
    t.equal((await index.stats()).cves, nvd.ids().length)
    t.equal(await index.getMeta(META_WATERMARK), '2026-11-10T00:00:00.000Z', 'watermark = when the full pass began')
    t.equal(await index.getMeta('lastSync'), '2026-11-10T00:00:00.000Z')
    t.equal((await index.stats()).lastSync, '2026-11-10T00:00:00.000Z')
    t.equal(await index.getMeta(META_PROGRESS), '', 'no run left in progress')
    t.ok(nvd.requests.every((r) => r.params.lastModStartDate === undefined), 'a full pass has no date filter')
    t.ok([...index.counts.values()].every((n) => n === 1))

    // NVD changes one record (new CVSS, say) after our watermark.
    nvd.modify('CVE-2023-51385', (cve) => { cve.vulnStatus = 'Analyzed'; cve.lastModified = '2026-11-12T08:30:00.000' })
    index.counts.clear()
    nvd.requests.length = 0
    clock.set('2026-11-15T00:00:00.000Z')
    const second = await syncIndex({ client, index, now: clock.now })
    t.equal(second.mode, 'incremental')
    t.same([...index.counts.keys()], ['CVE-2023-51385'], 'only the modified record was fetched')
    t.equal(second.stored, 1)
    t.equal((await index.get('CVE-2023-51385'))?.vulnStatus, 'Analyzed', 'the change reached the index')
    t.equal(await index.getMeta(META_WATERMARK), '2026-11-15T00:00:00.000Z')
    t.equal(nvd.requests.length, 1)
    const r = nvd.requests[0]
    t.equal(Date.parse(r.params.lastModEndDate), Date.parse('2026-11-15T00:00:00Z'))
    t.ok(Date.parse(r.params.lastModStartDate) <= Date.parse('2026-11-10T00:00:00Z'), 'starts at (or a margin before) the watermark')

    index.counts.clear()
    clock.set('2026-11-16T00:00:00.000Z')
    const third = await syncIndex({ client, index, now: clock.now })
    t.equal(third.records, 0, 'nothing changed, nothing fetched')
    t.equal(await index.getMeta('lastSync'), '2026-11-16T00:00:00.000Z')

    const forced = await syncIndex({ client, index, now: clock.now, full: true })
    t.equal(forced.mode, 'full')
    t.equal(forced.records, nvd.ids().length)
    t.equal(forced.stored, 0, 'unchanged records are not rewritten')
  })

  test(`${backend.name}: an incremental run over a long gap uses windows of at most 120 days`, async (t) => {
    const nvd = await startFakeNvd({ rateLimit: null })
    t.teardown(nvd.close)
    const index = counting(await backend.open())
    t.teardown(() => index.close())
    await index.setMeta(META_WATERMARK, '2023-01-01T00:00:00.000Z')
    const summary = await syncIndex({ client: clientFor(nvd), index, now: () => new Date('2024-12-31T00:00:00.000Z'), overlapMs: 0 })
    t.equal(summary.mode, 'incremental')
    t.equal(summary.windows, 7)
    for (const r of nvd.requests) t.ok(Date.parse(r.params.lastModEndDate) - Date.parse(r.params.lastModStartDate) <= 120 * 86_400_000)
    const expected = nvd.ids().filter((id) => {
      const lm = Date.parse(lastModifiedOf(nvd, id) + 'Z')
      return lm >= Date.parse('2023-01-01T00:00:00Z') && lm <= Date.parse('2024-12-31T00:00:00Z')
    }).sort()
    t.same([...index.counts.keys()].sort(), expected)
    t.ok([...index.counts.values()].every((n) => n === 1), 'each once')
    t.equal(await index.getMeta(META_WATERMARK), '2024-12-31T00:00:00.000Z')
  })

  test(`${backend.name}: a full sync aborted after page k resumes and applies every record exactly once`, async (t) => {
    const nvd = await startFakeNvd({ rateLimit: null })
    t.teardown(nvd.close)
    const index = counting(await backend.open())
    t.teardown(() => index.close())
    const client = clientFor(nvd)
    const ac = new AbortController()
    const seen: SyncProgress[] = []
    await t.rejects(syncIndex({
      client,
      index,
      now: () => new Date('2026-11-10T00:00:00.000Z'),
      signal: ac.signal,
      onProgress: (p) => { seen.push(p); if (seen.length === 3) ac.abort() }
    }), { name: 'AbortError' })
    t.equal(index.counts.size, 15, 'three pages of five applied')
    const saved = JSON.parse((await index.getMeta(META_PROGRESS))!) as { mode: string, startIndex: number }
    t.equal(saved.mode, 'full')
    t.equal(saved.startIndex, 15, 'the position after the last applied page is stored')
    t.equal(await index.getMeta(META_WATERMARK), null, 'no watermark before the full pass completes')
    t.equal(await index.getMeta('lastSync'), null)

    const resumed = await syncIndex({ client, index, now: () => new Date('2026-11-11T00:00:00.000Z') })
    t.equal(resumed.mode, 'full')
    t.equal(resumed.resumed, true)
    t.same([...index.counts.keys()].sort(), [...nvd.ids()].sort(), 'nothing skipped')
    t.ok([...index.counts.values()].every((n) => n === 1), 'nothing applied twice')
    t.equal(await index.getMeta(META_WATERMARK), '2026-11-11T00:00:00.000Z', 'caught up to now after finishing the interrupted pass')
    t.equal(await index.getMeta(META_PROGRESS), '')
    t.equal((await index.stats()).cves, nvd.ids().length)
    const firstResumedRequest = nvd.requests.find((r) => r.params.startIndex === '15')
    t.ok(firstResumedRequest, 'the resumed run asked for startIndex 15')
    t.equal(nvd.requests.filter((r) => r.params.startIndex === '0' && r.params.lastModStartDate === undefined).length, 1, 'page 0 of the full listing was fetched once')
  })

  test(`${backend.name}: an incremental sync broken by a failing NVD resumes in the right window`, async (t) => {
    const nvd = await startFakeNvd({ rateLimit: null })
    t.teardown(nvd.close)
    const index = counting(await backend.open())
    t.teardown(() => index.close())
    await index.setMeta(META_WATERMARK, '2023-01-01T00:00:00.000Z')
    const client = clientFor(nvd, { resultsPerPage: 2 })
    let pages = 0
    const err = await syncIndex({
      client,
      index,
      now: () => new Date('2024-12-31T00:00:00.000Z'),
      overlapMs: 0,
      onProgress: () => { if (++pages === 4) nvd.setDown({ status: 500 }) }
    }).catch((e: unknown) => e) as Error
    t.match(err.message, /500/, 'the run fails with NVD\'s error')
    const saved = JSON.parse((await index.getMeta(META_PROGRESS))!) as { windowStart: string, windowEnd: string }
    const wm = await index.getMeta(META_WATERMARK)
    t.ok(Date.parse(wm!) <= Date.parse(saved.windowStart), 'the watermark never passes an unfinished window')
    const appliedBefore = index.counts.size
    t.ok(appliedBefore > 0)

    nvd.setDown(false)
    const resumed = await syncIndex({ client, index, now: () => new Date('2024-12-31T00:00:00.000Z'), overlapMs: 0 })
    t.equal(resumed.resumed, true)
    const expected = nvd.ids().filter((id) => {
      const lm = Date.parse(lastModifiedOf(nvd, id) + 'Z')
      return lm >= Date.parse('2023-01-01T00:00:00Z') && lm <= Date.parse('2024-12-31T00:00:00Z')
    }).sort()
    t.same([...index.counts.keys()].sort(), expected, 'nothing skipped')
    t.ok([...index.counts.values()].every((n) => n === 1), 'nothing applied twice')
    t.equal(await index.getMeta(META_WATERMARK), '2024-12-31T00:00:00.000Z')
    t.equal(await index.getMeta(META_PROGRESS), '')
  })
}

test('a malformed record is reported without blocking the rest of its page', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null, fixtures: false, records: [
    { id: 'CVE-2099-0001', published: '2099-01-01T00:00:00.000', lastModified: '2099-01-01T00:00:00.000', vulnStatus: 'Received', descriptions: [{ lang: 'en', value: 'ok' }], references: [] },
    { id: 'CVE-99-bad', lastModified: '2099-01-01T00:00:00.000' },
    { id: 'CVE-2099-0003', published: '2099-01-01T00:00:00.000', lastModified: '2099-01-01T00:00:00.000', vulnStatus: 'Received', descriptions: [{ lang: 'en', value: 'ok' }], references: [] }
  ] })
  t.teardown(nvd.close)
  const index = await createMemoryIndex()
  t.teardown(() => index.close())
  const summary = await syncIndex({ client: clientFor(nvd), index, now: () => new Date('2026-11-10T00:00:00Z') })
  t.ok(await index.get('CVE-2099-0001'))
  t.ok(await index.get('CVE-2099-0003'))
  t.same(summary.rejectedRecords, ['CVE-99-bad'])
  t.equal(summary.stored, 2)
  t.equal(await index.getMeta(META_PROGRESS), '', 'the run completed')
})

test('since: an index filled from feed files syncs incrementally from their date', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const index = counting(await createMemoryIndex())
  t.teardown(() => index.close())
  nvd.touch('CVE-2024-6387', '2026-11-05T00:00:00.000')
  const s = await syncIndex({ client: clientFor(nvd), index, now: () => new Date('2026-11-10T00:00:00Z'), since: '2026-11-01T00:00:00Z', overlapMs: 0 })
  t.equal(s.mode, 'incremental')
  t.same([...index.counts.keys()], ['CVE-2024-6387'])
  t.equal(await index.getMeta(META_WATERMARK), '2026-11-10T00:00:00.000Z')
  await t.rejects(syncIndex({ client: clientFor(nvd), index: await createMemoryIndex(), since: 'soon' }), RangeError)
})
