// The results-store contract for host tags, on both backends: set, added to and removed, kept by scans (which only
// add), the `tag` filter of host and finding lists and of the export, and what a scan's targetTags resolve to.
import { test } from 'tap'
import { Client } from 'pg'
import type { ResultsStore } from '../../../lib/store/results-types'
import { withHostPageCache } from '../../../lib/store/host-page-cache'
import { migrateResults, MIGRATIONS_DIR } from '../../../lib/store/postgres/migrate'
import { MAX_TAGS } from '../../../lib/tags'
import { backends, DATABASE_TEST_URL, databaseAnswers, dropSchema, openBackendsIn, uniquePrefix, uniqueSchema, type Backend } from '../../helper'
import { finding, write } from '../../support/results'

async function open (t: { teardown(fn: () => unknown): void }, backend: Backend): Promise<ResultsStore> {
  const prefix = uniquePrefix('tags').replace(/:/g, '.')
  const opened = await openBackendsIn(t as never, backend, { REDIS_PREFIX: prefix, QUEUE_PREFIX: `${prefix}-bull`, DATABASE_SCHEMA: uniqueSchema('tags') })
  return opened.results
}

const T0 = Date.parse('2026-02-01T00:00:00.000Z')
const H = 3600_000
const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const HTTP = { port: 80, service: 'http', product: 'Apache httpd', version: '2.4.49' }
const REDIS = { port: 6379, service: 'redis', product: 'Redis', version: '6.0.5' }

async function collect<T> (it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const x of it) out.push(x)
  return out
}

test('host tags contract', async (t) => {
  for (const backend of await backends()) {
    t.test(`${backend}: set, changed, kept by scans that only add, and gone with the host`, async (t) => {
      const store = await open(t, backend)
      const a = '10.3.0.1'
      await store.recordHost(write({ address: a, at: T0, scanId: 's1', services: [SSH] }))
      t.same((await store.getHost(a))!.tags, [], 'a new host has no tags')
      t.equal(await store.setHostTags('10.3.0.99', ['prod']), null, 'an unknown host: null')
      t.equal(await store.addHostTags('10.3.0.99', ['prod']), null)

      const set = await store.setHostTags(a, ['dmz', 'prod'])
      t.same(set!.tags, ['dmz', 'prod'])
      t.same((await store.getHost(a))!.tags, ['dmz', 'prod'])
      t.same((await store.listHosts({ limit: 10, offset: 0 })).items[0].tags, ['dmz', 'prod'], 'lists carry them too')

      // A later scan without tags keeps them; one with tags adds its own and drops none.
      await store.recordHost(write({ address: a, at: T0 + H, scanId: 's2', services: [SSH, HTTP] }))
      t.same((await store.getHost(a))!.tags, ['dmz', 'prod'], 'a re-scan keeps the tags')
      const tagged = { ...write({ address: a, at: T0 + 2 * H, scanId: 's3', services: [SSH] }), tags: ['scanned', 'prod'] }
      await store.recordHost(tagged)
      const after = await store.getHost(a)
      t.same(after!.tags, ['dmz', 'prod', 'scanned'], 'scan tags added, in order, each once')
      await store.recordHost(tagged)
      t.same(await store.getHost(a), after, 'the same tagged write again changes nothing')
      // An older write (out of order) adds its tags as well: tags have no time.
      await store.recordHost({ ...write({ address: a, at: T0 - H, scanId: 's0', services: [] }), tags: ['old'] })
      t.same((await store.getHost(a))!.tags, ['dmz', 'old', 'prod', 'scanned'])

      t.same((await store.addHostTags(a, ['team:web'], ['old', 'absent']))!.tags, ['dmz', 'prod', 'scanned', 'team:web'], 'add and remove in one step')
      t.same((await store.addHostTags(a, ['x'], ['x']))!.tags, ['dmz', 'prod', 'scanned', 'team:web', 'x'], 'added and removed: added')
      t.same((await store.setHostTags(a, []))!.tags, [], 'an empty set removes them all')
      t.same((await store.getHost(a))!.tags, [])
      t.equal((await store.getHost(a))!.lastScanId, 's3', 'changing tags changes nothing else of the host')

      await store.setHostTags(a, ['prod'])
      t.ok(await store.deleteHost(a))
      await store.recordHost(write({ address: a, at: T0 + 3 * H, services: [SSH] }))
      t.same((await store.getHost(a))!.tags, [], 'a deleted host seen again starts without tags')
    })

    t.test(`${backend}: a host carries at most ${MAX_TAGS} tags`, async (t) => {
      const store = await open(t, backend)
      const a = '10.3.1.1'
      await store.recordHost(write({ address: a, at: T0, services: [SSH] }))
      const many = Array.from({ length: MAX_TAGS }, (_, i) => `t${String(i).padStart(2, '0')}`)
      await store.setHostTags(a, many.slice(0, MAX_TAGS - 1))
      await t.rejects(store.addHostTags(a, ['y', 'z']), { statusCode: 400, message: new RegExp(`at most ${MAX_TAGS} tags; this would give it ${MAX_TAGS + 1}`) })
      t.equal((await store.getHost(a))!.tags.length, MAX_TAGS - 1, 'a refused change changes nothing')
      t.equal((await store.addHostTags(a, ['y', 'z'], ['t00']))!.tags.length, MAX_TAGS, 'room made by the same change')
      // A scan adds what fits and never fails its write over tags.
      await store.setHostTags(a, many.slice(0, MAX_TAGS - 1))
      await store.recordHost({ ...write({ address: a, at: T0 + H, services: [SSH] }), tags: ['a1', 'a2'] })
      const tags = (await store.getHost(a))!.tags
      t.equal(tags.length, MAX_TAGS)
      t.ok(tags.includes('a1') && !tags.includes('a2'), 'the first of the scan\'s tags in order fits, the next does not')
    })

    t.test(`${backend}: the tag filter of host lists, finding lists and the export`, async (t) => {
      const store = await open(t, backend)
      const a = '10.3.2.1'
      const b = '10.3.2.2'
      const c = '10.3.2.3'
      await store.recordHost(write({ address: a, at: T0, services: [SSH, HTTP], findings: [
        finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1'), finding(a, 80, 'CVE-2021-41773', 'Apache httpd', '2.4.49')
      ] }))
      await store.recordHost(write({ address: b, at: T0 + H, services: [REDIS, SSH], findings: [
        finding(b, 6379, 'CVE-2022-0543', 'Redis', '6.0.5'), finding(b, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
      ] }))
      await store.recordHost(write({ address: c, at: T0 + 2 * H, services: [SSH], findings: [finding(c, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] }))
      await store.setHostTags(a, ['prod', 'web'])
      await store.setHostTags(b, ['prod'])
      await store.setHostTags(c, ['staging'])
      const page = { limit: 50, offset: 0 }
      const hostsOf = async (q: object): Promise<[number, string[]]> => {
        const p = await store.listHosts({ ...page, sort: 'address', ...q })
        return [p.total, p.items.map((h) => h.address)]
      }
      t.same(await hostsOf({ tag: 'prod' }), [2, [a, b]])
      t.same(await hostsOf({ tag: 'web' }), [1, [a]])
      t.same(await hostsOf({ tag: 'nothing' }), [0, []])
      t.same(await hostsOf({ tag: 'prod', port: 6379 }), [1, [b]], 'with the other filters')
      t.same(await hostsOf({ tag: 'prod', limit: 1, offset: 1 }), [2, [b]], 'paged')

      const findingsOf = async (q: object): Promise<[number, string[]]> => {
        const p = await store.listFindings({ ...page, ...q })
        return [p.total, p.items.map((f) => `${f.address}:${f.port}`).sort()]
      }
      t.same(await findingsOf({ tag: 'prod' }), [4, [`${a}:22`, `${a}:80`, `${b}:22`, `${b}:6379`]])
      t.same(await findingsOf({ tag: 'staging' }), [1, [`${c}:22`]])
      t.same(await findingsOf({ tag: 'nothing' }), [0, []])
      t.same(await findingsOf({ tag: 'prod', cveId: 'CVE-2024-6387' }), [2, [`${a}:22`, `${b}:22`]], 'with a CVE')
      t.same(await findingsOf({ tag: 'staging', host: a }), [0, []], 'with a host that does not carry the tag')
      t.same(await findingsOf({ tag: 'web', host: a, kev: true }), [1, [`${a}:80`]], 'with a host and KEV')
      t.same(await findingsOf({ tag: 'prod', severity: 'critical' }), [1, [`${b}:6379`]], 'with a counted filter')
      t.same(await findingsOf({ tag: 'prod', limit: 1, offset: 3 }), [4, [(await store.listFindings({ ...page, tag: 'prod' })).items[3]].map((f) => `${f.address}:${f.port}`)])
      const ordered = (await store.listFindings({ ...page, tag: 'prod', sort: 'lastSeen' })).items.map((f) => f.address)
      t.same(ordered.slice(0, 2), [b, b], 'in the order asked for')

      const exported = await collect(store.streamFindings({ tag: 'prod' }))
      t.same(exported.map((f) => f.id), (await store.listFindings({ ...page, tag: 'prod' })).items.map((f) => f.id), 'the export holds the list, in its order')
      t.same((await collect(store.streamFindings({ tag: 'staging', limit: 5 }))).map((f) => f.address), [c])

      // A tag taken off moves the host's findings out of the filter at once.
      await store.addHostTags(b, [], ['prod'])
      t.same(await findingsOf({ tag: 'prod' }), [2, [`${a}:22`, `${a}:80`]])
      t.same(await hostsOf({ tag: 'prod' }), [1, [a]])

      t.same(await store.hostsWithTags(['prod', 'staging']), [a, c], 'hosts with any of the tags, in address order')
      t.same(await store.hostsWithTags(['web']), [a])
      t.same(await store.hostsWithTags(['nothing']), [])
    })

    t.test(`${backend}: a tag change moves the hosts revision, so cached host pages follow it`, async (t) => {
      const inner = await open(t, backend)
      const store = withHostPageCache(inner)
      const a = '10.3.3.1'
      await store.recordHost(write({ address: a, at: T0, services: [SSH] }))
      t.same((await store.listHosts({ limit: 10, offset: 0, tag: 'prod' })).total, 0)
      const r0 = await store.hostsRevision()
      await store.setHostTags(a, ['prod'])
      t.not(await store.hostsRevision(), r0, 'moved')
      t.same((await store.listHosts({ limit: 10, offset: 0, tag: 'prod' })).items.map((h) => h.address), [a])
      t.same((await store.listHosts({ limit: 10, offset: 0 })).items[0].tags, ['prod'])
      const r1 = await store.hostsRevision()
      await store.setHostTags(a, ['prod'])
      t.equal(await store.hostsRevision(), r1, 'the same set again is no change')
    })
  }
})

test('the migration gives hosts written before tags an empty tag list, as the store writes it', async (t) => {
  if (!await databaseAnswers()) {
    if (process.env.CI === 'true') throw new Error('PostgreSQL does not answer')
    return t.pass('skipped: PostgreSQL does not answer')
  }
  const schema = uniqueSchema('tagsmig')
  const db = new Client({ connectionString: DATABASE_TEST_URL, options: `-c search_path=${schema}` })
  await db.connect()
  t.teardown(async () => { await db.end(); await dropSchema(schema) })
  // The first migration only, then a host row as the store wrote it then.
  const { runner } = await import('node-pg-migrate')
  await runner({ dbClient: db, schema, createSchema: true, migrationsTable: 'pgmigrations', dir: MIGRATIONS_DIR, direction: 'up', count: 1, checkOrder: true, advisoryLockMode: 'wait', log: () => {} })
  const legacy = '{"address":"10.3.4.1","hostnames":[],"up":true,"firstSeen":"2026-01-01T00:00:00.000Z","lastSeen":"2026-01-01T00:00:00.000Z","lastScanId":"s1","rttMs":0.4,"ports":[],"findingsCount":0,"maxSeverity":null}'
  await db.query(`INSERT INTO hosts (address, addr_key, last_seen_ms, findings_count, severity_score, search, ports, services, products, record)
    VALUES ('10.3.4.1', 'k', 0, 0, -1, '10.3.4.1', '{}', '{}', '{}', $1::json)`, [legacy])
  t.ok((await migrateResults(db, schema)).includes('1767312000000_host_tags'), 'the tags migration ran over it (with the others after the first)')
  const row = (await db.query<{ text: string, tags: string[] }>('SELECT record::text AS text, tags FROM hosts')).rows[0]
  t.equal(row.text, `${legacy.slice(0, -1)},"tags":[]}`, 'the record text gains the field last, as results-merge writes it')
  t.same(row.tags, [])
})
