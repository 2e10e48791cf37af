import { test, type Test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {
  createCveServicesClient, createCvelistFetcher, cvelistPath, fetchJson, importCveIds, importDeltas, importDirectory,
  importRecordFiles, importZip, isDeltaDocument, parseDeltas
} from '../../../lib/cve5/import'
import { CVE5_PRODUCT_TABLE, CVE5_TABLE, cve5Stats, getCve5, matchCve5 } from '../../../lib/cve5/source'
import { createMemorySourceStore } from '../../../lib/sources/memory'
import { CVE5_FIXTURES, CVE5_TREE, allCve5Ids, cve5Text } from '../../support/cve5-fixtures'
import { buildBulkZip, buildDeltaZip, startFakeCveServices } from '../../support/fake-cve-services'

const IDS = allCve5Ids()

function tmpDir (t: Test): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-cve5-test-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('a cvelistV5 directory tree imports, and a re-run reads only what changed', async (t) => {
  const dir = tmpDir(t)
  fs.cpSync(CVE5_TREE, path.join(dir, 'cves'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'cves', 'delta.json'), '{"fetchTime":"2025-01-01T00:00:00.000Z","new":[],"updated":[]}')
  const store = await createMemorySourceStore()
  const first = await importDirectory(store, dir, { batchSize: 4 })
  t.equal(first.read, IDS.length)
  t.equal(first.added, IDS.length)
  t.equal(first.invalid, 0, 'delta.json is not taken for a record')
  t.equal(await store.count(CVE5_TABLE), IDS.length)
  t.equal((await cve5Stats(store)).records, IDS.length)
  t.same((await matchCve5(store, { vendor: 'redis', product: 'redis', version: '7.2.5' })).map((h) => h.id), ['CVE-2024-31449'])

  const again = await importDirectory(store, dir)
  t.equal(again.read, 0)
  t.equal(again.resumed, IDS.length)

  const file = path.join(dir, cvelistPath('CVE-2024-8376'))
  const rec = JSON.parse(fs.readFileSync(file, 'utf8'))
  rec.cveMetadata.dateUpdated = '2026-01-01T00:00:00.000Z'
  rec.containers.cna.affected[0].versions[0].version = '2.0.17'
  fs.writeFileSync(file, JSON.stringify(rec))
  const future = new Date(Date.now() + 60_000)
  fs.utimesSync(file, future, future)
  const changed = await importDirectory(store, dir)
  t.equal(changed.read, 1)
  t.equal(changed.updated, 1)
  t.same((await matchCve5(store, { vendor: 'eclipse', product: 'mosquitto', version: '2.0.17' })).map((h) => h.id), ['CVE-2024-8376'])
})

test('an interrupted directory import resumes after the last written batch', async (t) => {
  const dir = tmpDir(t)
  fs.cpSync(CVE5_TREE, path.join(dir, 'cves'), { recursive: true })
  const store = await createMemorySourceStore()
  const files = IDS.map(cvelistPath).sort()
  await store.setMeta(`cve5:resume:dir:${path.resolve(dir)}`, JSON.stringify({ last: files[4], done: false }))
  const res = await importDirectory(store, dir)
  t.equal(res.resumed, 5)
  t.equal(res.read, IDS.length - 5)
  t.equal(await store.count(CVE5_TABLE), IDS.length - 5)
})

test('single record files, and a file that is not a record', async (t) => {
  const dir = tmpDir(t)
  const bad = path.join(dir, 'notes.json')
  fs.writeFileSync(bad, '{"hello":"world"}')
  const store = await createMemorySourceStore()
  const res = await importRecordFiles(store, [path.join(CVE5_FIXTURES, cvelistPath('CVE-2023-46118')), bad])
  t.equal(res.read, 2)
  t.equal(res.added, 1)
  t.equal(res.invalid, 1)
  t.equal((await getCve5(store, 'CVE-2023-46118'))?.cvss?.score, 4.9)
})

test('a cvelistV5 baseline zip (cves.zip inside) replaces the tables; a re-run does nothing', async (t) => {
  const dir = tmpDir(t)
  const zip = path.join(dir, '2026-01-01_all_CVEs_at_midnight.zip')
  fs.writeFileSync(zip, await buildBulkZip())
  const store = await createMemorySourceStore()
  await store.put(CVE5_TABLE, [['CVE-1999-0001', '{"id":"CVE-1999-0001","state":"PUBLISHED","affected":[]}']])
  await store.put(CVE5_PRODUCT_TABLE, [['acme:widget', '["CVE-1999-0001"]']])
  const progress: number[] = []
  const res = await importZip(store, zip, { onProgress: (n) => progress.push(n) })
  t.equal(res.replaced, true)
  t.equal(res.read, IDS.length)
  t.equal(res.added, IDS.length)
  t.equal(await store.count(CVE5_TABLE), IDS.length)
  t.equal(await store.get(CVE5_PRODUCT_TABLE, 'acme:widget'), null, 'the old index went with the old table')
  t.same((await matchCve5(store, { vendor: 'broadcom', product: 'rabbitmq_server', version: '3.10.8' })).map((h) => h.id), ['CVE-2023-46118', 'CVE-2025-30219'])
  const again = await importZip(store, zip)
  t.equal(again.read, 0)
  t.equal(again.resumed, IDS.length)
  t.equal(fs.readdirSync(dir).length, 1, 'nothing left beside the archive')
})

test('a delta archive of loose records is merged, and resumes by entry', async (t) => {
  const dir = tmpDir(t)
  const zip = path.join(dir, '2026-01-01_delta_CVEs_at_0100Z.zip')
  const records = new Map(IDS.map((id) => [id, cve5Text(id)]))
  fs.writeFileSync(zip, await buildDeltaZip(records))
  const store = await createMemorySourceStore()
  await store.put(CVE5_TABLE, [['CVE-1999-0001', '{"id":"CVE-1999-0001","state":"PUBLISHED","affected":[]}']])
  const st = fs.statSync(zip)
  await store.setMeta(`cve5:resume:zip:${path.basename(zip)}:${st.size}:${Math.floor(st.mtimeMs)}`, JSON.stringify({ entries: 3, done: false }))
  const res = await importZip(store, zip, { batchSize: 2 })
  t.equal(res.replaced, false)
  t.equal(res.resumed, 3)
  t.equal(res.read, IDS.length - 3)
  t.equal(await store.count(CVE5_TABLE), IDS.length - 3 + 1, 'merged: the old record stays')
})

test('the CVE Services client: records, 404, retries on 429/5xx and timeouts, no retry on 400', async (t) => {
  const fake = await startFakeCveServices()
  t.teardown(fake.close)
  const client = createCveServicesClient({ baseUrl: fake.baseUrl, backoffMs: 5, timeoutMs: 300 })
  const rec = await client.getRecord('cve-2024-31449') as { cveMetadata: { cveId: string } }
  t.equal(rec.cveMetadata.cveId, 'CVE-2024-31449')
  t.equal(await client.getRecord('CVE-2099-0001'), null)
  fake.failNext(2, 503)
  fake.failNext(1, 429)
  t.ok(await client.getRecord('CVE-2023-46118'), 'answered on the fourth try')
  fake.stallNext(1, 1000)
  t.ok(await client.getRecord('CVE-2023-46118'), 'a stalled request times out and is retried')
  fake.failNext(1, 400)
  await t.rejects(client.getRecord('CVE-2023-46118'), /HTTP 400/)
  fake.failNext(5, 502)
  await t.rejects(createCveServicesClient({ baseUrl: fake.baseUrl, backoffMs: 1, retries: 2 }).getRecord('CVE-2023-46118'), /HTTP 502 after 3 attempts/)
  t.same(fake.requests.filter((r) => r.path === '/api/cve/CVE-2023-46118').map((r) => r.status), [503, 503, 429, 200, 200, 400, 502, 502, 502])
})

test('one CVE at a time from CVE Services', async (t) => {
  const fake = await startFakeCveServices()
  t.teardown(fake.close)
  const store = await createMemorySourceStore()
  const res = await importCveIds(store, ['CVE-2025-53859', 'CVE-2099-0001'], createCveServicesClient({ baseUrl: fake.baseUrl }))
  t.equal(res.fetched, 1)
  t.same(res.missing, ['CVE-2099-0001'])
  t.same((await matchCve5(store, { vendor: 'f5', product: 'nginx', version: '1.26.3' })).map((h) => h.id), ['CVE-2025-53859'])
})

test('delta files: fetch the listed records, keep a watermark, never skip a delta left incomplete', async (t) => {
  const fake = await startFakeCveServices({
    deltas: [
      { fetchTime: '2025-10-06T18:40:00.000Z', new: ['CVE-2025-61985'], updated: ['CVE-2025-8714'] },
      { fetchTime: '2025-08-13T15:00:00.000Z', new: ['CVE-2025-53859'] }
    ]
  })
  t.teardown(fake.close)
  const doc = await fetchJson(`${fake.baseUrl}/cves/deltaLog.json`)
  t.ok(isDeltaDocument(doc))
  t.ok(isDeltaDocument(await fetchJson(`${fake.baseUrl}/cves/delta.json`)))
  t.notOk(isDeltaDocument(JSON.parse(cve5Text('CVE-2024-31449'))))
  t.same(parseDeltas(doc).map((d) => d.fetchTime), ['2025-08-13T15:00:00.000Z', '2025-10-06T18:40:00.000Z'], 'oldest first')
  const store = await createMemorySourceStore()
  const fetcher = createCvelistFetcher({ baseUrl: fake.baseUrl })
  const res = await importDeltas(store, doc, fetcher)
  t.equal(res.fetched, 3)
  t.same(res.missing, [])
  t.equal(await store.getMeta('cve5:resume:delta-fetch-time'), '2025-10-06T18:40:00.000Z')
  t.same((await matchCve5(store, { vendor: 'openbsd', product: 'openssh', version: '9.6p1' })).map((h) => h.id), ['CVE-2025-61985'])
  const before = fake.requests.length
  const again = await importDeltas(store, doc, fetcher)
  t.equal(again.fetched, 0)
  t.equal(again.resumed, 3)
  t.equal(fake.requests.length, before, 'nothing fetched on a re-run')

  const store2 = await createMemorySourceStore()
  const withGap = [
    { fetchTime: '2025-09-01T00:00:00.000Z', numberOfChanges: 1, new: [{ cveId: 'CVE-2099-0001', dateUpdated: '2025-09-01T00:00:00.000Z' }], updated: [], error: [] },
    { fetchTime: '2025-09-02T00:00:00.000Z', numberOfChanges: 1, new: [{ cveId: 'CVE-2024-31449', dateUpdated: '2024-10-07T19:51:08.775Z' }], updated: [], error: [] }
  ]
  const gap = await importDeltas(store2, withGap, fetcher)
  t.same(gap.missing, ['CVE-2099-0001'])
  t.equal(gap.fetched, 1)
  t.equal(await store2.getMeta('cve5:resume:delta-fetch-time'), null, 'the watermark stays before the incomplete delta')
})
