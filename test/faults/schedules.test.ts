// A schedule's due times while no worker ran (issue 29, item 7). The timer (BullMQ's job scheduler) keeps one job
// per schedule: when a worker comes back it takes that job, for the first due time it missed, late, and no job was
// ever made for the due times after it. The first runs late, once; each later one is recorded skipped, reason
// no_worker, rather than dropped without a trace.
import { test } from 'tap'
import { backends, openBackendsIn } from '../helper'
import { createScheduleRunner, newScheduleRecord, scheduledScanId } from '../../lib/schedules'

test('due times missed while no worker ran: the first runs late once, the later ones are recorded skipped', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const b = await openBackendsIn(t, backend)
      const now = Date.now()
      const minute = 60_000
      // Every minute; made an hour ago. The worker went away 10 minutes ago, before the due time then.
      const schedule = newScheduleRecord({ name: 'every minute', cron: '* * * * *', scan: { targets: [{ value: '127.0.0.2', type: 'single_ip' }], options: { template: 'discovery', ports: '9' } } }, 'service', [], new Date(now - 60 * minute))
      await b.store.createSchedule(schedule)
      const firstMissed = new Date(Math.floor((now - 10 * minute) / minute) * minute)
      const warnings: string[] = []
      const run = createScheduleRunner({ store: b.store, queue: b.queue, timer: b.scheduler, log: { info: () => {}, warn: (_o, msg) => warnings.push(msg) } })
      await run(schedule.id, firstMissed)

      const after = await b.store.getSchedule(schedule.id)
      t.equal(after?.runs, 1, 'the due time the timer kept ran, late, once')
      t.equal(after?.lastRun?.scanId, scheduledScanId(schedule, firstMissed))
      t.ok(await b.store.getScan(scheduledScanId(schedule, firstMissed)), 'its scan exists')
      const missed = (after?.skipped ?? []).filter((s) => s.reason === 'no_worker')
      t.ok(missed.length >= 7 && missed.length <= 9, `the later due times up to a minute ago are recorded skipped, no worker (${missed.length})`)
      t.equal(after?.skippedTotal, missed.length)
      t.ok(missed.every((s) => Date.parse(s.dueAt) > firstMissed.getTime() && Date.parse(s.dueAt) < now), 'each between the late run and now')
      t.equal(new Set(missed.map((s) => s.dueAt)).size, missed.length, 'each once')
      t.ok(warnings.some((w) => /missed while no worker ran/.test(w)), 'and it is said in the log')

      // The job the timer makes next (for a due time already recorded) starts nothing more.
      await run(schedule.id, new Date(Date.parse(missed[0].dueAt)))
      t.equal((await b.store.getSchedule(schedule.id))?.runs, 1, 'a missed due time taken later is not run')
    })
  }
})
