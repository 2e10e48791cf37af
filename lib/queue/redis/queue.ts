// BullMQ-backed scan queue: the distributed engine (priorities, retries, stalled-job recovery).
import { DelayedError, Job, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq'
import type { Redis } from 'ioredis'
import { DeferJobError, fromQueuePriority, toQueuePriority, type JobHandler, type ProcessOptions, type QueueCounts, type ScanQueue } from '../types'

export const SCAN_QUEUE_NAME = 'scans'
export const JOB_ATTEMPTS = 3

/**
 * BullMQ refuses job ids that contain ':' or that read back unchanged through parseInt (`42`, `-42`, even
 * `NaN`); scan ids may be any of these. Such ids are encoded behind '~', a character scan ids cannot contain,
 * so no two logical ids share a job id.
 */
export function jobIdFor (id: string): string {
  const refused = `${parseInt(id, 10)}` === id || /^-?\d+$/.test(id) || id.includes(':')
  return refused ? '~' + Buffer.from(id).toString('base64url') : id
}

/** A job that must not be retried (bad input, scan gone): fail at once. */
export { UnrecoverableError }

interface Running {
  worker: Worker
  events: QueueEvents
}

export class BullQueue implements ScanQueue {
  readonly kind = 'bullmq' as const
  readonly attempts = JOB_ATTEMPTS
  readonly queue: Queue
  /**
   * Told of the 'error' events of this queue's BullMQ objects (a lost connection, mostly). Without a listener
   * BullMQ writes each one to stderr: a line per connection and reconnect attempt during an outage.
   */
  onError: (err: Error) => void = () => {}
  private running: Running | null = null

  /**
   * `connection` serves the queue's own commands; `openBlocking` opens a connection for a worker's blocking
   * reads (`maxRetriesPerRequest: null`, as BullMQ requires). Both are the caller's to close, after close().
   */
  constructor (private readonly connection: Redis, private readonly prefix: string, private readonly openBlocking: () => Redis, private readonly name = SCAN_QUEUE_NAME) {
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
    this.queue.on('error', (err) => this.onError(err))
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

  async job (id: string): Promise<{ state: string, data: unknown, failedReason?: string } | null> {
    const job = await this.queue.getJob(jobIdFor(id))
    if (job === undefined || job === null) return null
    const state = await job.getState()
    return { state, data: job.data, ...(job.failedReason ? { failedReason: job.failedReason } : {}) }
  }

  async ping (): Promise<void> {
    await this.connection.ping()
  }

  async workers (): Promise<number> {
    return (await this.queue.getWorkers()).length
  }

  async process<T>(handler: JobHandler<T>, opts: ProcessOptions): Promise<void> {
    if (this.running !== null) throw new Error('this queue already runs jobs in this process')
    const worker = new Worker(this.name, async (job: Job, token?: string, signal?: AbortSignal) => {
      const data = job.data as T & { logicalId?: string, deferredSince?: number }
      const ac = new AbortController()
      signal?.addEventListener('abort', () => ac.abort(signal.reason), { once: true })
      try {
        await handler({ id: data.logicalId ?? String(job.id), data, priority: fromQueuePriority(job.opts.priority), attemptsMade: job.attemptsMade, deferredSince: data.deferredSince }, ac.signal)
      } catch (err) {
        if (!(err instanceof DeferJobError)) throw err
        try {
          if (data.deferredSince !== err.since) await job.updateData({ ...data, deferredSince: err.since })
          await job.moveToDelayed(Date.now() + err.delayMs, token)
        } catch {
          // Redis is out too: an ordinary failure, retried (or taken over once the lock expires) as before.
          throw err.cause
        }
        // BullMQ's signal that the job was moved by the processor: no attempt is used.
        throw new DelayedError()
      }
    }, {
      connection: this.openBlocking(),
      prefix: this.prefix,
      concurrency: opts.concurrency,
      lockDuration: opts.lockDurationMs,
      stalledInterval: Math.max(1000, Math.floor(opts.lockDurationMs / 2)),
      maxStalledCount: 2
    })
    // Final failures are seen through queue events so that a job failed by the stalled-job checker
    // (its worker died) is handled too.
    const events = new QueueEvents(this.name, { connection: this.openBlocking(), prefix: this.prefix })
    worker.on('error', (err) => this.onError(err))
    events.on('error', (err) => this.onError(err))
    const onFinalFailure = opts.onFinalFailure
    if (onFinalFailure !== undefined) {
      events.on('failed', ({ jobId, failedReason }) => {
        void (async () => {
          const job = await Job.fromId(worker, jobId).catch(() => undefined)
          if (!job) return
          if (await job.getState() !== 'failed') return
          const data = job.data as { logicalId?: string }
          await onFinalFailure(data.logicalId ?? jobId, job.data, failedReason)
        })().catch(() => {})
      })
    }
    this.running = { worker, events }
  }

  async close (): Promise<void> {
    if (this.running !== null) {
      await this.running.worker.close()
      await this.running.events.close()
      this.running = null
    }
    await this.queue.close()
  }
}
