// Webhook deliveries on Redis: one BullMQ job per event and webhook, with attempts and exponential backoff, taken
// by whichever worker is free; a delivery queued by an API process is sent by a worker.
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq'
import type { Redis } from 'ioredis'
import { PermanentJobError, type DeliveryHandler, type DeliveryJobData, type DeliveryQueue, type RetryOptions } from '../types'
import { jobIdFor } from './queue'

export const DELIVERY_QUEUE_NAME = 'webhooks'

export class BullDeliveryQueue implements DeliveryQueue {
  readonly kind = 'bullmq' as const
  readonly queue: Queue
  /**
   * Told of the 'error' events of this queue's BullMQ objects (a lost connection, mostly). Without a listener
   * BullMQ writes each one to stderr: a line per connection and reconnect attempt during an outage.
   */
  onError: (err: Error) => void = () => {}
  private worker: Worker | null = null

  /** `connection` and the connections `openBlocking` opens are the caller's to close, after close(). */
  constructor (connection: Redis, private readonly prefix: string, private readonly openBlocking: () => Redis, private readonly retry: RetryOptions, private readonly name = DELIVERY_QUEUE_NAME) {
    this.queue = new Queue(name, {
      connection,
      prefix,
      defaultJobOptions: {
        attempts: retry.attempts,
        backoff: { type: 'exponential', delay: retry.backoffMs },
        removeOnComplete: { age: 24 * 3600, count: 10000 },
        removeOnFail: { age: 7 * 24 * 3600, count: 10000 }
      }
    })
    this.queue.on('error', (err) => this.onError(err))
  }

  async add (id: string, job: DeliveryJobData): Promise<void> {
    await this.queue.add('deliver', job, { jobId: jobIdFor(id) })
  }

  async process (handler: DeliveryHandler): Promise<void> {
    if (this.worker !== null) throw new Error('deliveries already run in this process')
    this.worker = new Worker(this.name, async (job: Job<DeliveryJobData>) => {
      const attempt = job.attemptsMade + 1
      try {
        await handler(job.data, attempt, attempt >= this.retry.attempts)
      } catch (err) {
        if (err instanceof PermanentJobError) throw new UnrecoverableError(err.message)
        throw err
      }
    }, { connection: this.openBlocking(), prefix: this.prefix, concurrency: 8 })
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
