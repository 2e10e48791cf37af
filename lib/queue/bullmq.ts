// BullMQ-backed scan queue: the distributed engine (priorities, retries, stalled-job recovery).
import { Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import { toQueuePriority, type QueueCounts, type ScanQueue } from './types'

export const SCAN_QUEUE_NAME = 'scans'

export class BullQueue implements ScanQueue {
  readonly kind = 'bullmq' as const
  readonly queue: Queue

  /** The connection is the caller's to close. */
  constructor (private readonly connection: Redis, prefix: string, name = SCAN_QUEUE_NAME) {
    this.queue = new Queue(name, {
      connection,
      prefix,
      defaultJobOptions: {
        attempts: 3,
        backoff: { type: 'exponential', delay: 2000 },
        removeOnComplete: { age: 7 * 24 * 3600, count: 10000 },
        removeOnFail: { age: 30 * 24 * 3600 }
      }
    })
  }

  async add<T>(id: string, data: T, priority: number): Promise<void> {
    // jobId makes the add idempotent: BullMQ ignores an id it already holds.
    await this.queue.add('scan', data, { jobId: id, priority: toQueuePriority(priority) })
  }

  async counts (): Promise<QueueCounts> {
    const c = await this.queue.getJobCounts('waiting', 'prioritized', 'active', 'completed', 'failed', 'delayed')
    return {
      waiting: (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0),
      active: c.active ?? 0,
      completed: c.completed ?? 0,
      failed: c.failed ?? 0
    }
  }

  async ping (): Promise<void> {
    await this.connection.ping()
  }

  async close (): Promise<void> {
    await this.queue.close()
  }
}
