// /app/schedule on both backends: validation naming the problem, key scope, next run, and the timer kept in step.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../../helper'

const auth = { 'x-api-key': SERVICE_KEY }
const SCAN = { targets: [{ value: '10.0.0.1', type: 'single_ip' }], options: { template: 'discovery', ports: '22' } }
type Json = Record<string, any>

test('schedules: create, read, change, delete', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      // A run every 10 seconds, below the default minimum interval: allowed here to see the next run move.
      const { app } = await build(t, backend, { SCHEDULE_MIN_INTERVAL: 1 })
      const post = (payload: unknown, headers: Record<string, string> = auth) => app.inject({ method: 'POST', url: '/app/schedule', headers, payload: payload as Json })

      const created = await post({ name: 'nightly', cron: '0 3 * * 1-5', timezone: 'Europe/Paris', scan: SCAN })
      t.equal(created.statusCode, 201)
      const s = created.json() as Json
      t.match(s, { name: 'nightly', cron: '0 3 * * 1-5', timezone: 'Europe/Paris', enabled: true, scan: SCAN, lastRun: null, runs: 0, skippedTotal: 0, skipped: [] })
      t.notOk('createdBy' in s || 'keyScope' in s, 'internal fields stay inside')
      const next = new Date(s.nextRunAt as string)
      t.ok(next.getTime() > Date.now(), 'the next run is ahead')
      const paris = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit', weekday: 'short', hour12: false }).format(next)
      t.match(paris, /^(Mon|Tue|Wed|Thu|Fri) 03:00$/, `3 a.m. on a weekday in Paris (${paris})`)
      t.same(await app.backends.scheduler.ids(), [s.id], 'the timer holds it')

      t.match((await app.inject({ url: `/app/schedule/${String(s.id)}`, headers: auth })).json(), { id: s.id, nextRunAt: s.nextRunAt })
      t.match((await app.inject({ url: '/app/schedule', headers: auth })).json(), { total: 1, limit: 50, offset: 0, items: [{ id: s.id }] })
      t.equal((await post({ cron: '@hourly', scan: SCAN })).json().timezone, 'UTC', 'UTC unless told')

      const off = await app.inject({ method: 'PATCH', url: `/app/schedule/${String(s.id)}`, headers: auth, payload: { enabled: false } })
      t.equal(off.statusCode, 200)
      t.match(off.json(), { enabled: false, nextRunAt: null, name: 'nightly' })
      t.notOk((await app.backends.scheduler.ids()).includes(s.id), 'a disabled schedule leaves the timer')
      const on = await app.inject({ method: 'PATCH', url: `/app/schedule/${String(s.id)}`, headers: auth, payload: { enabled: true, cron: '*/10 * * * * *' } })
      t.match(on.json(), { enabled: true, cron: '*/10 * * * * *' })
      t.ok(Date.parse(on.json().nextRunAt) - Date.now() <= 10_000, 'the new expression decides the next run')
      t.ok((await app.backends.scheduler.ids()).includes(s.id))

      t.equal((await app.inject({ method: 'DELETE', url: `/app/schedule/${String(s.id)}`, headers: auth })).statusCode, 204)
      t.notOk((await app.backends.scheduler.ids()).includes(s.id), 'a deleted schedule leaves the timer')
      for (const req of [{ method: 'GET' }, { method: 'DELETE' }, { method: 'PATCH', payload: { enabled: true } }] as const) {
        const r = await app.inject({ ...req, url: `/app/schedule/${String(s.id)}`, headers: auth })
        t.equal(r.statusCode, 404, `${req.method} after delete`)
        t.equal(r.json().code, 'VULNSCAN_NOT_FOUND')
      }
    })
  }
})

test('schedules: every problem is a 400 or 403 that names it', async (t) => {
  const { app } = await build(t, 'memory', { SCAN_DENY: '10.9.0.0/16' })
  const cases: [Json, number, RegExp, string][] = [
    [{ cron: '61 * * * *', scan: SCAN }, 400, /cron '61 \* \* \* \*' is not valid/, 'VULNSCAN_SCHEDULE_INVALID'],
    [{ cron: '* * *', scan: SCAN }, 400, /has 3 fields/, 'VULNSCAN_SCHEDULE_INVALID'],
    [{ cron: '0 0 30 2 *', scan: SCAN }, 400, /never fires/, 'VULNSCAN_SCHEDULE_INVALID'],
    [{ cron: '0 0 31 4,6,9,11 *', scan: SCAN }, 400, /never fires: no month it names has that day/, 'VULNSCAN_SCHEDULE_INVALID'],
    [{ cron: '0 0 * 2 1#5', scan: SCAN }, 400, /does not fire within four years/, 'VULNSCAN_SCHEDULE_INVALID'],
    [{ cron: '* * * * * *', scan: SCAN }, 400, /may fire 1 second after its previous run; runs must be at least 1 minute apart \(SCHEDULE_MIN_INTERVAL\)/, 'VULNSCAN_SCHEDULE_INVALID'],
    [{ cron: '*/30 * * * * *', scan: SCAN }, 400, /may fire 30 seconds after/, 'VULNSCAN_SCHEDULE_INVALID'],
    [{ cron: '0 3 * * *', timezone: 'Mars/Olympus', scan: SCAN }, 400, /timezone 'Mars\/Olympus' is not an IANA time zone/, 'VULNSCAN_SCHEDULE_INVALID'],
    [{ cron: '0 3 * * *', scan: { targets: [{ value: '10.0.0.999', type: 'single_ip' }] } }, 400, /^scan\.targets\[0\]\.value/, 'VULNSCAN_SCAN_INVALID_TARGET'],
    [{ cron: '0 3 * * *', scan: { targets: [{ value: '10.9.1.1', type: 'single_ip' }] } }, 400, /^scan\.targets\[0\]\.value/, 'VULNSCAN_SCAN_OUT_OF_SCOPE'],
    [{ cron: '0 3 * * *', scan: { targets: [] } }, 400, /^scan\.targets: a scan needs at least one target, or targetTags/, 'VULNSCAN_SCAN_INVALID_TARGET'],
    [{ cron: '0 3 * * *' }, 400, /scan is required/, 'VULNSCAN_VALIDATION'],
    [{ cron: '0 3 * * *', scan: SCAN, every: 'day' }, 400, /unknown field 'every'/, 'VULNSCAN_VALIDATION']
  ]
  for (const [payload, status, error, code] of cases) {
    const r = await app.inject({ method: 'POST', url: '/app/schedule', headers: auth, payload })
    t.equal(r.statusCode, status, JSON.stringify(payload))
    t.match(r.json(), { error, code })
  }
  const s = (await app.inject({ method: 'POST', url: '/app/schedule', headers: auth, payload: { cron: '0 3 * * *', scan: SCAN } })).json() as Json
  const bad = await app.inject({ method: 'PATCH', url: `/app/schedule/${String(s.id)}`, headers: auth, payload: { timezone: 'Nowhere/Land' } })
  t.match(bad.json(), { error: /timezone 'Nowhere\/Land'/, code: 'VULNSCAN_SCHEDULE_INVALID' })
  t.equal((await app.inject({ method: 'PATCH', url: `/app/schedule/${String(s.id)}`, headers: auth, payload: {} })).statusCode, 400, 'an empty change is refused')

  // A key with a scope may schedule only what it may scan, and a reader may not schedule at all.
  const mk = async (role: string, scope: string[]) => (await app.inject({ method: 'POST', url: '/admin/keys', headers: auth, payload: { label: role, role, scope } })).json().key as string
  const scoped = await mk('operator', ['192.0.2.0/24'])
  const outside = await app.inject({ method: 'POST', url: '/app/schedule', headers: { 'x-api-key': scoped }, payload: { cron: '0 3 * * *', scan: SCAN } })
  t.equal(outside.statusCode, 403)
  t.match(outside.json(), { error: /^scan: /, code: 'VULNSCAN_SCAN_OUTSIDE_KEY_SCOPE' })
  const inside = await app.inject({ method: 'POST', url: '/app/schedule', headers: { 'x-api-key': scoped }, payload: { cron: '0 3 * * *', scan: { targets: [{ value: '192.0.2.7', type: 'single_ip' }] } } })
  t.equal(inside.statusCode, 201)
  t.same((await app.store.getSchedule(inside.json().id))?.keyScope, ['192.0.2.0/24'], 'its runs keep the scope of the key that made it')
  const widened = await app.inject({ method: 'PATCH', url: `/app/schedule/${String(inside.json().id)}`, headers: auth, payload: { scan: SCAN } })
  t.equal(widened.statusCode, 200, 'the infrastructure key may point it elsewhere')
  t.same((await app.store.getSchedule(inside.json().id))?.keyScope, [], 'and the runs then keep its scope (none)')
  const reader = await mk('reader', [])
  t.equal((await app.inject({ method: 'POST', url: '/app/schedule', headers: { 'x-api-key': reader }, payload: { cron: '0 3 * * *', scan: SCAN } })).statusCode, 403)
  t.equal((await app.inject({ url: '/app/schedule', headers: { 'x-api-key': reader } })).statusCode, 200, 'a reader lists them')

  const audit = (await app.inject({ url: '/admin/audit?limit=50', headers: auth })).json() as Json
  t.ok(audit.items.some((e: Json) => e.route === '/app/schedule' && e.method === 'POST' && e.targetId === s.id && e.status === 201), 'creation is in the audit log with the new id')
})

test('schedules: the work per expression is bounded, the next due time is stored, and each key keeps a bounded number', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend, { SCHEDULE_MAX_PER_KEY: 3 })
      // The two expressions the abuse pass timed: 45-150 ms per next-run search, and 1.1 s before the 400. CPU time,
      // not wall time, so that a busy machine does not fail it.
      for (const cron of ['0 0 * 2 1#5', '0 0 31 4,6,9,11 *']) {
        const before = process.cpuUsage()
        const r = await app.inject({ method: 'POST', url: '/app/schedule', headers: auth, payload: { cron, scan: SCAN } })
        const used = process.cpuUsage(before)
        t.equal(r.statusCode, 400, cron)
        t.ok((used.user + used.system) / 1000 < 400, `${cron}: refused in ${Math.round((used.user + used.system) / 1000)} ms of CPU`)
      }
      const ids: string[] = []
      for (let i = 0; i < 3; i++) ids.push((await app.inject({ method: 'POST', url: '/app/schedule', headers: auth, payload: { cron: '0 3 * * *', scan: SCAN } })).json().id)
      const over = await app.inject({ method: 'POST', url: '/app/schedule', headers: auth, payload: { cron: '0 3 * * *', scan: SCAN } })
      t.equal(over.statusCode, 409, 'a fourth schedule of the same key is refused')
      t.match(over.json(), { error: /SCHEDULE_MAX_PER_KEY/, code: 'VULNSCAN_SCHEDULE_TOO_MANY' })
      const other = (await app.inject({ method: 'POST', url: '/admin/keys', headers: auth, payload: { label: 'other', role: 'operator' } })).json().key as string
      t.equal((await app.inject({ method: 'POST', url: '/app/schedule', headers: { 'x-api-key': other }, payload: { cron: '0 3 * * *', scan: SCAN } })).statusCode, 201, 'another key has its own allowance')
      t.equal((await app.inject({ method: 'DELETE', url: `/app/schedule/${ids[0]}`, headers: auth })).statusCode, 204)
      t.equal((await app.inject({ method: 'POST', url: '/app/schedule', headers: auth, payload: { cron: '0 3 * * *', scan: SCAN } })).statusCode, 201, 'one deleted, one more may be made')

      // A schedule stored with an expression that costs the most to search (as one stored before the checks would be):
      // reading it shows the stored next due time, and a list of fifty such costs no search at all.
      const stored = (await app.store.getSchedule(ids[1]))!
      t.ok(typeof stored.nextRunAt === 'string', 'the next due time is stored with the schedule')
      for (let i = 0; i < 50; i++) await app.store.createSchedule({ ...stored, id: `costly-${i}`, cron: '0 0 * 2 1#5', nextRunAt: null, createdBy: 'someone-else' })
      const before = process.cpuUsage()
      const list = await app.inject({ url: '/app/schedule?limit=100', headers: auth })
      const used = process.cpuUsage(before)
      t.equal(list.statusCode, 200)
      t.equal(list.json().total, 54)
      t.ok((used.user + used.system) / 1000 < 500, `GET /app/schedule of 54 took ${Math.round((used.user + used.system) / 1000)} ms of CPU (50 searches took seconds)`)
      t.ok(list.json().items.every((s: Json) => s.id.startsWith('costly-') ? s.nextRunAt === null : typeof s.nextRunAt === 'string'))
    })
  }
})
