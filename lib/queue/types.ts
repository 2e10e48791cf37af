// The scan queue interface: BullMQ on Redis, or an in-process priority queue on the embedded default.
import { DEFAULT_PRIORITY, PRIORITY_MAX, PRIORITY_MIN } from '../vocabulary'

export interface QueueJob<T = unknown> {
  id: string
  data: T
  /** API priority 1..5, 5 the most urgent. */
  priority: number
  attemptsMade: number
  /** When the job was first put off by a DeferJobError (epoch ms); absent while it never was. */
  deferredSince?: number
}

/**
 * Thrown by a job handler that cannot proceed now for a reason outside the job (a dependency's outage): the job runs
 * again after `delayMs` without using one of its attempts. `since` is when it was first put off, kept with the job
 * so that the handler can bound how long it waits.
 */
export class DeferJobError extends Error {
  override readonly name = 'DeferJobError'
  constructor (readonly delayMs: number, readonly since: number, override readonly cause: Error) {
    super(`put off for ${delayMs} ms: ${cause.message}`)
  }
}

export interface QueueCounts {
  waiting: number
  active: number
  completed: number
  failed: number
}

export type JobHandler<T = unknown> = (job: QueueJob<T>, signal: AbortSignal) => Promise<void>

/** How a process runs the queue's jobs. */
export interface ProcessOptions {
  /** Jobs this process runs at once. */
  concurrency: number
  /** How long a job's lock lasts without renewal: a job whose worker died is taken over after about this long. */
  lockDurationMs: number
  /** Called once when a job failed for good (no attempt left), in whichever process noticed it. */
  onFinalFailure?: (logicalId: string, data: unknown, reason: string) => Promise<void>
}

export interface ScanQueue {
  readonly kind: 'bullmq' | 'memory'
  /** Attempts a job gets before its failure is final. */
  readonly attempts: number
  /** Add a job; adding an id that was added before changes nothing. */
  add<T>(id: string, data: T, priority: number): Promise<void>
  counts(): Promise<QueueCounts>
  /** A job's state (null when the queue holds no job of that id), with its data and, once failed, why. */
  job(id: string): Promise<{ state: string, data: unknown, failedReason?: string } | null>
  ping(): Promise<void>
  /** How many processes take this queue's jobs now. */
  workers(): Promise<number>
  /** Run jobs in this process from now on, until close. */
  process<T>(handler: JobHandler<T>, opts: ProcessOptions): Promise<void>
  /** Stop taking jobs, let the running ones end (in process: abort them), and let go of the queue. */
  close(): Promise<void>
}

/** Map the API's priority (5 most urgent) to BullMQ's (1 served first). */
export function toQueuePriority (priority: number): number {
  return PRIORITY_MAX + PRIORITY_MIN - priority
}

/** The API's priority of a BullMQ job (the inverse of toQueuePriority). */
export function fromQueuePriority (queuePriority: number | undefined): number {
  return queuePriority === undefined ? DEFAULT_PRIORITY : PRIORITY_MAX + PRIORITY_MIN - queuePriority
}

/** Called at each due time of a schedule, in one process of the service; `dueAt` is the time it was due. */
export type DueHandler = (scheduleId: string, dueAt: Date) => Promise<void>

/**
 * Fires schedules at their cron times: BullMQ job schedulers on Redis (each due time is one job, taken by one of
 * the workers, kept across restarts), timers in process on the embedded default.
 */
export interface ScheduleTimer {
  readonly kind: 'bullmq' | 'memory'
  /** Fire `id` at every due time of `cron` read in `timezone`, from now on; replaces what `id` had. */
  upsert(id: string, cron: string, timezone: string): Promise<void>
  /** Stop firing `id` (no error when it was not registered). */
  remove(id: string): Promise<void>
  /** The ids registered now. */
  ids(): Promise<string[]>
  /** Run due times in this process from now on, until close. */
  process(handler: DueHandler): Promise<void>
  close(): Promise<void>
}

/** One event for one webhook: the body is built once, so every attempt sends (and signs) the same bytes. */
export interface DeliveryJobData {
  webhookId: string
  event: string
  eventId: string
  body: string
  /** Sent again by POST /admin/webhook/{id}/deliveries/{delivery}/retry. */
  retry?: boolean
}

/** Runs one attempt (1-based); throws to have it retried (after a backoff) unless `final`, or a PermanentJobError to stop. */
export type DeliveryHandler = (job: DeliveryJobData, attempt: number, final: boolean) => Promise<void>

/** A failure no retry can mend (e.g. the address is refused): the job ends at once. */
export class PermanentJobError extends Error {
  override readonly name = 'PermanentJobError'
}

/**
 * Webhook deliveries: a BullMQ queue with attempts and exponential backoff on Redis (a delivery outlives the
 * process that queued it), in-process timers on the embedded default.
 */
export interface DeliveryQueue {
  readonly kind: 'bullmq' | 'memory'
  /** Queue a delivery; an id queued before changes nothing (an event is delivered once per webhook). */
  add(id: string, job: DeliveryJobData): Promise<void>
  /** Run deliveries in this process from now on, until close. */
  process(handler: DeliveryHandler): Promise<void>
  close(): Promise<void>
}

export interface RetryOptions {
  attempts: number
  /** Wait before the second attempt; doubled for each later one. */
  backoffMs: number
}
