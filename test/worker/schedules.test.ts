// Schedules fire: a cron that is due every second starts one scan per due time, in process on the embedded default
// and across two worker processes on Redis (whichever takes a due time, it runs once), and goes on after the
// workers are replaced.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import { spawnWorker, type WorkerLogLine } from '../support/worker-process'
import { freePort, loopbackAddress } from '../support/loopback'

const auth = { 'x-api-key': SERVICE_KEY }
type Json = Record<string, any>
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function scanBody (): Promise<Json> {
  const host = loopbackAddress()
  // A port nobody listens on: the scan is quick, and the next due time usually finds it ended.
  return { targets: [{ value: host, type: 'single_ip' }], options: { template: 'discovery', ports: String(await freePort(host)) } }
}

test('embedded default: one scan per due time, each carrying scheduleId', async (t) => {
  const { app } = await build(t, 'memory', { WORKER_ENABLED: true, SCHEDULE_MIN_INTERVAL: 1 })
  const s = (await app.inject({ method: 'POST', url: '/app/schedule', headers: auth, payload: { cron: '* * * * * *', scan: await scanBody() } })).json() as Json
  await sleep(4200)
  await app.inject({ method: 'PATCH', url: `/app/schedule/${String(s.id)}`, headers: auth, payload: { enabled: false } })
  let scans: Json[] = []
  for (let i = 0; i < 150; i++) {
    await sleep(100)
    scans = ((await app.inject({ url: '/app/scan?limit=100', headers: auth })).json() as Json).items.filter((x: Json) => x.scheduleId === s.id)
    if (scans.every((x) => ['completed', 'failed', 'cancelled'].includes(x.status))) break
  }
  const after = (await app.inject({ url: `/app/schedule/${String(s.id)}`, headers: auth })).json() as Json
  // schedule.<schedule id>.<due ms>.<tag>
  const dues = scans.map((x: Json) => Number(String(x.id).split('.').at(-2))).sort()
  t.ok(dues.length >= 3, `at least 3 runs in about 4 s (${dues.length}, ${String(after.skippedTotal)} skipped)`)
  t.equal(new Set(dues).size, dues.length, 'no due time ran twice')
  t.ok(dues.every((d: number) => d % 1000 === 0), 'due times on whole seconds')
  t.equal(after.runs, scans.length, 'runs counts the scans it started')
  t.equal(countMissing(dues, after), 0, 'every second between the first and last run was run or skipped')
  t.equal(after.runs + after.skippedTotal, (dues[dues.length - 1] - dues[0]) / 1000 + 1 + skippedAfterLast(dues, after), 'and counted once')
  t.ok(scans.some((x: Json) => x.id === after.lastRun.scanId), 'lastRun names one of them')
  t.ok(scans.every((x: Json) => x.status === 'completed'), 'they ran')
})

/** Seconds between the first and last run that were skipped (so counted in skippedTotal, not in dues). */
function countMissing (dues: number[], after: Json): number {
  const skipped = new Set((after.skipped as Json[]).map((x) => Date.parse(x.dueAt)))
  let missing = 0
  for (let d = dues[0]; d <= dues[dues.length - 1]; d += 1000) if (!dues.includes(d) && !skipped.has(d)) missing++
  return missing
}

/** Skipped due times after the last run (the scan of the last run was still in flight). */
function skippedAfterLast (dues: number[], after: Json): number {
  return (after.skipped as Json[]).filter((x) => Date.parse(x.dueAt) > dues[dues.length - 1]).length
}

test('Redis: a schedule fires exactly once per due time across two worker processes, and after a restart', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis answers (required under CI=true)')
  const { app, config } = await build(t, 'redis', { SCHEDULE_MIN_INTERVAL: 1 })
  const env = { REDIS_URL: config.REDIS_URL, DATABASE_URL: config.DATABASE_URL, DATABASE_SCHEMA: config.DATABASE_SCHEMA, REDIS_PREFIX: config.REDIS_PREFIX, QUEUE_PREFIX: config.QUEUE_PREFIX, NVD_INDEX_FILE: '', SOURCES_FILE: '' }
  const workers = [spawnWorker(env), spawnWorker(env)]
  t.teardown(async () => { await Promise.all(workers.map((w) => w.kill())) })
  await Promise.all(workers.map((w) => w.ready()))

  const s = (await app.inject({ method: 'POST', url: '/app/schedule', headers: auth, payload: { cron: '* * * * * *', scan: await scanBody() } })).json() as Json
  await sleep(5200)
  // Both workers go; the schedule lives in Redis, and a new worker takes it up.
  await Promise.all(workers.map((w) => w.stop()))
  const third = spawnWorker(env)
  workers.push(third)
  await third.ready()
  await sleep(4200)
  await app.inject({ method: 'PATCH', url: `/app/schedule/${String(s.id)}`, headers: auth, payload: { enabled: false } })
  await sleep(1500)

  const lines: WorkerLogLine[] = workers.flatMap((w) => w.lines)
  const outcomes = new Map<string, number>()
  for (const l of lines) {
    if ((l.msg === 'scheduled scan started' || l.msg.startsWith('scheduled run skipped')) && l.scheduleId === s.id) {
      outcomes.set(String(l.dueAt), (outcomes.get(String(l.dueAt)) ?? 0) + 1)
    }
  }
  t.ok(outcomes.size >= 5, `due times handled: ${outcomes.size}`)
  t.same([...outcomes].filter(([, n]) => n !== 1), [], 'no due time handled twice')
  const byWorker = workers.map((w) => w.lines.filter((l) => l.msg === 'scheduled scan started' && l.scheduleId === s.id).length)
  t.ok(byWorker[2] >= 2, `the worker started after the restart ran the schedule (${byWorker.join(', ')} runs per worker)`)

  const scans = ((await app.inject({ url: '/app/scan?limit=100', headers: auth })).json() as Json).items.filter((x: Json) => x.scheduleId === s.id)
  const after = (await app.inject({ url: `/app/schedule/${String(s.id)}`, headers: auth })).json() as Json
  const started = lines.filter((l) => l.msg === 'scheduled scan started' && l.scheduleId === s.id).length
  t.equal(scans.length, started, 'one scan per started run')
  t.equal(after.runs, started, 'the schedule counts them')
  t.equal(after.skippedTotal, outcomes.size - started, 'and the skipped ones')
  t.equal(new Set(scans.map((x: Json) => x.id)).size, scans.length)
  t.ok(scans.every((x: Json) => ['completed', 'running', 'queued'].includes(x.status)), 'none failed')
  t.equal(await app.backends.scheduler.ids().then((ids) => ids.includes(s.id)), false, 'disabled: its job scheduler is gone')
})

test('a schedule stops running once the key that made it is revoked', async (t) => {
  const { app } = await build(t, 'memory', { WORKER_ENABLED: true, SCHEDULE_MIN_INTERVAL: 1 })
  const key = (await app.inject({ method: 'POST', url: '/admin/keys', headers: auth, payload: { label: 'team', role: 'operator' } })).json() as Json
  const team = { 'x-api-key': String(key.key) }
  const posted = await app.inject({ method: 'POST', url: '/app/schedule', headers: team, payload: { cron: '* * * * * *', scan: await scanBody() } })
  t.equal(posted.statusCode, 201, posted.body)
  const s = posted.json() as Json
  const runs = async (): Promise<number> => ((await app.inject({ url: '/app/scan?limit=100', headers: auth })).json() as Json).items.filter((x: Json) => x.scheduleId === s.id).length
  for (let i = 0; i < 50 && await runs() === 0; i++) await sleep(100)
  t.ok(await runs() > 0, 'it runs while the key is live')
  t.equal((await app.inject({ method: 'DELETE', url: `/admin/keys/${String(key.id)}`, headers: auth })).statusCode, 204)
  await sleep(300)
  const before = await runs()
  await sleep(2500)
  t.equal(await runs(), before, 'no scan starts after the revocation')
})
