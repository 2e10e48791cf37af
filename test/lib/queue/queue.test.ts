import { test } from 'tap'
import { MemoryQueue } from '../../../lib/queue/memory'
import { toQueuePriority } from '../../../lib/queue/types'

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
  await new Promise<void>((resolve) => q.process(async (job) => { order.push(job.id); if (order.length === 4) resolve() }, 1))
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
  }, 2)
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
