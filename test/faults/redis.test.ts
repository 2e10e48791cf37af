// Redis killed (SIGKILL), restarted and stopped (SIGSTOP) under a load of scans, with two API processes and a
// worker on it (issue 22 §1). No process exits; every answer comes within a bound, as a 503 that names Redis
// (never its address) or a normal answer; /health says degraded and which dependency; everything comes back by
// itself; every scan acknowledged reaches a terminal state; one log line per outage start and end per process.
import { test } from 'tap'
import { allTerminal, faultServersAvailable, startDeployment, startLoad, until, type Deployment } from '../support/fault-deployment'

// REDIS_COMMAND_TIMEOUT_MS is 1.5 s here; a request makes a few Redis round trips, each bounded. The stall lasts
// longer than this bound, so a request that waits on it fails the test.
const BOUND_MS = 10_000

function addressFree (d: Deployment, text: string): boolean {
  return !text.includes(d.redis.host) && !text.includes(d.pg.host) && !text.includes(String(d.redis.port))
}

test('Redis killed, restarted and stalled under load: bounded answers, no exit, nothing acknowledged lost', async (t) => {
  const missing = faultServersAvailable()
  if (missing !== null) return t.pass(`skipped: ${missing}`)
  const d = await startDeployment(t, { apis: 2, workers: 1 })

  const healthy = await d.request('/health')
  t.equal(healthy.status, 200, 'healthy at the start')
  t.equal(healthy.body?.checks?.workers?.status, 'ok', 'a worker is alive')

  const load = startLoad(d, { prefix: 'r', timeoutMs: 30_000 })
  await until('scans acknowledged', async () => load.acked.size >= 10, 60_000)

  // 1. Redis killed: a crash, not a shutdown.
  const killedAt = Date.now()
  await d.redis.kill()
  await new Promise((resolve) => setTimeout(resolve, 4000))
  const health = await d.request('/health', { timeoutMs: 10_000 })
  t.equal(health.status, 503, '/health answers 503 while Redis is down')
  t.equal(health.body?.status, 'degraded')
  t.equal(health.body?.checks?.store?.status, 'down', 'and names the store (Redis)')
  t.equal(health.body?.checks?.results?.status, 'ok', 'PostgreSQL still answers')
  t.ok(addressFree(d, JSON.stringify(health.body)), `/health does not show Redis's address: ${JSON.stringify(health.body?.checks)}`)
  t.same(d.exits(), [], 'no process exited while Redis was down')
  await d.redis.start()
  await until('/health ok after Redis returns', async () => (await d.request('/health')).status === 200, 60_000)
  const killed = (until: number): typeof load.answers => load.answers.filter((a) => a.at - a.ms >= killedAt && a.at - a.ms < until)

  // 2. Redis stopped (SIGSTOP): connections stay open, nothing answers.
  await until('scans acknowledged again', async () => load.answers.some((a) => a.at > Date.now() - 1000 && a.status === 200), 60_000)
  const stalledAt = Date.now()
  d.redis.pause()
  await new Promise((resolve) => setTimeout(resolve, 14_000))
  const stalledHealth = await d.request('/health', { timeoutMs: 10_000 })
  t.equal(stalledHealth.body?.status, 'degraded', '/health says degraded while Redis is stalled')
  t.equal(stalledHealth.body?.checks?.store?.status, 'down')
  t.same(d.exits(), [], 'no process exited while Redis was stalled')
  d.redis.resume()
  await until('/health ok after the stall', async () => (await d.request('/health')).status === 200, 60_000)
  const stalledUntil = Date.now()
  const stalled = (): typeof load.answers => load.answers.filter((a) => a.at - a.ms >= stalledAt && a.at - a.ms < stalledUntil)
  await until('scans acknowledged after the stall', async () => load.answers.some((a) => a.at > Date.now() - 1000 && a.status === 200), 60_000)
  await load.stop()

  const killedUntil = stalledAt
  for (const [name, answers] of [['killed', killed(killedUntil)], ['stalled', stalled()]] as const) {
    const unavailable = answers.filter((a) => a.status === 503)
    t.ok(unavailable.length > 0, `${name}: requests got 503 (${unavailable.length} of ${answers.length})`)
    t.same(answers.filter((a) => a.status === 0).map((a) => `${a.what}: ${a.error ?? ''}`), [], `${name}: no request went unanswered`)
    const slowest = Math.max(...answers.map((a) => a.ms))
    t.ok(slowest < BOUND_MS, `${name}: the slowest of ${answers.length} answers took ${slowest} ms`)
    t.comment(`${name}: ${unavailable.length} answers 503, ${answers.filter((a) => a.status === 200).length} 200, slowest ${slowest} ms`)
    // A scan whose POST got a 503 was not created: reading it back is a 404.
    const expected = (a: typeof answers[number]): boolean => [200, 503].includes(a.status) || (a.status === 404 && a.what.startsWith('GET') && !load.acked.has(a.what.slice(4)))
    t.same(answers.filter((a) => !expected(a)).map((a) => `${a.what}: ${a.status} ${JSON.stringify(a.body)}`), [], `${name}: every answer is a 200 or a 503 (or the 404 of a scan refused)`)
    t.ok(unavailable.every((a) => typeof a.body?.error === 'string' && typeof a.body?.code === 'string' && /Redis/.test(a.body.error)),
      `${name}: every 503 is {error, code} naming Redis (${JSON.stringify(unavailable[0]?.body)})`)
    t.ok(unavailable.every((a) => addressFree(d, JSON.stringify(a.body))), `${name}: no 503 shows an address`)
  }

  // Everything acknowledged ends; what was acknowledged before the kill survived it (AOF, fsync always).
  const done = await allTerminal(d, load.acked, 120_000)
  t.equal(done.size, load.acked.size, `all ${load.acked.size} acknowledged scans reached a terminal state`)
  t.same([...done.values()].filter((s) => s.status !== 'completed').map((s) => `${String(s.id)}: ${String(s.status)} ${String(s.reason)}`), [], 'and completed')
  t.same(d.exits(), [], 'no process exited')

  // One line per outage start and end per process (two outages here), not one per connection or attempt.
  for (const p of [...d.apis, ...d.workers]) {
    const downs = p.lines.filter((l) => l.msg === 'Redis unavailable').length
    const ups = p.lines.filter((l) => l.msg === 'Redis available again').length
    t.ok(downs >= 1 && downs <= 4, `process ${p.pid}: ${downs} 'Redis unavailable' lines for 2 outages`)
    t.ok(ups >= 1 && ups <= 4, `process ${p.pid}: ${ups} 'Redis available again' lines`)
    t.equal(p.lines.filter((l) => l.msg === 'Redis connection error').length, 0, 'no line per connection error')
    t.notOk(/MaxRetriesPerRequestError|previousErrors/.test(p.stderr()), 'nothing dumped on stderr')
  }
})
