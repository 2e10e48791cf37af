// The host page cache on the scaled deployment: the hosts revision is read from PostgreSQL only after a host
// write was announced on the invalidation channel, a write made by another process included; while the channel
// is down the revision is read on every request, so that no write goes unseen.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { test } from 'tap'
import { withHostPageCache } from '../../../lib/store/host-page-cache'
import type { ResultsStore } from '../../../lib/store/results-types'
import { DATABASE_TEST_URL, databaseAnswers, dropSchema, openBackendsFor, uniquePrefix, uniqueSchema } from '../../helper'
import { redisServerAvailable, startPrivateRedis } from '../../support/redis-server'
import { write } from '../../support/results'

const ROOT = join(__dirname, '..', '..', '..')
const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }

async function waitFor (what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Write one host from a separate process (its own Redis and PostgreSQL connections), as a worker would. */
function writeInAnotherProcess (env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'support', 'write-host-process.ts')], {
      cwd: ROOT, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'ignore', 'pipe']
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c })
    child.once('error', reject)
    child.once('exit', (code) => code === 0 ? resolve() : reject(new Error(`the writer exited with ${code}: ${stderr.slice(0, 2000)}`)))
  })
}

test('a host write in another process reaches the page cache over the channel; a dead channel falls back to reading the revision', async (t) => {
  if (!redisServerAvailable() || !await databaseAnswers()) {
    if (process.env.CI === 'true') throw new Error('CI=true and redis-server or PostgreSQL is missing')
    return t.pass('skipped: redis-server or PostgreSQL is missing')
  }
  const redis = await startPrivateRedis()
  const schema = uniqueSchema('page_cache')
  const prefix = uniquePrefix('page-cache').replace(/:/g, '.')
  const backends = await openBackendsFor('redis', { REDIS_URL: redis.url, REDIS_PREFIX: prefix, DATABASE_SCHEMA: schema })
  t.teardown(async () => {
    await backends.close()
    await redis.destroy()
    await dropSchema(schema)
  })

  let revisionReads = 0
  let pageReads = 0
  const inner = backends.results
  const counting: ResultsStore = Object.assign(Object.create(inner) as ResultsStore, {
    hostsRevision: async () => { revisionReads++; return await inner.hostsRevision() },
    listHosts: async (q: Parameters<ResultsStore['listHosts']>[0]) => { pageReads++; return await inner.listHosts(q) }
  })
  const cache = withHostPageCache(counting, { channel: backends.invalidation })
  t.teardown(() => cache.close())
  const addresses = async (): Promise<string[]> => (await cache.listHosts({ limit: 10, offset: 0 })).items.map((h) => h.address)

  await waitFor('the channel is live', () => backends.invalidation.live('hosts'))
  const heard = backends.invalidation.received('hosts', '', 5000)
  await inner.recordHost(write({ address: '10.1.0.1', at: Date.parse('2026-01-01T00:00:00Z'), services: [SSH] }))
  t.ok(await heard, 'the write was announced on the channel')
  t.same(await addresses(), ['10.1.0.1'])
  const reads = revisionReads
  for (let i = 0; i < 5; i++) t.same(await addresses(), ['10.1.0.1'])
  t.equal(revisionReads, reads, 'no revision read per request while the channel is live and nothing was written')
  t.equal(pageReads, 1, 'the page itself is cached')

  await writeInAnotherProcess({
    REDIS_URL: redis.url, REDIS_PREFIX: prefix, DATABASE_URL: DATABASE_TEST_URL, DATABASE_SCHEMA: schema,
    WRITE_ADDRESS: '10.1.0.2', WRITE_AT: '2026-01-02T00:00:00Z'
  })
  await waitFor('the other process\'s host is listed', async () => (await addresses()).length === 2, 5000)
  t.same(await addresses(), ['10.1.0.2', '10.1.0.1'], 'the announcement made the cache read the revision again')
  t.equal(pageReads, 2, 'the page was built again once')

  await redis.stop()
  await waitFor('the channel is down', () => !backends.invalidation.live('hosts'))
  const before = revisionReads
  // Written while no announcement can arrive (its own announcement fails): seen at once all the same.
  await inner.recordHost(write({ address: '10.1.0.3', at: Date.parse('2026-01-03T00:00:00Z'), services: [SSH] }))
  t.same(await addresses(), ['10.1.0.3', '10.1.0.2', '10.1.0.1'], 'a write during the outage is listed at once')
  t.same(await addresses(), ['10.1.0.3', '10.1.0.2', '10.1.0.1'])
  t.equal(revisionReads, before + 2, 'every request reads the revision while the channel is down')
  t.equal(pageReads, 3, 'and the page is still cached under it')

  await redis.start()
  await waitFor('the channel is live again', () => backends.invalidation.live('hosts'))
  await addresses()
  const after = revisionReads
  await addresses()
  t.equal(revisionReads, after, 'trusted again once resubscribed')
})
