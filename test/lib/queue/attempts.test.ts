// attemptsMade counts attempts finished before this one, as BullMQ does: the worker logs attemptsMade + 1.
import { test } from 'tap'
import { backends, openBackendsIn } from '../../helper'

test('a first attempt sees attemptsMade 0 on every backend', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const b = await openBackendsIn(t, backend)
      await b.queue.add('first', { scanId: 'first' }, 3)
      const made = await new Promise<number>((resolve) => {
        void b.queue.process(async (job) => { resolve(job.attemptsMade) }, { concurrency: 1, lockDurationMs: 5000 })
      })
      t.equal(made, 0)
    })
  }
})
