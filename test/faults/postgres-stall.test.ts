// The results database stalled (issue 22): every process of a private PostgreSQL cluster stopped with SIGSTOP for
// 25 s under a load of scans, host reads and reports, with an API process and a worker on it. Connections stay
// open and nothing answers, so only a per-query limit (DATABASE_QUERY_TIMEOUT_MS) keeps requests from hanging.
// Wanted: no process exits; every request is answered in bounded time, a 503 naming PostgreSQL (never its
// address) where it needs the database; /health says degraded and names the results database, then ok once the
// database answers again; scans are still acknowledged (Redis is fine), put off rather than failed, and every
// acknowledged scan completes.
import { test } from 'tap'
import { allTerminal, faultServersAvailable, startDeployment, startLoad, until, type Answer } from '../support/fault-deployment'

const QUERY_TIMEOUT_MS = 4000
/** The slowest answer allowed while stalled: a query's limit, a pool wait and a loaded machine's slack. */
const BOUND_MS = 20_000

test('PostgreSQL stopped (SIGSTOP) for 25 s under load: bounded 503s, /health degraded then ok, nothing lost', async (t) => {
  const missing = faultServersAvailable()
  if (missing !== null) return t.pass(`skipped: ${missing}`)
  const d = await startDeployment(t, { apis: 1, workers: 1, env: { WORKER_CONCURRENCY: '2', SCAN_BATCH_HOSTS: '1', DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS) } })
  t.teardown(() => d.pg.resume())
  const load = startLoad(d, { prefix: 's', concurrency: 2, pauseMs: 50, timeoutMs: 60_000 })
  const reads: (Answer & { what: string, at: number })[] = []
  let reading = true
  const reader = (async () => {
    while (reading) {
      for (const path of ['/host?limit=20', '/vulnerability?limit=20', ...[...load.acked].slice(-1).map((id) => `/app/scan/${id}/report?format=json`)]) {
        const a = await d.request(path, { timeoutMs: 60_000 })
        reads.push({ ...a, what: `GET ${path}`, at: Date.now() })
      }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })()
  await until('scans acknowledged', async () => load.acked.size >= 5, 60_000)
  await until('hosts recorded', async () => (await d.request('/host?limit=1')).body?.total === 1, 60_000)

  const acksBefore = load.acked.size
  const stalledAt = Date.now()
  const stopped = d.pg.pause()
  t.ok(stopped >= 3, `${stopped} PostgreSQL processes stopped (the postmaster and its children)`)
  await new Promise((resolve) => setTimeout(resolve, 8000))
  const health = await d.request('/health', { timeoutMs: 15_000 })
  t.equal(health.status, 503, '/health is 503 while PostgreSQL is stalled')
  t.equal(health.body?.status, 'degraded')
  t.equal(health.body?.checks?.results?.status, 'down', 'and names the results database')
  t.equal(health.body?.checks?.store?.status, 'ok', 'Redis is fine')
  t.notOk(JSON.stringify(health.body).includes(d.pg.host), 'without the database address')
  t.ok(health.ms < 10_000, `/health answered in ${health.ms} ms`)
  const hosts = await d.request('/host', { timeoutMs: 60_000 })
  t.equal(hosts.status, 503, 'reading hosts is a 503')
  t.match(hosts.body, { code: 'VULNSCAN_RESULTS_UNAVAILABLE', error: /PostgreSQL/ }, 'naming PostgreSQL')
  t.notOk(JSON.stringify(hosts.body).includes(d.pg.host), 'not its address')
  t.ok(hosts.ms < BOUND_MS, `answered in ${hosts.ms} ms`)
  while (Date.now() - stalledAt < 25_000) await new Promise((resolve) => setTimeout(resolve, 500))
  t.same(d.exits(), [], 'no process exited while PostgreSQL was stalled')
  t.ok(load.acked.size > acksBefore, `scans are still acknowledged while the results database is stalled (${load.acked.size - acksBefore})`)
  d.pg.resume()
  const resumedAt = Date.now()
  await until('/health ok again', async () => (await d.request('/health')).status === 200, 60_000)
  t.comment(`/health ok ${Date.now() - resumedAt} ms after PostgreSQL resumed`)
  await until('hosts read again', async () => (await d.request('/host?limit=1')).status === 200, 30_000)
  await load.stop()
  reading = false
  await reader

  // Every answer started during the stall came in bounded time, a 200 (Redis-only paths) or a 503 naming PostgreSQL.
  const during = [...load.answers, ...reads].filter((a) => a.at - a.ms >= stalledAt && a.at - a.ms < resumedAt)
  const unavailable = during.filter((a) => a.status === 503)
  t.ok(unavailable.length > 0, `requests got 503 while stalled (${unavailable.length} of ${during.length})`)
  t.same(during.filter((a) => a.status === 0).map((a) => `${a.what}: ${a.error ?? ''}`), [], 'no request went unanswered')
  const slowest = Math.max(...during.map((a) => a.ms))
  t.ok(slowest < BOUND_MS, `the slowest of ${during.length} answers took ${slowest} ms`)
  // A report of a scan still running is a 409, as without the stall.
  const expected = (a: typeof during[number]): boolean => [200, 503].includes(a.status) || (a.status === 409 && a.what.includes('/report') && a.body?.code === 'VULNSCAN_CONFLICT')
  t.same(during.filter((a) => !expected(a)).map((a) => `${a.what}: ${a.status} ${JSON.stringify(a.body)}`), [], 'every answer is a 200 or a 503 (or the 409 of a report not ready)')
  t.ok(unavailable.every((a) => typeof a.body?.code === 'string' && /PostgreSQL/.test(String(a.body?.error))),
    `every 503 is {error, code} naming PostgreSQL (${JSON.stringify(unavailable[0]?.body)})`)
  t.notOk(unavailable.some((a) => JSON.stringify(a.body).includes(d.pg.host)), 'no 503 shows the database address')
  t.comment(`stalled: ${unavailable.length} answers 503, ${during.filter((a) => a.status === 200).length} 200, slowest ${slowest} ms`)

  const done = await allTerminal(d, load.acked, 180_000)
  t.equal(done.size, load.acked.size, `all ${load.acked.size} acknowledged scans ended`)
  t.same([...done.values()].filter((s) => s.status !== 'completed').map((s) => `${String(s.id)}: ${String(s.status)} ${String(s.reason)}`), [],
    'every one completed: the stall delayed them, it failed none')
  t.same(d.exits(), [], 'no process exited')
  const after = await d.request('/host?limit=5')
  t.equal(after.status, 200, 'reads work again')
  t.equal(after.body?.total, 1, 'the scanned host is there, once')
  for (const p of [...d.apis, ...d.workers]) {
    const downs = p.lines.filter((l) => l.msg === 'PostgreSQL unavailable').length
    t.ok(downs >= 1 && downs <= 4, `process ${p.pid}: ${downs} 'PostgreSQL unavailable' lines for one stall`)
  }
})
