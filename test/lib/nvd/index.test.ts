// One contract, run against both backends: Redis, and memory persisted to a file.

import { test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { createMemoryIndex } from '../../../lib/nvd/memory/cve-index'
import { createRedisIndex } from '../../../lib/nvd/redis/cve-index'
import type { LocalCveIndex } from '../../../lib/nvd/cve-index'
import { BACKEND_KINDS, type BackendKind, type Backends } from '../../../lib/backends'
import { openBackendsFor } from '../../helper'
import { allRawFixtures, rawFixture } from '../../support/nvd-fixtures'

const SSH_92P1 = 'cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*'

interface Backend {
  name: string
  open: () => Promise<LocalCveIndex>
  cleanup: () => Promise<void>
  /** A second, independent handle on the same stored index (another process, as far as caches go). */
  reopen?: () => Promise<LocalCveIndex>
  /** Like reopen, on a connection of its own (as another process would have). */
  separate?: () => Promise<{ index: LocalCveIndex, done: () => Promise<void> }>
}

function later (raw: Record<string, unknown>, minutes: number): string {
  const d = new Date(Date.parse(String(raw.lastModified) + 'Z') + minutes * 60_000)
  return d.toISOString().replace('Z', '')
}

function ids (ms: Array<{ cve: { id: string } }>): string[] {
  return ms.map((m) => m.cve.id).sort()
}

const redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true, maxRetriesPerRequest: 2 })
const name = `vulnscan-test.nvd-index.${randomBytes(4).toString('hex')}`
/** Where the Redis backend's index writes (`<REDIS_PREFIX>:nvd:`). */
const prefix = `${name}:`
const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-nvd-index-'))
const contractFile = path.join(tmpDir, 'contract.ndjson.gz')

// Every handle is opened the way the service opens it; all of them are closed in the teardown test.
const opened: Backends[] = []
async function open (kind: BackendKind): Promise<Backends> {
  const b = await openBackendsFor(kind, {
    REDIS_PREFIX: name,
    QUEUE_PREFIX: `${name}-bull`,
    NVD_INDEX_FILE: kind === 'memory' ? contractFile : ''
  })
  opened.push(b)
  return b
}

// What each backend that openBackends knows can show beyond the contract, and how its stored index is removed.
const extras: Record<BackendKind, Omit<Backend, 'open'>> = {
  redis: {
    name: 'redis',
    reopen: async () => (await open('redis')).indexes.cve,
    separate: async () => {
      const b = await open('redis')
      return { index: b.indexes.cve, done: async () => {} }
    },
    cleanup: async () => { await createRedisIndex({ redis, prefix }).drop() }
  },
  memory: {
    name: 'memory+file',
    cleanup: async () => { fs.rmSync(contractFile, { force: true }) }
  }
}

const backends: Backend[] = BACKEND_KINDS.map((kind) => ({ ...extras[kind], open: async () => (await open(kind)).indexes.cve }))

test('setup', async () => { await redis.connect() })

for (const b of backends) {
  test(`${b.name}: CveIndex contract`, async (t) => {
    await b.cleanup()
    const idx = await b.open()
    t.teardown(async () => { await idx.close(); await b.cleanup() })

    await t.test('empty index', async (t) => {
      t.same(await idx.stats(), { cves: 0, products: 0, lastSync: null })
      t.same(await idx.match(SSH_92P1), [])
      t.equal(await idx.get('CVE-2023-51385'), null)
      t.equal(await idx.knowsProduct('openbsd', 'openssh'), false)
    })

    await t.test('upsert the real records; re-upserting changes nothing', async (t) => {
      const raws = allRawFixtures()
      t.equal(await idx.upsertRaw(raws), 38)
      const stats = await idx.stats()
      t.equal(stats.cves, 38)
      t.ok(stats.products > 20, `products: ${stats.products}`)
      t.equal(await idx.upsertRaw(raws), 0, 'idempotent')
      t.same(await idx.stats(), stats)
      const rec = await idx.get('CVE-2023-51385')
      t.equal(rec?.cvss, 9.8)
      t.equal(rec?.configurations[0].nodes[0].cpeMatch[0].versionEndExcluding, '9.6')
    })

    await t.test('match: exact set, criterion and reason', async (t) => {
      const m = await idx.match(SSH_92P1)
      t.same(ids(m), ['CVE-2023-51385', 'CVE-2024-6387'])
      const m51385 = m.find((x) => x.cve.id === 'CVE-2023-51385')
      t.equal(m51385?.criterion.criteria, 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*')
      t.equal(m51385?.reason, '9.2p1 < 9.6 (versionEndExcluding)')
      t.equal(m51385?.confidence, 'exact')
      t.same(ids(await idx.match('cpe:2.3:a:redis:redis:6.2.9:*:*:*:*:*:*:*')), ['CVE-2022-24834', 'CVE-2023-28856'])
      t.same(ids(await idx.match('cpe:2.3:a:redis:redis:6.2.8:*:*:*:*:*:*:*')), ['CVE-2022-24834', 'CVE-2023-22458', 'CVE-2023-28856'])
      t.same(ids(await idx.match('cpe:2.3:a:redis:redis:7.0.15:*:*:*:*:*:*:*')), [])
      const iis = await idx.match('cpe:2.3:a:microsoft:internet_information_services:6.0:*:*:*:*:*:*:*')
      t.same(iis.map((x) => [x.cve.id, x.confidence, x.requiresPlatform]),
        [['CVE-2017-7269', 'platform', ['cpe:2.3:o:microsoft:windows_server_2003:r2:*:*:*:*:*:*:*']]])
      const any = await idx.match('cpe:2.3:a:redis:redis:*:*:*:*:*:*:*:*')
      t.equal(any.length, 6)
      t.ok(any.every((x) => x.productOnly === true))
      t.same(await idx.match('cpe:2.3:a:nobody:nothing:1.0:*:*:*:*:*:*:*'), [])
      await t.rejects(idx.match('not a cpe'), /not a CPE 2\.3 name/)
      const hits = await idx.matchHits(SSH_92P1)
      t.same(hits.map((h) => h.id).sort(), ['CVE-2023-51385', 'CVE-2024-6387'])
    })

    await t.test('an older record never overwrites a newer one', async (t) => {
      const raw = rawFixture('CVE-2023-51385')
      const older = { ...raw, lastModified: '2020-01-01T00:00:00.000', descriptions: [{ lang: 'en', value: 'older text' }] }
      t.equal(await idx.upsertRaw([older]), 0)
      t.not((await idx.get('CVE-2023-51385'))?.description, 'older text')
    })

    await t.test('a record that changes its configurations leaves no stale criteria', async (t) => {
      const raw = rawFixture('CVE-2023-51385') as Record<string, any>
      const moved = structuredClone(raw)
      moved.lastModified = later(raw, 60)
      moved.configurations[0].nodes[0].cpeMatch[0].criteria = 'cpe:2.3:a:acme:widget:*:*:*:*:*:*:*:*'
      t.equal(await idx.upsertRaw([moved]), 1)
      t.same(ids(await idx.match(SSH_92P1)), ['CVE-2024-6387'])
      t.same(ids(await idx.match('cpe:2.3:a:acme:widget:9.5:*:*:*:*:*:*:*')), ['CVE-2023-51385'])
      t.equal(await idx.knowsProduct('acme', 'widget'), true)

      const narrowed = structuredClone(raw)
      narrowed.lastModified = later(raw, 120)
      narrowed.configurations[0].nodes[0].cpeMatch[0].versionEndExcluding = '9.0'
      t.equal(await idx.upsertRaw([narrowed]), 1)
      t.same(ids(await idx.match('cpe:2.3:a:acme:widget:9.5:*:*:*:*:*:*:*')), [])
      t.equal(await idx.knowsProduct('acme', 'widget'), false, 'the product is gone with its last criterion')
      t.same(ids(await idx.match(SSH_92P1)), ['CVE-2024-6387'])
      t.same(ids(await idx.match('cpe:2.3:a:openbsd:openssh:8.9:p1:*:*:*:*:*:*')), ['CVE-2023-51385', 'CVE-2024-6387'])
      t.equal((await idx.stats()).cves, 38)

      // Newest of a batch wins even when the batch lists it first.
      const restored = structuredClone(raw)
      restored.lastModified = later(raw, 180)
      t.equal(await idx.upsertRaw([restored, narrowed]), 1)
      t.same(ids(await idx.match(SSH_92P1)), ['CVE-2023-51385', 'CVE-2024-6387'])
    })

    await t.test('a CVE that becomes rejected stops matching', async (t) => {
      const raw = rawFixture('CVE-2023-22458') as Record<string, any>
      const rejected = { ...structuredClone(raw), lastModified: later(raw, 60), vulnStatus: 'Rejected' }
      t.equal(await idx.upsertRaw([rejected]), 1)
      t.same(ids(await idx.match('cpe:2.3:a:redis:redis:6.2.8:*:*:*:*:*:*:*')), ['CVE-2022-24834', 'CVE-2023-28856'])
      t.equal((await idx.get('CVE-2023-22458'))?.rejected, true)
    })

    await t.test('a bad record in a batch is not stored', async (t) => {
      await t.rejects(idx.upsertRaw([{ vulnStatus: 'Analyzed' }]), /without a valid CVE id/)
    })

    await t.test('meta, lastSync and on-demand markers', async (t) => {
      t.equal(await idx.getMeta('lastSync'), null)
      await idx.setMeta('lastSync', '2026-11-22T10:00:00.000Z')
      await idx.setMeta('watermark', 'x')
      t.equal(await idx.getMeta('watermark'), 'x')
      t.equal((await idx.stats()).lastSync, '2026-11-22T10:00:00.000Z')
      t.equal(await idx.knowsProduct('openbsd', 'openssh'), true)
      t.equal(await idx.knowsProduct('OpenBSD', 'OpenSSH'), true, 'case-insensitive')
      t.equal(await idx.knowsProduct('nobody', 'nothing'), false)
      await idx.markProductFetched('nobody', 'nothing', 1)
      t.equal(await idx.knowsProduct('nobody', 'nothing'), true)
      await new Promise((resolve) => setTimeout(resolve, 2100))
      t.equal(await idx.knowsProduct('nobody', 'nothing'), false, 'the marker expires with its TTL')
    })

    if (b.reopen !== undefined) {
      await t.test('a change made through another handle is seen by a warm cache', async (t) => {
        const other = await b.reopen!()
        t.same(ids(await idx.match(SSH_92P1)), ['CVE-2023-51385', 'CVE-2024-6387'], 'warms the cache')
        const raw = rawFixture('CVE-2023-51385') as Record<string, any>
        const narrowed = structuredClone(raw)
        narrowed.lastModified = later(raw, 600)
        narrowed.configurations[0].nodes[0].cpeMatch[0].versionEndExcluding = '9.0'
        t.equal(await other.upsertRaw([narrowed]), 1)
        t.same(ids(await idx.match(SSH_92P1)), ['CVE-2024-6387'])
        const rec = (await idx.match('cpe:2.3:a:openbsd:openssh:8.9:p1:*:*:*:*:*:*')).find((m) => m.cve.id === 'CVE-2023-51385')
        t.equal(rec?.cve.lastModified, narrowed.lastModified, 'cached records are refreshed with the product')

        const reworded = structuredClone(narrowed)
        reworded.lastModified = later(raw, 660)
        reworded.descriptions = [{ lang: 'en', value: 'reworded, same configurations' }]
        t.equal(await other.upsertRaw([reworded]), 1)
        const again = (await idx.match('cpe:2.3:a:openbsd:openssh:8.9:p1:*:*:*:*:*:*')).find((m) => m.cve.id === 'CVE-2023-51385')
        t.equal(again?.cve.description, 'reworded, same configurations', 'a text-only change reaches a warm cache too')
        await other.close()
      })

      await t.test('concurrent writers of the same CVE: the newest wins, no stale criteria', async (t) => {
        const raw = rawFixture('CVE-2022-24450') as Record<string, any>
        const sa = await b.separate!()
        const sc = await b.separate!()
        const a = sa.index
        const c = sc.index
        const version = (n: number, product: string): Record<string, any> => {
          const v = structuredClone(raw)
          v.lastModified = later(raw, 1000 + n)
          v.configurations[0].nodes[0].cpeMatch[0].criteria = `cpe:2.3:a:race:${product}:*:*:*:*:*:*:*:*`
          return v
        }
        for (let round = 0; round < 10; round++) {
          const n = round * 2
          await Promise.all([a.upsertRaw([version(n, `p${n}`)]), c.upsertRaw([version(n + 1, `p${n + 1}`)])])
        }
        t.equal((await idx.get('CVE-2022-24450'))?.configurations[0].nodes[0].cpeMatch[0].criteria, 'cpe:2.3:a:race:p19:*:*:*:*:*:*:*:*')
        const stale: string[] = []
        for (let n = 0; n < 19; n++) if ((await idx.match(`cpe:2.3:a:race:p${n}:1.0:*:*:*:*:*:*:*`)).length > 0) stale.push(`p${n}`)
        t.same(stale, [], 'no product keeps a criterion of a replaced version')
        t.equal((await idx.match('cpe:2.3:a:race:p19:1.0:*:*:*:*:*:*:*')).length, 0, 'range 2.0.0-2.7.2 does not cover 1.0')
        t.equal((await idx.match('cpe:2.3:a:race:p19:2.1:*:*:*:*:*:*:*')).length, 1)
        await a.close()
        await c.close()
        await sa.done()
        await sc.done()
      })
    }

    await t.test('a product with thousands of CVEs answers a warm match fast', async (t) => {
      const base = rawFixture('CVE-2023-51385') as Record<string, any>
      const other = rawFixture('CVE-2024-6387') as Record<string, any>
      const batch: unknown[] = []
      for (let i = 0; i < 3000; i++) {
        const src = i % 2 === 0 ? base : other
        batch.push({ ...src, id: `CVE-2099-${String(100000 + i)}` })
      }
      for (let i = 0; i < batch.length; i += 500) await idx.upsertRaw(batch.slice(i, i + 500))
      t.equal((await idx.matchHits(SSH_92P1)).length >= 3000, true)
      await idx.matchGroups(SSH_92P1)
      const times: number[] = []
      for (let i = 0; i < 200; i++) {
        const s = process.hrtime.bigint()
        const g = await idx.matchGroups(SSH_92P1)
        times.push(Number(process.hrtime.bigint() - s) / 1e6)
        if (g.length === 0) t.fail('no match')
      }
      times.sort((x, y) => x - y)
      const median = times[100]
      // Well under a millisecond on an idle machine; the bound leaves room for a busy shared one.
      t.ok(median < 5, `median warm match ${median.toFixed(3)} ms`)
    })
  })
}

test('memory+file: persisted at close and loaded at open, written atomically', async (t) => {
  const file = path.join(tmpDir, 'persist', 'index.ndjson.gz')
  const a = await createMemoryIndex({ filePath: file })
  await a.upsertRaw(allRawFixtures())
  await a.setMeta('lastSync', '2026-11-22T09:00:00.000Z')
  await a.markProductFetched('nobody', 'nothing', 3600)
  await a.close()
  t.ok(fs.existsSync(file))
  t.same(fs.readdirSync(path.dirname(file)), ['index.ndjson.gz'], 'no temporary file left behind')

  const b = await createMemoryIndex({ filePath: file })
  t.same(await b.stats(), await a.stats())
  t.equal((await b.stats()).lastSync, '2026-11-22T09:00:00.000Z')
  t.equal(await b.knowsProduct('nobody', 'nothing'), true)
  t.same(ids(await b.match(SSH_92P1)), ['CVE-2023-51385', 'CVE-2024-6387'])
  const iis = await b.match('cpe:2.3:a:microsoft:internet_information_services:6.0:*:*:*:*:*:*:*')
  t.same(iis[0].requiresPlatform, ['cpe:2.3:o:microsoft:windows_server_2003:r2:*:*:*:*:*:*:*'])
  t.same(await b.get('CVE-2019-10149'), await a.get('CVE-2019-10149'))
  t.equal(await b.upsertRaw(allRawFixtures()), 0, 'loaded records compare as the same')
  await b.close()

  // Saves happen on their own shortly after a change, not only at close.
  const c = await createMemoryIndex({ filePath: file, saveDelayMs: 50 })
  await c.setMeta('lastSync', '2026-11-22T11:00:00.000Z')
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const d = await createMemoryIndex({ filePath: file })
  t.equal(await d.getMeta('lastSync'), '2026-11-22T11:00:00.000Z')
  await c.close()
  await d.close()

  // Without .gz the file is plain NDJSON, and it loads the same.
  const plainFile = path.join(tmpDir, 'plain', 'index.ndjson')
  const g = await createMemoryIndex({ filePath: plainFile })
  await g.upsertRaw(allRawFixtures())
  await g.close()
  t.equal(fs.readFileSync(plainFile).subarray(0, 1).toString(), '{', 'not compressed')
  const h = await createMemoryIndex({ filePath: plainFile })
  t.same(ids(await h.match(SSH_92P1)), ['CVE-2023-51385', 'CVE-2024-6387'])
  await h.close()

  // While changes keep coming the save waits (an import is not re-saved every few seconds),
  // but never longer than the maximum delay.
  const burstFile = path.join(tmpDir, 'burst', 'index.ndjson.gz')
  const e = await createMemoryIndex({ filePath: burstFile, saveDelayMs: 300, maxSaveDelayMs: 1500 })
  const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
  for (let i = 0; i < 10; i++) {
    await e.setMeta('n', String(i))
    await sleep(80)
  }
  t.notOk(fs.existsSync(burstFile), 'no save during a burst of changes')
  for (let i = 10; i < 25; i++) {
    await e.setMeta('n', String(i))
    await sleep(80)
  }
  t.ok(fs.existsSync(burstFile), 'saved once the maximum delay passed')
  await e.close()
  const f = await createMemoryIndex({ filePath: burstFile })
  t.equal(await f.getMeta('n'), '24', 'close saves the last state')
  await f.close()

  fs.writeFileSync(path.join(tmpDir, 'garbage.gz'), 'not gzip')
  await t.rejects(createMemoryIndex({ filePath: path.join(tmpDir, 'garbage.gz') }))
})

test('teardown', async () => {
  await createRedisIndex({ redis, prefix }).drop()
  const left = await redis.keys(prefix + '*')
  if (left.length > 0) throw new Error(`keys left behind: ${left.join(', ')}`)
  for (const b of opened) {
    await b.purge()
    await b.close()
  }
  await redis.quit()
  fs.rmSync(tmpDir, { recursive: true, force: true })
})
