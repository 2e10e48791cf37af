import { test } from 'tap'
import { MemoryQueue } from '../../../lib/queue/memory/queue'
import { toQueuePriority } from '../../../lib/queue/types'
import { backends, openBackendsIn } from '../../helper'

test('API priority maps to BullMQ priority so that 5 is served first', async (t) => {
  t.same([1, 2, 3, 4, 5].map(toQueuePriority), [5, 4, 3, 2, 1])
})

test('the in-process queue: higher priority first, FIFO within one, ids added once', async (t) => {
  const q = new MemoryQueue()
  t.teardown(() => q.close())
  await q.add('a1', {}, 1)
  await q.add('c3', {}, 3)
  await q.add('b5', {}, 5)
  await q.add('d3', {}, 3)
  await q.add('c3', {}, 3)
  t.same(await q.counts(), { waiting: 4, active: 0, completed: 0, failed: 0 })
  const order: string[] = []
  await new Promise<void>((resolve) => q.process(async (job) => { order.push(job.id); if (order.length === 4) resolve() }, { concurrency: 1 }))
  t.same(order, ['b5', 'c3', 'd3', 'a1'])
})

test('the in-process queue: concurrency bound, failures counted, abort reaches the job', async (t) => {
  const q = new MemoryQueue()
  let running = 0
  let peak = 0
  let aborted = false
  q.process(async (job, signal) => {
    running++
    peak = Math.max(peak, running)
    if (job.id === 'long') {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => { aborted = true; resolve() }))
    } else {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    running--
    if (job.id === 'bad') throw new Error('boom')
  }, { concurrency: 2 })
  await q.add('long', {}, 3)
  for (const id of ['x', 'y', 'bad']) await q.add(id, {}, 3)
  await new Promise((resolve) => setTimeout(resolve, 150))
  t.equal(peak, 2, 'never more than 2 at once')
  t.ok(q.abort('long'))
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.ok(aborted)
  t.match(await q.counts(), { completed: 3, failed: 1, active: 0 })
  await q.close()
})

test('queue contract, on every backend', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { queue } = await openBackendsIn(t, backend)
      await queue.ping()
      t.ok(queue.attempts >= 1, 'a job gets at least one attempt')
      t.equal(await queue.workers(), 0, 'nobody takes jobs before process()')
      await queue.add('low', { n: 1 }, 1)
      await queue.add('mid', { n: 3 }, 3)
      await queue.add('urgent', { n: 5 }, 5)
      await queue.add('mid-2', { n: 3 }, 3)
      await queue.add('mid', { n: 3 }, 3)
      t.match(await queue.counts(), { waiting: 4, active: 0, failed: 0 }, 'an id added twice is queued once')

      const seen: { id: string, priority: number, data: unknown }[] = []
      await new Promise<void>((resolve) => {
        void queue.process(async (job) => {
          seen.push({ id: job.id, priority: job.priority, data: job.data })
          if (seen.length === 4) resolve()
        }, { concurrency: 1, lockDurationMs: 5000 })
      })
      t.same(seen.map((j) => j.id), ['urgent', 'mid', 'mid-2', 'low'], 'most urgent first, in order of arrival within a priority')
      t.same(seen.map((j) => j.priority), [5, 3, 3, 1], 'each job keeps the API priority it was added with')
      t.match(seen[0].data, { n: 5 })
      t.equal(await queue.workers(), 1, 'this process now takes jobs')
    })
  }
})
