import { test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import { importFeed } from '../../../lib/nvd/feed-import'
import { createMemoryIndex } from '../../../lib/nvd/memory/cve-index'
import type { CveIndex } from '../../../lib/nvd/types'
import { allRawFixtures } from '../../support/nvd-fixtures'

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-feed-'))

function feed (items: unknown[]): string {
  return JSON.stringify({
    resultsPerPage: items.length,
    startIndex: 0,
    totalResults: items.length,
    format: 'NVD_CVE',
    version: '2.0',
    timestamp: '2026-11-22T10:00:00.000',
    vulnerabilities: items
  })
}

test('imports a .json and a .json.gz feed, counting a bad record without stopping', async (t) => {
  const items: unknown[] = allRawFixtures().map((cve) => ({ cve }))
  items.splice(5, 0, { cve: { sourceIdentifier: 'x', vulnStatus: 'Analyzed' } })
  const plain = path.join(tmp, 'nvdcve-2.0-test.json')
  fs.writeFileSync(plain, feed(items))
  const idx = await createMemoryIndex()
  const progress: number[] = []
  const res = await importFeed(plain, idx, { batchSize: 10, onProgress: (n) => progress.push(n) })
  t.equal(res.records, 38)
  t.equal(res.skipped, 1)
  t.equal(res.stored, 38)
  t.match(res.errors, [/record #5: NVD record without a valid CVE id/])
  t.same(progress, [11, 21, 31, 39], 'records read, the bad one included')
  t.equal((await idx.stats()).cves, 38)
  t.equal((await idx.match('cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*')).length, 2)

  const gz = path.join(tmp, 'nvdcve-2.0-test.json.gz')
  fs.writeFileSync(gz, gzipSync(feed(items)))
  const again = await importFeed(gz, idx)
  t.same([again.records, again.skipped, again.stored], [38, 1, 0], 'the same records again change nothing')
  const fresh = await createMemoryIndex()
  t.equal((await importFeed(gz, fresh)).stored, 38)
})

test('the stream-json engine gives the same records as the default one', async (t) => {
  const items: unknown[] = allRawFixtures().map((cve) => ({ cve }))
  items.splice(2, 0, { cve: { vulnStatus: 'Analyzed' } })
  const file = path.join(tmp, 'nvdcve-2.0-engines.json.gz')
  fs.writeFileSync(file, gzipSync(feed(items)))
  const a = await createMemoryIndex()
  const b = await createMemoryIndex()
  const ra = await importFeed(file, a)
  const rb = await importFeed(file, b, { engine: 'stream-json', batchSize: 7 })
  t.same(ra, rb)
  t.equal(ra.records, 38)
  for (const id of ['CVE-2024-38474', 'CVE-2019-10149', 'CVE-2021-44457']) t.same(await a.get(id), await b.get(id), id)
})

test('imports the real API envelope, through upsertRaw when the index has nothing better', async (t) => {
  const file = path.join(__dirname, '..', '..', 'fixtures', 'nvd', 'envelope-example.json')
  const mem = await createMemoryIndex()
  let rawCalls = 0
  const plainIndex: CveIndex = {
    upsertRaw: async (raw) => { rawCalls++; return await mem.upsertRaw(raw) },
    get: async (id) => await mem.get(id),
    match: async (cpe) => await mem.match(cpe),
    knowsProduct: async (v, p) => await mem.knowsProduct(v, p),
    markProductFetched: async (v, p, ttl) => { await mem.markProductFetched(v, p, ttl) },
    stats: async () => await mem.stats(),
    getMeta: async (k) => await mem.getMeta(k),
    setMeta: async (k, v) => { await mem.setMeta(k, v) },
    close: async () => { await mem.close() }
  }
  const res = await importFeed(file, plainIndex)
  t.same([res.records, res.skipped, res.stored], [2, 0, 2])
  t.equal(rawCalls, 1)
  t.ok(await mem.get('CVE-2021-25992'))
  t.ok(await mem.get('CVE-2022-0558'))
})

test('a file that is not a feed fails with the file name', async (t) => {
  const bad = path.join(tmp, 'broken.json')
  fs.writeFileSync(bad, '{"vulnerabilities": [{"cve": {"id": "CVE-2024-0001"')
  await t.rejects(importFeed(bad, await createMemoryIndex()), /broken\.json/)
  await t.rejects(importFeed(path.join(tmp, 'missing.json'), await createMemoryIndex()), /ENOENT|missing/)
  const empty = path.join(tmp, 'empty.json')
  fs.writeFileSync(empty, feed([]))
  t.same(await importFeed(empty, await createMemoryIndex()), { records: 0, skipped: 0, errors: [], stored: 0 })
})

test('an index that fails to write fails the import', async (t) => {
  const file = path.join(tmp, 'nvdcve-2.0-fail.json')
  fs.writeFileSync(file, feed(allRawFixtures().map((cve) => ({ cve }))))
  const mem = await createMemoryIndex()
  let calls = 0
  const failing = Object.assign(Object.create(mem) as typeof mem, {
    upsertRecords: async () => { calls++; throw new Error('disk full') }
  })
  await t.rejects(importFeed(file, failing, { batchSize: 5 }), /disk full/)
  t.ok(calls >= 1 && calls <= 2, `stopped after the failure (${calls} writes tried)`)
})

test('cleanup', async () => { fs.rmSync(tmp, { recursive: true, force: true }) })
