// The scan queue interface: BullMQ on Redis, or an in-process priority queue on the embedded default.

export interface QueueJob<T = unknown> {
  id: string
  data: T
  /** API priority 1..5, 5 the most urgent. */
  priority: number
  attemptsMade: number
}

export interface QueueCounts {
  waiting: number
  active: number
  completed: number
  failed: number
}

export type JobHandler<T = unknown> = (job: QueueJob<T>, signal: AbortSignal) => Promise<void>

export interface ScanQueue {
  readonly kind: 'bullmq' | 'memory'
  /** Add a job; adding an id that was added before changes nothing. */
  add<T>(id: string, data: T, priority: number): Promise<void>
  counts(): Promise<QueueCounts>
  ping(): Promise<void>
  close(): Promise<void>
}

/** Map the API's priority (5 most urgent) to BullMQ's (1 served first). */
export function toQueuePriority (priority: number): number {
  return 6 - priority
}
