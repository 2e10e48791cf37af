import { test } from 'tap'
import { Redis } from 'ioredis'
import { parseCve5Record, type Cve5Summary } from '../../../lib/cve5/record'
import {
  CVE5_PRODUCT_TABLE, CVE5_TABLE, compareWithNvd, cve5Stats, decideRecord, finishImport, getCve5, matchCve5, nvdDecides, replaceAll, writeSummaries
} from '../../../lib/cve5/source'
import { createMemorySourceStore } from '../../../lib/sources/memory'
import { createRedisSourceStore } from '../../../lib/sources/redis'
import type { SourceStore } from '../../../lib/sources/source-store'
import { allCve5Ids, cve5Raw, cve5Summary, nvdFixture, vulnrichmentRaw } from '../../support/cve5-fixtures'
import { REDIS_TEST_URL, deletePrefix, uniquePrefix } from '../../helper'

async function loaded (): Promise<SourceStore> {
  const store = await createMemorySourceStore()
  await writeSummaries(store, allCve5Ids().map(cve5Summary))
  await finishImport(store)
  return store
}

test('RabbitMQ 3.10.8 is reported CVE-2023-46118 under every alias the scanner produces', async (t) => {
  const store = await loaded()
  for (const [vendor, product] of [['vmware', 'rabbitmq'], ['broadcom', 'rabbitmq_server'], ['pivotal_software', 'rabbitmq']]) {
    const hits = await matchCve5(store, { vendor, product, version: '3.10.8' })
    const ids = hits.map((h) => h.id)
    t.same(ids, ['CVE-2023-46118', 'CVE-2025-30219'], `${vendor}:${product}`)
    const h = hits[0]
    t.equal(h.origin, 'cna')
    t.equal(h.status, 'affected')
    t.equal(h.rule, 'cna: rabbitmq/rabbitmq-server "< 3.12.7" (semver)')
    t.equal(h.confidence, 'medium')
    t.match(h.note, /not analysed by the NVD/)
    t.equal(h.cvss?.score, 4.9)
    t.match(h.description, /HTTP request body limit/)
  }
  t.same((await matchCve5(store, { vendor: 'vmware', product: 'rabbitmq', version: '4.0.3' })).map((h) => h.id), [])
})

test('recent CVEs the NVD has not analysed are found for the daemons the scanner detects', async (t) => {
  const store = await loaded()
  const ids = async (vendor: string, product: string, version: string): Promise<string[]> =>
    (await matchCve5(store, { vendor, product, version })).map((h) => h.id)
  t.same(await ids('redis', 'redis', '7.2.5'), ['CVE-2024-31449'])
  t.same(await ids('redis', 'redis', '7.2.6'), [])
  t.same(await ids('postgresql', 'postgresql', '15.13'), ['CVE-2025-8714'])
  t.same(await ids('postgresql', 'postgresql', '15.14'), [])
  t.same(await ids('openbsd', 'openssh', '9.2p1'), ['CVE-2025-61985'])
  t.same(await ids('f5', 'nginx', '1.22.1'), ['CVE-2025-53859'])
  t.same(await ids('nginx', 'nginx', '1.29.1'), [])
  t.same(await ids('eclipse', 'mosquitto', '2.0.18'), ['CVE-2024-8376'])
  t.same(await ids('eclipse', 'mosquitto', '2.0.19'), [])
  t.same(await ids('linuxfoundation', 'nats-server', '2.10.26'), ['CVE-2025-30215'])
  t.same(await ids('linuxfoundation', 'nats-server', '2.8.1'), ['CVE-2025-30215'], 'CVE-2022-29946 (n/a, "before 2.8.2" in prose) never matches')
})

test('all: true adds unaffected and unknown decisions; no version decides nothing', async (t) => {
  const store = await loaded()
  const all = await matchCve5(store, { vendor: 'eclipse', product: 'mosquitto', version: '2.0.19' }, { all: true })
  t.same(all.map((h) => [h.id, h.status]), [['CVE-2024-8376', 'unaffected']])
  const none = await matchCve5(store, { vendor: 'redis', product: 'redis' }, { all: true })
  t.same(none.map((h) => [h.id, h.status]), [['CVE-2024-31449', 'unknown']])
  t.same(await matchCve5(store, { vendor: 'redis', product: 'redis' }), [])
})

test('a decision by defaultStatus alone is low confidence and platform limits are named', async (t) => {
  const store = await loaded()
  const [hit] = await matchCve5(store, { vendor: 'php_group', product: 'php', version: '8.1.29' })
  t.equal(hit.id, 'CVE-2024-4577')
  t.equal(hit.confidence, 'low')
  t.match(hit.note, /default status decided/)
  t.match(hit.note, /Only on: Windows/)
  t.same(hit.kev, { dateAdded: '2024-06-12', reference: 'https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json' })
  const [inRange] = await matchCve5(store, { vendor: 'php_group', product: 'php', version: '8.1.28' })
  t.equal(inRange.confidence, 'medium')
})

test('the ADP decides when the CNA entry cannot, and names its provider', async (t) => {
  const s = parseCve5Record(vulnrichmentRaw('CVE-2024-31449')) as Cve5Summary
  s.affected = s.affected.filter((a) => a.origin === 'adp')
  const hit = decideRecord(s, { vendor: 'redis', product: 'redis', version: '7.2.5' })
  t.equal(hit?.origin, 'adp')
  t.equal(hit?.provider, 'CISA-ADP')
  t.equal(hit?.rule, 'adp: redis/redis ">= 7.0.0, < 7.2.6" (custom)')
  t.match(hit?.note, /CISA-ADP container/)
  const both = parseCve5Record(vulnrichmentRaw('CVE-2024-31449')) as Cve5Summary
  t.equal(decideRecord(both, { vendor: 'redis', product: 'redis', version: '7.2.5' })?.origin, 'cna', 'the CNA first when both agree')
})

test('a replaced record leaves the product lists it no longer names; older copies do not win', async (t) => {
  const store = await loaded()
  const updated = cve5Summary('CVE-2024-8376')
  updated.updated = '2025-01-01T00:00:00.000Z'
  updated.affected = [{ ...updated.affected[0], product: 'Paho', packageName: 'paho' }]
  t.same(await writeSummaries(store, [updated]), { added: 0, updated: 1, unchanged: 0 })
  t.same(await matchCve5(store, { vendor: 'eclipse', product: 'mosquitto', version: '2.0.18' }), [])
  t.equal(await store.get(CVE5_PRODUCT_TABLE, 'eclipse:mosquitto'), null, 'the emptied list is deleted')
  t.same(JSON.parse(await store.get(CVE5_PRODUCT_TABLE, 'eclipse_foundation:paho') ?? '[]'), ['CVE-2024-8376'])
  t.same(await writeSummaries(store, [cve5Summary('CVE-2024-8376')]), { added: 0, updated: 0, unchanged: 1 }, 'the older copy is skipped')
  t.equal((await getCve5(store, 'cve-2024-8376'))?.affected[0].product, 'Paho')
  t.equal(await store.getMeta('cve5:newest-updated'), '2026-09-08T08:43:02.526Z', 'the newest dateUpdated seen is kept')
})

test('stats and a full replace on Redis', async (t) => {
  const redis = new Redis(REDIS_TEST_URL)
  const prefix = uniquePrefix('cve5-source') + ':'
  t.teardown(async () => {
    await deletePrefix(redis, prefix)
    redis.disconnect()
  })
  const store = createRedisSourceStore({ redis, prefix })
  await store.put(CVE5_TABLE, [['CVE-1999-0001', '{}']])
  const n = await replaceAll(store, allCve5Ids().map(cve5Summary), 5)
  t.equal(n, allCve5Ids().length)
  t.equal(await store.get(CVE5_TABLE, 'CVE-1999-0001'), null, 'a full replace drops what the baseline lacks')
  await finishImport(store, new Date('2026-01-02T03:04:05Z'))
  t.same(await cve5Stats(store), { records: allCve5Ids().length, newestUpdated: '2026-09-08T08:43:02.526Z', importedAt: '2026-01-02T03:04:05.000Z' })
  t.same((await matchCve5(store, { vendor: 'vmware', product: 'rabbitmq', version: '3.10.8' })).map((h) => h.id), ['CVE-2023-46118', 'CVE-2025-30219'])
})

test('the NVD decides when it has configurations; a disagreement is noted', async (t) => {
  t.ok(nvdDecides(nvdFixture('CVE-2023-46118') as never), 'Modified with configurations')
  t.notOk(nvdDecides(nvdFixture('CVE-2025-61985') as never), 'Awaiting Analysis, no configurations')
  t.notOk(nvdDecides(nvdFixture('CVE-2025-30219') as never))
  t.notOk(nvdDecides(null), 'no NVD record at all')
  t.notOk(nvdDecides({ vulnStatus: 'Analyzed', configurations: [] }))
  const store = await loaded()
  // For 3.11.30 the NVD (>= 3.12.0, < 3.12.7 and < 3.11.24) says not affected, the CNA's "< 3.12.7" says affected.
  const [hit] = await matchCve5(store, { vendor: 'vmware', product: 'rabbitmq', version: '3.11.30' }, { all: true })
  t.equal(hit.id, 'CVE-2023-46118')
  const cmp = compareWithNvd(false, hit)
  t.equal(cmp.decidedBy, 'nvd')
  t.equal(cmp.affected, false)
  t.equal(cmp.disagreement, 'NVD says not affected; CNA says affected (cna: rabbitmq/rabbitmq-server "< 3.12.7" (semver))')
  t.equal(compareWithNvd(true, hit).disagreement, undefined)
  t.equal(compareWithNvd(true, null).disagreement, undefined)
})

test('rejected records are stored but never match', async (t) => {
  const store = await createMemorySourceStore()
  const rejected = cve5Summary('CVE-2024-2370')
  await writeSummaries(store, [rejected])
  t.equal((await getCve5(store, 'CVE-2024-2370'))?.state, 'REJECTED')
  t.equal(await store.count(CVE5_PRODUCT_TABLE), 0)
  const fake = { ...cve5Summary('CVE-2024-31449'), state: 'REJECTED' as const }
  t.equal(decideRecord(fake, { vendor: 'redis', product: 'redis', version: '7.2.5' }), null)
  t.ok(cve5Raw('CVE-2024-2370'))
})
