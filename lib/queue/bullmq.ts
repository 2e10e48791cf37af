// BullMQ-backed scan queue: the distributed engine (priorities, retries, stalled-job recovery).
import { Job, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq'
import type { Redis } from 'ioredis'
import { toQueuePriority, type JobHandler, type QueueCounts, type ScanQueue } from './types'

export const SCAN_QUEUE_NAME = 'scans'
export const JOB_ATTEMPTS = 3

/**
 * BullMQ refuses job ids that contain ':' or look like integers; scan ids may be either. Such ids are
 * encoded behind '~', a character scan ids cannot contain, so no two logical ids share a job id.
 */
export function jobIdFor (id: string): string {
  return /^\d+$/.test(id) || id.includes(':') ? '~' + Buffer.from(id).toString('base64url') : id
}

/** A job that must not be retried (bad input, scan gone): fail at once. */
export { UnrecoverableError }

export class BullQueue implements ScanQueue {
  readonly kind = 'bullmq' as const
  readonly queue: Queue

  /** The connection is the caller's to close. */
  constructor (private readonly connection: Redis, prefix: string, name = SCAN_QUEUE_NAME) {
    this.queue = new Queue(name, {
      connection,
      prefix,
      defaultJobOptions: {
        attempts: JOB_ATTEMPTS,
        backoff: { type: 'exponential', delay: 2000 },
        removeOnComplete: { age: 7 * 24 * 3600, count: 10000 },
        removeOnFail: { age: 30 * 24 * 3600 }
      }
    })
  }

  async add<T>(id: string, data: T, priority: number): Promise<void> {
    // jobId makes the add idempotent: BullMQ ignores an id it already holds.
    await this.queue.add('scan', { ...data, logicalId: id }, { jobId: jobIdFor(id), priority: toQueuePriority(priority) })
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

export interface BullWorkerOptions {
  concurrency: number
  /** How long a job's lock lasts without renewal: a killed worker's job is taken over after about this long. */
  lockDurationMs: number
  /** Called when a job failed for good (no attempt left), in whichever worker noticed it. */
  onFinalFailure?: (logicalId: string, data: unknown, reason: string) => Promise<void>
}

/**
 * Run `handler` on the scan queue's jobs. The connection is the caller's to close; BullMQ workers need
 * their own with `maxRetriesPerRequest: null`.
 */
export function startBullWorker<T>(connection: Redis, prefix: string, handler: JobHandler<T>, opts: BullWorkerOptions, name = SCAN_QUEUE_NAME): { worker: Worker, events: QueueEvents, close: () => Promise<void> } {
  const worker = new Worker(name, async (job: Job, _token?: string, signal?: AbortSignal) => {
    const data = job.data as T & { logicalId?: string }
    const ac = new AbortController()
    signal?.addEventListener('abort', () => ac.abort(signal.reason), { once: true })
    await handler({ id: data.logicalId ?? String(job.id), data, priority: 6 - (job.opts.priority ?? 3), attemptsMade: job.attemptsMade }, ac.signal)
  }, {
    connection,
    prefix,
    concurrency: opts.concurrency,
    lockDuration: opts.lockDurationMs,
    stalledInterval: Math.max(1000, Math.floor(opts.lockDurationMs / 2)),
    maxStalledCount: 2
  })
  // Final failures are seen through queue events so that a job failed by the stalled-job checker
  // (its worker died) is handled too.
  const eventsConnection = connection.duplicate()
  const events = new QueueEvents(name, { connection: eventsConnection, prefix })
  events.on('failed', ({ jobId, failedReason }) => {
    void (async () => {
      const job = await Job.fromId(worker, jobId).catch(() => undefined)
      if (!job || !opts.onFinalFailure) return
      if (await job.getState() !== 'failed') return
      const data = job.data as { logicalId?: string }
      await opts.onFinalFailure(data.logicalId ?? jobId, job.data, failedReason)
    })().catch(() => {})
  })
  return {
    worker,
    events,
    close: async () => {
      await worker.close()
      await events.close()
      eventsConnection.disconnect()
    }
  }
}
