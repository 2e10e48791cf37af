// The worker set of a process, composed once: scan jobs (with the sweeper that mends scans outages left behind),
// schedules' due times, webhook deliveries and the outbox relay. `npm start` runs it inside the API process
// (plugins/scan-worker.ts), `npm run start:worker` alone (worker.ts); both call startWorkers().
import type { Store } from '../store/types'
import type { ResultsStore } from '../store/results-types'
import type { ScanQueue, ScheduleTimer, DeliveryQueue, DeliveryHandler } from '../queue/types'
import type { NvdService } from '../nvd/service'
import type { SourceStore } from '../sources/source-store'
import type { CredentialedScanning } from '../credentialed/scanning'
import type { WebhookPolicy } from '../webhooks/policy'
import { createDeliveryHandler, startOutboxRelay, type Notifier, type NotifierLogger } from '../webhooks/events'
import { createScheduleRunner, syncScheduleTimer, type ScheduleRunnerLogger } from '../schedules'
import { createScanRunner, startSweeper, type RunnerConfig, type RunnerLogger, type ScanJobData, type ScanRunner } from './runner'

export interface WorkerSetConfig extends RunnerConfig {
  WORKER_CONCURRENCY: number
  QUEUE_LOCK_MS: number
  SCAN_SWEEP_INTERVAL: number
  WEBHOOK_TIMEOUT_MS: number
}

export interface WorkerSetDeps {
  config: WorkerSetConfig
  store: Store
  results: ResultsStore
  queue: ScanQueue
  scheduler: ScheduleTimer
  deliveries: DeliveryQueue
  nvd: NvdService
  sources: SourceStore | null
  notifier: Notifier
  policy: WebhookPolicy
  credentialed: CredentialedScanning | null
  /** Issue-tracker syncs: their queue and the handler that runs one (lib/integrations/jobs.ts). */
  integrations?: { queue: DeliveryQueue, handler: DeliveryHandler }
  /** A logger per component: the scan worker, schedules and webhooks. */
  log: (component: 'worker' | 'schedules' | 'webhooks') => RunnerLogger & NotifierLogger & ScheduleRunnerLogger
}

export interface WorkerSet {
  runner: ScanRunner
  /** Stops the timers (sweeper, relay); the queues stop with the backends' close. */
  stop(): void
}

export async function startWorkers (deps: WorkerSetDeps): Promise<WorkerSet> {
  const { config, store, queue, scheduler, deliveries } = deps
  const runner = createScanRunner({
    store,
    results: deps.results,
    queue,
    nvd: deps.nvd,
    sources: deps.sources,
    config,
    log: deps.log('worker'),
    attempts: queue.attempts,
    notifier: deps.notifier,
    credentialed: deps.credentialed
  })
  await queue.process<ScanJobData>((job, signal) => runner.handle(job, signal), {
    concurrency: config.WORKER_CONCURRENCY,
    lockDurationMs: config.QUEUE_LOCK_MS,
    onFinalFailure: runner.onFinalFailure
  })
  // Schedules edited while no process ran them are made good; then this process takes its share of due times.
  await syncScheduleTimer(store, scheduler)
  await scheduler.process(createScheduleRunner({ store, queue, timer: scheduler, log: deps.log('schedules') }))
  await deliveries.process(createDeliveryHandler({ store, policy: deps.policy, timeoutMs: config.WEBHOOK_TIMEOUT_MS, log: deps.log('webhooks') }))
  if (deps.integrations !== undefined) await deps.integrations.queue.process(deps.integrations.handler)
  const stopSweeper = startSweeper(runner, config, deps.log('worker'))
  const stopRelay = startOutboxRelay(deps.notifier, deps.log('webhooks'))
  return { runner, stop: () => { stopSweeper(); stopRelay() } }
}
