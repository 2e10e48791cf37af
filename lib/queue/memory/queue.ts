// In-process priority queue for the embedded default: FIFO within a priority, higher priority first.
import { DeferJobError, type JobHandler, type ProcessOptions, type QueueCounts, type QueueJob, type ScanQueue } from '../types'

export class MemoryQueue implements ScanQueue {
  readonly kind = 'memory' as const
  // A job lost with its process is lost with the whole queue: there is nobody left to retry it.
  readonly attempts = 1
  private readonly buckets = new Map<number, QueueJob[]>()
  private readonly seen = new Set<string>()
  private readonly done = { completed: 0, failed: 0 }
  private active = 0
  private handler: JobHandler | null = null
  private concurrency = 1
  private readonly controllers = new Map<string, AbortController>()
  private closed = false
  private idleWaiters: (() => void)[] = []

  async add<T>(id: string, data: T, priority: number): Promise<void> {
    if (this.closed) throw new Error('queue is closed')
    if (this.seen.has(id)) return
    this.seen.add(id)
    const bucket = this.buckets.get(priority) ?? []
    bucket.push({ id, data, priority, attemptsMade: 0 })
    this.buckets.set(priority, bucket)
    this.pump()
  }

  async counts (): Promise<QueueCounts> {
    let waiting = 0
    for (const b of this.buckets.values()) waiting += b.length
    return { waiting, active: this.active, ...this.done }
  }

  async job (id: string): Promise<{ state: string, data: unknown } | null> {
    // Jobs are not kept once run here: a job seen is reported as done or waiting.
    if (!this.seen.has(id)) return null
    for (const b of this.buckets.values()) {
      const waiting = b.find((j) => j.id === id)
      if (waiting !== undefined) return { state: 'waiting', data: waiting.data }
    }
    return { state: this.controllers.has(id) ? 'active' : 'completed', data: null }
  }

  async ping (): Promise<void> {}

  async workers (): Promise<number> {
    return this.handler === null ? 0 : 1
  }

  /** Start processing in this process (the embedded default's worker); locks and final failures mean nothing here. */
  async process<T>(handler: JobHandler<T>, opts: Pick<ProcessOptions, 'concurrency'>): Promise<void> {
    this.handler = handler as JobHandler
    this.concurrency = opts.concurrency
    this.pump()
  }

  /** Abort a running job's signal (cancellation). */
  abort (id: string): boolean {
    const c = this.controllers.get(id)
    if (!c) return false
    c.abort(new Error('cancelled'))
    return true
  }

  async close (): Promise<void> {
    this.closed = true
    this.handler = null
    for (const c of this.controllers.values()) c.abort(new Error('shutting down'))
    if (this.active > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve))
  }

  private next (): QueueJob | undefined {
    const priorities = [...this.buckets.keys()].sort((a, b) => b - a)
    for (const p of priorities) {
      const job = this.buckets.get(p)?.shift()
      if (job) return job
    }
    return undefined
  }

  private pump (): void {
    while (this.handler && this.active < this.concurrency) {
      const job = this.next()
      if (!job) return
      this.run(job, this.handler)
    }
  }

  private run (job: QueueJob, handler: JobHandler): void {
    this.active++
    const controller = new AbortController()
    this.controllers.set(job.id, controller)
    let deferred = false
    handler(job, controller.signal)
      .then(() => { this.done.completed++ }, (err) => {
        if (err instanceof DeferJobError && !this.closed) {
          // Put off without using an attempt, as on BullMQ.
          deferred = true
          job.deferredSince = err.since
          setTimeout(() => {
            if (this.closed) return
            const bucket = this.buckets.get(job.priority) ?? []
            bucket.push(job)
            this.buckets.set(job.priority, bucket)
            this.pump()
          }, err.delayMs).unref()
          return
        }
        this.done.failed++
      })
      .finally(() => {
        // Counted once the attempt is over, as BullMQ does: a handler's first attempt sees 0.
        if (!deferred) job.attemptsMade++
        this.controllers.delete(job.id)
        this.active--
        if (this.active === 0) for (const w of this.idleWaiters.splice(0)) w()
        this.pump()
      })
  }
}
