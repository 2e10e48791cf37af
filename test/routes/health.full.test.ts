import { test } from 'tap'
import { backends, build } from '../helper'
import { redisServerAvailable, startPrivateRedis } from '../support/redis-server'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createMemoryIndex } from '../../lib/nvd/memory/cve-index'
import { allRawFixtures } from '../support/nvd-fixtures'

test('GET /health', async (t) => {
  for (const backend of await backends()) {
    t.test(`${backend}: answers ok without a key`, async (t) => {
      const { app } = await build(t, backend, { WORKER_ENABLED: true })
      const res = await app.inject({ url: '/health' })
      t.equal(res.statusCode, 200)
      const body = res.json()
      t.equal(body.status, 'ok')
      t.same(body.checks.results, { status: 'ok', backend: backend === 'redis' ? 'postgresql' : 'memory' }, 'the results database answers')
      t.match(body.checks.workers, { status: 'ok', count: 1 }, 'a worker takes scan jobs (this process)')
      t.match(body.version, /^\d+\.\d+\.\d+/)
      t.type(body.uptimeSeconds, 'number')
      t.same(body.checks.store, { status: 'ok', backend })
      t.same(body.checks.queue, { status: 'ok', backend: backend === 'redis' ? 'bullmq' : 'memory' })
      t.same(body.nvd, { cves: 0, products: 0, lastSync: null }, 'the NVD index size and last sync')
    })

    t.test(`${backend}: says when no worker is alive, and not when one is`, async (t) => {
      const { app: apiOnly } = await build(t, backend, { WORKER_ENABLED: false })
      const alone = (await apiOnly.inject({ url: '/health' })).json()
      t.equal(alone.checks.workers.count, 0, 'no worker')
      t.match(alone.warnings, [/No scan worker is running: posted scans stay queued/], 'and says what that means')
      t.equal(alone.status, 'degraded', 'said as degraded (with a 200: a load balancer keeps the API)')
      const { app: both } = await build(t, backend, { WORKER_ENABLED: true })
      const body = (await both.inject({ url: '/health' })).json()
      t.ok(body.checks.workers.count >= 1, `a worker (${String(body.checks.workers.count)})`)
      t.notOk('warnings' in body, 'no warning')
    })
  }
})

test('GET /health says degraded, with a 200, while no worker takes scan jobs', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend, { WORKER_ENABLED: false })
      const res = await app.inject({ url: '/health' })
      t.equal(res.statusCode, 200, 'this instance still serves')
      t.equal(res.json().status, 'degraded')
      t.match(res.json().checks.workers, { status: 'down', count: 0, error: /no scan worker/ })
    })
  }
})

test('GET /health says degraded, without hanging, while Redis is down, and ok once it is back', { skip: !redisServerAvailable() && 'redis-server not installed' }, async (t) => {
  const redis = await startPrivateRedis()
  t.teardown(() => redis.destroy())
  const { app } = await build(t, 'memory', { REDIS_URL: redis.url })
  t.equal((await app.inject({ url: '/health' })).statusCode, 200)
  await redis.stop()
  const started = Date.now()
  const res = await app.inject({ url: '/health' })
  t.ok(Date.now() - started < 5000, `answered in ${Date.now() - started} ms`)
  t.equal(res.statusCode, 503)
  const body = res.json()
  t.equal(body.status, 'degraded')
  t.equal(body.checks.store.status, 'down')
  t.ok(body.checks.store.error, 'says why')
  await redis.start()
  let back = 0
  for (let i = 0; i < 50 && back !== 200; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    back = (await app.inject({ url: '/health' })).statusCode
  }
  t.equal(back, 200, 'recovers when Redis returns')
})

test('the service refuses to start, with a clear message, when Redis is unreachable at start', async (t) => {
  await t.rejects(build(t, 'memory', { REDIS_URL: 'redis://127.0.0.1:1' }), /Cannot reach Redis at redis:\/\/127\.0\.0\.1:1/)
})

test('GET /health shows an import made by another process at once, not after the next scan', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-health-import-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'nvd-index.json.gz')
  const { app } = await build(t, 'memory', { NVD_INDEX_FILE: file, WORKER_ENABLED: false })
  t.equal((await app.inject({ url: '/health' })).json().nvd.cves, 0, 'empty at first')
  // What nvd:import does in its own process: the records written to the file the service reads.
  const other = await createMemoryIndex({ filePath: file })
  const n = await other.upsertRaw(allRawFixtures())
  await other.flush()
  await other.close()
  // The service looks at the file at most once a second.
  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal((await app.inject({ url: '/health' })).json().nvd.cves, n, `the ${n} imported records, with no scan in between`)
})
