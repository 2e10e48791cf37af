// The schedule half of the store contract, on both backends: records, and the claim that decides each due time once.
import { test } from 'tap'
import type { ScanRecord, ScheduleRecord } from '../../../lib/store/types'
import { newScheduleRecord, scheduledScanId } from '../../../lib/schedules'
import { backends, openBackendsIn } from '../../helper'

function scan (id: string, status: ScanRecord['status']): ScanRecord {
  return {
    id, status, targets: [{ value: '10.0.0.1', type: 'single_ip' }], template: 'quick', priority: 3, requestHash: 'h',
    createdAt: new Date().toISOString(), progress: { hostsTotal: 0, hostsDone: 0, portsTotal: 0, portsDone: 0, percent: 0 }, createdBy: 'service'
  }
}

function schedule (name: string, at: number): ScheduleRecord {
  return newScheduleRecord({ name, cron: '* * * * * *', scan: { targets: [{ value: '10.0.0.1', type: 'single_ip' }] } }, 'service', ['10.0.0.0/8'], new Date(at))
}

test('schedule records', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { store } = await openBackendsIn(t, backend)
      const a = schedule('a', 1000)
      const b = schedule('b', 2000)
      await store.createSchedule(a)
      await store.createSchedule(b)
      t.same(await store.getSchedule(a.id), a, 'read back as written')
      t.same((await store.listSchedules({ limit: 10, offset: 0 })).items.map((s) => s.name), ['b', 'a'], 'newest first')
      t.same(await store.listSchedules({ limit: 1, offset: 1 }).then((p) => [p.total, p.items.map((s) => s.name)]), [2, ['a']])
      const changed = await store.updateSchedule(a.id, { enabled: false, cron: '0 * * * *', updatedAt: '2026-01-01T00:00:00.000Z' })
      t.match(changed, { id: a.id, enabled: false, cron: '0 * * * *', name: 'a', updatedAt: '2026-01-01T00:00:00.000Z', keyScope: ['10.0.0.0/8'] })
      t.equal(await store.updateSchedule('nope', { enabled: true, updatedAt: a.updatedAt }), null)
      t.equal(await store.deleteSchedule(a.id), true)
      t.equal(await store.deleteSchedule(a.id), false)
      t.equal(await store.getSchedule(a.id), null)
      t.equal((await store.listSchedules({ limit: 10, offset: 0 })).total, 1)
      // An id with the key separator cannot reach another record's keys.
      const odd = { ...schedule('odd', 3000), id: `${b.id}:runs` }
      await store.createSchedule(odd)
      t.equal((await store.getSchedule(b.id))?.name, 'b')
      t.equal((await store.getSchedule(odd.id))?.name, 'odd')
    })
  }
})

test('each due time is claimed once, and skipped while the last scan is in flight', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { store } = await openBackendsIn(t, backend)
      const s = schedule('s', 1000)
      await store.createSchedule(s)
      const due1 = new Date(10_000)
      const id1 = scheduledScanId(s, due1)

      // Many processes take the same due time at once: one runs it.
      const claims = await Promise.all(Array.from({ length: 8 }, () => store.claimScheduleRun(s.id, due1, id1)))
      t.equal(claims.filter((c) => c.outcome === 'run').length, 1, 'one claim runs')
      t.ok(claims.every((c) => c.outcome === 'run' || c.outcome === 'again'), 'the others see the same claim again')
      t.match(await store.getSchedule(s.id), { runs: 1, lastRun: { dueAt: due1.toISOString(), scanId: id1 } })

      // The scan is still queued when the next due time comes: skipped and recorded.
      await store.createScan(scan(id1, 'queued'))
      const due2 = new Date(11_000)
      const skipped = await store.claimScheduleRun(s.id, due2, scheduledScanId(s, due2))
      t.match(skipped, { outcome: 'skipped', inFlight: id1 })
      t.equal((await store.claimScheduleRun(s.id, due2, scheduledScanId(s, due2))).outcome, 'stale', 'a skipped due time stays skipped')
      t.equal((await store.claimScheduleRun(s.id, due1, id1)).outcome, 'again', 'a retried claim of the last run is seen as such')
      t.match(await store.getSchedule(s.id), { runs: 1, skippedTotal: 1, skipped: [{ dueAt: due2.toISOString(), inFlight: id1 }] })

      // Once it ended, the next due time runs.
      await store.updateScan(id1, { status: 'completed', finishedAt: new Date().toISOString() })
      const due3 = new Date(12_000)
      t.equal((await store.claimScheduleRun(s.id, due3, scheduledScanId(s, due3))).outcome, 'run')
      t.equal((await store.claimScheduleRun(s.id, new Date(11_500), 'x')).outcome, 'stale', 'an older due time never runs after a newer one')

      await store.updateSchedule(s.id, { enabled: false, updatedAt: s.updatedAt })
      t.equal((await store.claimScheduleRun(s.id, new Date(13_000), 'y')).outcome, 'disabled')
      await store.deleteSchedule(s.id)
      t.equal((await store.claimScheduleRun(s.id, new Date(14_000), 'z')).outcome, 'gone')
    })
  }
})
