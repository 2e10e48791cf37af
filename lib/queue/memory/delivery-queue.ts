// Webhook deliveries on the embedded default: attempts in this process, the retries on timers with the same
// exponential backoff BullMQ uses on Redis. Nothing survives a restart, as with the rest of memory.
import { PermanentJobError, type DeliveryHandler, type DeliveryJobData, type DeliveryQueue, type RetryOptions } from '../types'

export class MemoryDeliveryQueue implements DeliveryQueue {
  readonly kind = 'memory' as const
  private readonly seen = new Set<string>()
  private readonly waiting: DeliveryJobData[] = []
  private readonly timers = new Set<NodeJS.Timeout>()
  private handler: DeliveryHandler | null = null
  private closed = false

  constructor (private readonly retry: RetryOptions) {}

  async add (id: string, job: DeliveryJobData): Promise<void> {
    if (this.closed) throw new Error('queue is closed')
    if (this.seen.has(id)) return
    this.seen.add(id)
    if (this.handler === null) this.waiting.push(job)
    else this.attempt(job, 1)
  }

  async process (handler: DeliveryHandler): Promise<void> {
    this.handler = handler
    for (const job of this.waiting.splice(0)) this.attempt(job, 1)
  }

  async close (): Promise<void> {
    this.closed = true
    this.handler = null
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
  }

  private attempt (job: DeliveryJobData, n: number): void {
    const handler = this.handler
    if (handler === null) return
    const final = n >= this.retry.attempts
    handler(job, n, final).catch((err) => {
      if (final || err instanceof PermanentJobError || this.closed) return
      const t = setTimeout(() => {
        this.timers.delete(t)
        this.attempt(job, n + 1)
      }, this.retry.backoffMs * 2 ** (n - 1))
      this.timers.add(t)
    })
  }
}
