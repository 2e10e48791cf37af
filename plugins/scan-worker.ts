// Runs scan jobs, schedules' due times and webhook deliveries inside the API process (npm start; off with npm run start:api); decorates nothing.
import fp from 'fastify-plugin'
import { createScanRunner, startSweeper, type ScanJobData } from '../lib/worker/runner'
import { createScheduleRunner, syncScheduleTimer } from '../lib/schedules'
import { createDeliveryHandler, startOutboxRelay } from '../lib/webhooks/events'
import { credentialedScanning, sshLimitsOf } from '../lib/credentialed/scanning'

export default fp(async function scanWorkerPlugin (fastify) {
  const config = fastify.config
  if (!config.WORKER_ENABLED) return
  const queue = fastify.scanQueue
  const runner = createScanRunner({
    store: fastify.store,
    results: fastify.results,
    queue,
    nvd: fastify.nvd,
    sources: fastify.backends.indexes.sources,
    config,
    log: fastify.log.child({ component: 'worker' }),
    attempts: queue.attempts,
    notifier: fastify.notifier,
    credentialed: credentialedScanning({ vault: fastify.credentials, store: fastify.store, limits: sshLimitsOf(config), sessions: config.SSH_SESSIONS })
  })
  // The backends plugin's close stops the queue, and with it this worker.
  let stopSweeper = (): void => {}
  let stopRelay = (): void => {}
  fastify.addHook('onClose', async () => { stopSweeper(); stopRelay() })
  fastify.addHook('onReady', async () => {
    stopSweeper = startSweeper(runner, config, fastify.log.child({ component: 'worker' }))
    stopRelay = startOutboxRelay(fastify.notifier, fastify.log.child({ component: 'webhooks' }))
    await queue.process<ScanJobData>((job, signal) => runner.handle(job, signal), {
      concurrency: config.WORKER_CONCURRENCY,
      lockDurationMs: config.QUEUE_LOCK_MS,
      onFinalFailure: runner.onFinalFailure
    })
    const { scheduler } = fastify.backends
    await syncScheduleTimer(fastify.store, scheduler)
    await scheduler.process(createScheduleRunner({ store: fastify.store, queue, timer: scheduler, log: fastify.log.child({ component: 'schedules' }) }))
    await fastify.backends.deliveries.process(createDeliveryHandler({
      store: fastify.store, policy: fastify.webhookPolicy, timeoutMs: config.WEBHOOK_TIMEOUT_MS, log: fastify.log.child({ component: 'webhooks' })
    }))
  })
}, { name: 'scan-worker', dependencies: ['env', 'backends', 'nvd', 'webhooks', 'credentials'] })
