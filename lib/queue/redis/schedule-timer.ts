// Schedules on Redis: one BullMQ job scheduler per schedule. BullMQ keeps the scheduler in Redis (it survives
// restarts) and adds one job per due time, with an id made from that time, so a due time becomes exactly one job
// whichever worker takes it; the store then decides, once, what the due time does (lib/schedules.ts).
import { Queue, Worker, type Job } from 'bullmq'
import type { Redis } from 'ioredis'
import type { DueHandler, ScheduleTimer } from '../types'

export const SCHEDULE_QUEUE_NAME = 'schedules'

interface DueJobData { scheduleId: string }

export class BullScheduleTimer implements ScheduleTimer {
  readonly kind = 'bullmq' as const
  readonly queue: Queue
  /**
   * Told of the 'error' events of this queue's BullMQ objects (a lost connection, mostly). Without a listener
   * BullMQ writes each one to stderr: a line per connection and reconnect attempt during an outage.
   */
  onError: (err: Error) => void = () => {}
  private worker: Worker | null = null

  /** `connection` and the connections `openBlocking` opens are the caller's to close, after close(). */
  constructor (connection: Redis, private readonly prefix: string, private readonly openBlocking: () => Redis, private readonly name = SCHEDULE_QUEUE_NAME) {
    this.queue = new Queue(name, { connection, prefix })
    this.queue.on('error', (err) => this.onError(err))
  }

  async upsert (id: string, cron: string, timezone: string): Promise<void> {
    await this.queue.upsertJobScheduler(id, { pattern: cron, tz: timezone }, {
      name: 'due',
      data: { scheduleId: id },
      opts: {
        // A run that failed (the store was down) is tried again; the store makes a retry start nothing twice.
        attempts: 3,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: { count: 1000 },
        removeOnFail: { count: 1000 }
      }
    })
  }

  async remove (id: string): Promise<void> {
    await this.queue.removeJobScheduler(id)
  }

  async ids (): Promise<string[]> {
    const all = await this.queue.getJobSchedulers(0, -1)
    return all.map((s) => s.key)
  }

  async process (handler: DueHandler): Promise<void> {
    if (this.worker !== null) throw new Error('schedules already run in this process')
    this.worker = new Worker(this.name, async (job: Job<DueJobData>) => {
      // prevMillis is the due time BullMQ made this job for; the job's timestamp is when it was added.
      const due = typeof job.opts.prevMillis === 'number' ? job.opts.prevMillis : job.timestamp + (job.opts.delay ?? 0)
      await handler(job.data.scheduleId, new Date(due))
    }, { connection: this.openBlocking(), prefix: this.prefix, concurrency: 4 })
    this.worker.on('error', (err) => this.onError(err))
  }

  async close (): Promise<void> {
    if (this.worker !== null) {
      await this.worker.close()
      this.worker = null
    }
    await this.queue.close()
  }
}
