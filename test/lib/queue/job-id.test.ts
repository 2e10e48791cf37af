// Every scan id the API accepts must become a job id BullMQ takes, distinct from every other scan's.
import { test } from 'tap'
import { jobIdFor } from '../../../lib/queue/redis/queue'
import { backends, openBackendsIn } from '../../helper'

// Ids the schema allows (^[A-Za-z0-9._:-]+$) that BullMQ treats specially: integers, negative integers, ':'.
const AWKWARD = ['-42', '42', '0', '-0', '007', '1e3', '-1', '9007199254740993', 'a:b', 'a:b:c', ':', '-', '.', '~x', 'NaN', 'scan-1']

/** BullMQ's own check (Job.validateOptions), restated so the test fails if jobIdFor lets one through. */
function bullRefuses (jobId: string): boolean {
  return `${parseInt(jobId, 10)}` === jobId || (jobId.includes(':') && jobId.split(':').length !== 3)
}

test('jobIdFor maps every id to an acceptable, distinct job id', async (t) => {
  const ids = AWKWARD.map(jobIdFor)
  for (const [i, id] of ids.entries()) t.notOk(bullRefuses(id), `${AWKWARD[i]} → ${id}`)
  t.equal(new Set(ids).size, AWKWARD.length, 'no two scan ids share a job id')
})

test('scans with awkward ids are queued on every backend', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const b = await openBackendsIn(t, backend)
      for (const id of AWKWARD) await b.queue.add(id, { scanId: id }, 3)
      const seen: string[] = []
      await new Promise<void>((resolve) => {
        void b.queue.process(async (job) => {
          seen.push(job.id)
          if (seen.length === AWKWARD.length) resolve()
        }, { concurrency: 4, lockDurationMs: 5000 })
      })
      t.same(seen.sort(), [...AWKWARD].sort(), 'each job carries its scan id')
    })
  }
})
