// A scan's records and its job, through the failures of issue 29 (items 2 and 3): a request stored without its state
// (Redis died between two writes) is made whole rather than left queued and unseen, and a scan whose job could not
// be queued (the 503 after its record was stored) is not left without one.
import { test } from 'tap'
import { backends, build, deletePrefix, openBackendsIn, SERVICE_KEY } from '../helper'
import { newScanRecord } from '../../lib/scans'
import { keySegment } from '../../lib/store/redis/key-segment'
import { loopbackAddress } from '../support/loopback'
import { until } from '../support/fault-deployment'

const auth = { 'x-api-key': SERVICE_KEY }
type Json = Record<string, any>

test('a scan request stored without its state is repaired by a re-post and runs to the end', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis or PostgreSQL answers (required under CI=true)')
  const first = await build(t, 'redis', { WORKER_ENABLED: false })
  const { config, redis } = first
  const body = { id: 'half', targets: [{ value: loopbackAddress(), type: 'single_ip' }], options: { template: 'discovery', ports: '9' } }
  t.equal((await first.app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: body })).statusCode, 200)
  // What the two-step create left when Redis died between its SET NX and its MULTI: the request alone, no state,
  // no index entry, no job.
  const requestKey = `${config.REDIS_PREFIX}:scan:${keySegment('half')}`
  const request = await redis!.get(requestKey)
  await first.app.close()
  await deletePrefix(redis!, config.REDIS_PREFIX)
  await deletePrefix(redis!, config.QUEUE_PREFIX)
  await redis!.set(requestKey, request!)
  const { app } = await build(t, 'redis', { WORKER_ENABLED: true, SCAN_SWEEP_INTERVAL: 3600, REDIS_PREFIX: config.REDIS_PREFIX, QUEUE_PREFIX: config.QUEUE_PREFIX, DATABASE_SCHEMA: config.DATABASE_SCHEMA })

  const again = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: body })
  t.equal(again.statusCode, 200, `re-posting the same body is acknowledged: ${again.body}`)
  const scan = await until('the scan ends', async () => {
    const s = (await app.inject({ url: '/app/scan/half', headers: auth })).json() as Json
    return ['completed', 'failed', 'cancelled'].includes(s.status) ? s : undefined
  }, 60_000)
  t.equal(scan.status, 'completed', `it ran (${String(scan.reason)})`)
  const listed = (await app.inject({ url: '/app/scan?status=completed', headers: auth })).json() as Json
  t.ok(listed.items.some((s: Json) => s.id === 'half'), 'and the status lists show it')
})

test('a scan whose state went missing is repaired by its job, not planned into nothing', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis or PostgreSQL answers (required under CI=true)')
  const { app, config, redis } = await build(t, 'redis', { WORKER_ENABLED: false })
  const body = { id: 'stateless', targets: [{ value: loopbackAddress(), type: 'single_ip' }], options: { template: 'discovery', ports: '9' } }
  t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: body })).statusCode, 200)
  await redis!.del(`${config.REDIS_PREFIX}:scan:stateless:state`)
  t.equal((await app.inject({ url: '/app/scan?status=queued', headers: auth })).json().items.some((s: Json) => s.id === 'stateless'), true, 'still indexed as queued')

  // A worker takes the job: its first state change makes the scan whole again.
  const worker = await build(t, 'redis', { WORKER_ENABLED: true, REDIS_PREFIX: config.REDIS_PREFIX, QUEUE_PREFIX: config.QUEUE_PREFIX, DATABASE_SCHEMA: config.DATABASE_SCHEMA })
  const scan = await until('the scan ends', async () => {
    const s = (await worker.app.inject({ url: '/app/scan/stateless', headers: auth })).json() as Json
    return ['completed', 'failed', 'cancelled'].includes(s.status) ? s : undefined
  }, 60_000)
  t.equal(scan.status, 'completed', `it ran (${String(scan.reason)})`)
  t.equal((await app.inject({ url: '/app/scan?status=queued', headers: auth })).json().items.some((s: Json) => s.id === 'stateless'), false, 'no longer listed as queued')
})

test('a 503 after the record was stored does not leave the scan without a job: the sweep queues it', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis or PostgreSQL answers (required under CI=true)')
  const { app } = await build(t, 'redis', { WORKER_ENABLED: true, SCAN_SWEEP_INTERVAL: 1 })
  // The queue write fails as it does when the queue's connection gives up (ioredis's error, after one retry), while
  // the scan's record was already written.
  const add = app.scanQueue.add.bind(app.scanQueue)
  let failOnce = true
  app.scanQueue.add = async (...args: Parameters<typeof add>) => {
    if (failOnce) {
      failOnce = false
      throw Object.assign(new Error('Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.'), { name: 'MaxRetriesPerRequestError' })
    }
    return await add(...args)
  }
  const body = { id: 'orphan', targets: [{ value: loopbackAddress(), type: 'single_ip' }], options: { template: 'discovery', ports: '9' } }
  const refused = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: body })
  t.equal(refused.statusCode, 503)
  t.equal(refused.json().code, 'VULNSCAN_QUEUE_UNAVAILABLE')
  const scan = await until('the orphaned scan ends without a re-post', async () => {
    const s = (await app.inject({ url: '/app/scan/orphan', headers: auth })).json() as Json
    return ['completed', 'failed', 'cancelled'].includes(s.status) ? s : undefined
  }, 60_000)
  t.equal(scan.status, 'completed', 'the sweep gave it its job, and it ran')
})

test('a failed scan keeps its progress as it stood: a batch still running does not move it', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const b = await openBackendsIn(t, backend)
      const record = newScanRecord({ id: 'stood', targets: [{ value: '127.0.0.2', type: 'single_ip' }], options: { template: 'discovery', ports: '9' } }, 'service')
      await b.store.createScan(record)
      await b.store.updateScan('stood', { status: 'running', hostsTotal: 2, portsTotal: 1000, batches: 2 })
      await b.store.reportBatchProgress('stood', 0, { hostsDone: 1, portsDone: 400 })
      await b.store.updateScan('stood', { status: 'failed', reason: 'batch 1: lost', finishedAt: new Date().toISOString() })
      // The other batch was still scanning when its scan failed; it reports on.
      await b.store.reportBatchProgress('stood', 1, { hostsDone: 1, portsDone: 599 })
      const scan = await b.store.getScan('stood')
      t.equal(scan?.status, 'failed')
      t.equal(scan?.progress.portsDone, 400, 'the progress it had when it failed')
      t.equal(scan?.progress.percent, 40)
    })
  }
})
