// Schedules and tenancy (issue 22 §2), on every backend, each due time run through the schedule runner as the timer
// runs it: a scoped operator cannot steer another key's schedule at a host outside its scope; a client cannot take a
// run's scan id first; a key's runs follow its scope as it is at each due time, and stop when it shares no address
// with what the schedule was given or when the key is revoked.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import { write } from '../support/results'
import { createScheduleRunner } from '../../lib/schedules'
import type { FastifyInstance } from 'fastify'

const admin = { 'x-api-key': SERVICE_KEY }
type Json = Record<string, any>
const silent = { info: () => {}, warn: () => {} }

async function key (app: FastifyInstance, label: string, scope: string[], role = 'operator'): Promise<{ id: string, h: Record<string, string> }> {
  const k = (await app.inject({ method: 'POST', url: '/admin/keys', headers: admin, payload: { label, role, scope } })).json()
  return { id: k.id, h: { 'x-api-key': k.key } }
}

function runner (app: FastifyInstance): (id: string, due: Date) => Promise<void> {
  return createScheduleRunner({ store: app.store, queue: app.scanQueue, timer: app.backends.scheduler, log: silent })
}

async function scansOf (app: FastifyInstance, scheduleId: string): Promise<Json[]> {
  return (await app.store.listScans({ limit: 500, offset: 0 })).items.filter((s) => s.scheduleId === scheduleId) as Json[]
}

test('a scoped operator can neither tag a host outside its scope nor re-enable another key\'s schedule', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      await app.results.recordHost(write({ address: '10.62.0.5', at: Date.now(), scanId: 'seen' }))
      await app.results.recordHost(write({ address: '10.61.0.5', at: Date.now(), scanId: 'seen' }))
      const op = await key(app, 'team', ['10.61.0.0/16'])
      // The admin's schedule follows a tag; it is off.
      const prod = (await app.inject({ method: 'POST', url: '/app/schedule', headers: admin, payload: { cron: '0 3 * * *', enabled: false, scan: { targetTags: ['prod'] } } })).json()
      const inside = (await app.inject({ method: 'POST', url: '/app/schedule', headers: admin, payload: { cron: '0 3 * * *', enabled: false, scan: { targets: [{ value: '10.61.0.5', type: 'single_ip' }] } } })).json()

      const tag = await app.inject({ method: 'PUT', url: '/host/10.62.0.5/tags', headers: op.h, payload: { tags: ['prod'] } })
      t.equal(tag.statusCode, 403, 'tagging a host outside its scope is refused')
      t.match(tag.json(), { error: /10\.62\.0\.5 is outside this key's scope/, code: 'VULNSCAN_AUTH_OUTSIDE_SCOPE' })
      t.equal((await app.inject({ method: 'PATCH', url: '/host/10.62.0.5/tags', headers: op.h, payload: { add: ['prod'] } })).statusCode, 403)
      t.same((await app.results.getHost('10.62.0.5'))?.tags, [], 'the host is untouched')

      const enable = await app.inject({ method: 'PATCH', url: `/app/schedule/${String(prod.id)}`, headers: op.h, payload: { enabled: true } })
      t.equal(enable.statusCode, 404, 'a schedule that may reach outside its scope is out of its sight')
      const other = await app.inject({ method: 'PATCH', url: `/app/schedule/${String(inside.id)}`, headers: op.h, payload: { enabled: true } })
      t.equal(other.statusCode, 403, 'one inside its scope it sees, but may not change: another key made it')
      t.match(other.json(), { code: 'VULNSCAN_AUTH_NOT_OWNER' })
      t.equal((await app.inject({ method: 'DELETE', url: `/app/schedule/${String(inside.id)}`, headers: op.h })).statusCode, 403)
      t.equal((await app.store.getSchedule(prod.id))?.enabled, false, 'the admin\'s schedule stays off')
    })
  }
})

test('a run\'s scan id cannot be taken first: the namespace is reserved and the id is keyed', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const attacker = await key(app, 'attacker', [])
      const s = (await app.inject({ method: 'POST', url: '/app/schedule', headers: admin, payload: { cron: '0 3 * * *', scan: { targets: [{ value: '10.61.0.9', type: 'single_ip' }] } } })).json()
      const due = new Date(s.nextRunAt as string)
      // What the abuse pass did: the run id was <schedule id>.<due ms>, read off nextRunAt.
      const taken = await app.inject({ method: 'POST', url: '/app/scan', headers: attacker.h, payload: { id: `${String(s.id)}.${due.getTime()}`, targets: [{ value: '10.62.0.66', type: 'single_ip' }] } })
      t.equal(taken.statusCode, 200, 'an id of the old form is an ordinary id now')
      const reserved = await app.inject({ method: 'POST', url: '/app/scan', headers: attacker.h, payload: { id: `schedule.${String(s.id)}.${due.getTime()}.x`, targets: [{ value: '10.62.0.66', type: 'single_ip' }] } })
      t.equal(reserved.statusCode, 400, 'the namespace of run ids is refused')
      t.match(reserved.json(), { error: /reserved for the runs of schedules/ })

      await runner(app)(s.id, due)
      const after = await app.store.getSchedule(s.id)
      t.equal(after?.runs, 1, 'the due time ran')
      const run = await app.store.getScan(after!.lastRun!.scanId)
      t.match(run, { scheduleId: s.id, createdBy: 'service', targets: [{ value: '10.61.0.9', type: 'single_ip' }] }, 'with a scan of its own, not the attacker\'s')
      t.match(run?.id, /^schedule\./)
      t.notOk(String(run?.id).includes(String(due.getTime())) && String(run?.id).endsWith(String(due.getTime())), 'the id does not end in the due time alone')
      const again = (await app.store.getScan(after!.lastRun!.scanId))!
      t.equal(again.id, run?.id, 'the same id in every process: a retried due time finds its scan')
      await runner(app)(s.id, due)
      t.equal((await scansOf(app, s.id)).length, 1, 'a retried due time starts nothing more')
    })
  }
})

test('runs follow the owner\'s scope at each due time: narrowed, disjoint, revoked', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const op = await key(app, 'team', ['10.61.0.0/16'])
      const s = (await app.inject({ method: 'POST', url: '/app/schedule', headers: op.h, payload: { cron: '0 3 * * *', scan: { targets: [{ value: '10.61.0.0/28', type: 'cidr' }] } } })).json()
      t.same((await app.store.getSchedule(s.id))?.keyScope, ['10.61.0.0/16'], 'given the scope of its maker')
      const run = runner(app)
      const due = (i: number): Date => new Date(Date.parse(s.nextRunAt as string) + i * 86_400_000)
      const finish = async (): Promise<void> => {
        for (const x of await scansOf(app, s.id)) await app.store.updateScan(x.id, { status: 'completed', finishedAt: new Date().toISOString() })
      }

      await run(s.id, due(0))
      t.same((await scansOf(app, s.id)).map((x) => x.keyScope), [['10.61.0.0/16']], 'a first run under the scope it was given')
      await finish()

      t.equal((await app.inject({ method: 'PATCH', url: `/admin/keys/${op.id}`, headers: admin, payload: { scope: ['10.61.0.0/30', '10.99.0.0/16'] } })).statusCode, 200)
      await run(s.id, due(1))
      const second = (await scansOf(app, s.id)).find((x) => x.id !== undefined && x.createdAt !== undefined && (x.keyScope as string[]).includes('10.61.0.0/30'))
      t.ok(second !== undefined, 'after the key is narrowed, the next run is held to the narrower scope')
      t.same(second?.keyScope, ['10.61.0.0/30'], 'what it was given and what its owner may scan now, both')
      await finish()

      t.equal((await app.inject({ method: 'PATCH', url: `/admin/keys/${op.id}`, headers: admin, payload: { scope: ['10.99.0.0/16'] } })).statusCode, 200)
      await run(s.id, due(2))
      t.equal((await scansOf(app, s.id)).length, 2, 'a key that now shares no address with the schedule starts nothing')
      t.ok((await app.store.getSchedule(s.id))?.nextRunAt !== undefined, 'the refused due time still moves the next one on')

      t.equal((await app.inject({ method: 'PATCH', url: `/admin/keys/${op.id}`, headers: admin, payload: { scope: [] } })).statusCode, 200)
      await run(s.id, due(3))
      t.same((await scansOf(app, s.id)).map((x) => x.keyScope).filter((k) => k !== undefined).at(-1), ['10.61.0.0/16'], 'widened again: no wider than it was given')
      await finish()

      t.equal((await app.inject({ method: 'DELETE', url: `/admin/keys/${op.id}`, headers: admin })).statusCode, 204)
      await run(s.id, due(4))
      t.equal((await scansOf(app, s.id)).length, 3, 'revoked: no run starts')
    })
  }
})
