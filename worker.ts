// Worker-only entry point (`npm run start:worker`): runs scan jobs, schedules' due times and webhook deliveries from the
// shared Redis queues, no HTTP.
// Start as many as needed, on as many machines, all pointing at the same REDIS_URL.
import { startupMessage } from './lib/startup'
import closeWithGrace from 'close-with-grace'
import pino from 'pino'
import { loadConfig } from './lib/config'
import { backendKind, openBackends } from './lib/backends'
import { nvdServiceFor } from './lib/nvd/service'
import { startExploitRefresher } from './lib/exploit/refresh'
import { createScanRunner, startSweeper, type ScanJobData } from './lib/worker/runner'
import { createScheduleRunner, syncScheduleTimer } from './lib/schedules'
import { createDeliveryHandler, createNotifier, startOutboxRelay } from './lib/webhooks/events'
import { webhookPolicy } from './lib/webhooks/policy'
import { secretBoxFor } from './lib/secrets'
import { CredentialVault } from './lib/credentials/vault'
import { credentialedScanning, sshLimitsOf } from './lib/credentialed/scanning'

async function main (): Promise<void> {
  const config = loadConfig()
  const log = pino({ level: config.LOG_LEVEL, name: 'vulnscan-worker' })
  if (backendKind(config) === 'memory') {
    log.fatal('REDIS_URL is not set: a separate worker needs the shared Redis queue. With the embedded default, `npm start` runs the worker in the API process.')
    process.exit(1)
  }
  // Without CREDENTIALS_KEY, or with one that does not open the stored secrets, the worker does not start.
  const { box } = secretBoxFor(config, true)
  const backends = await openBackends(config, log)
  const { store, results, queue } = backends
  let vault: CredentialVault
  try {
    vault = await CredentialVault.open(store, box)
  } catch (err) {
    await backends.close()
    throw err
  }
  const { cve, sources } = backends.indexes
  const nvd = nvdServiceFor(config, cve, { info: (msg) => log.info(msg), warn: (msg) => log.warn(msg) })
  const notifier = createNotifier({ store, results, deliveries: backends.deliveries, log })
  const credentialed = credentialedScanning({ vault, store, limits: sshLimitsOf(config), sessions: config.SSH_SESSIONS })
  const runner = createScanRunner({ store, results, queue, nvd, sources, config, log, attempts: queue.attempts, notifier, credentialed })
  // Findings take in a newer KEV or EPSS import; the processes on one Redis share the check's stamp.
  const refresher = startExploitRefresher({ sources, results, nvd: cve, intervalMs: config.EXPLOIT_REFRESH * 1000, log })
  await queue.process<ScanJobData>((job, signal) => runner.handle(job, signal), {
    concurrency: config.WORKER_CONCURRENCY,
    lockDurationMs: config.QUEUE_LOCK_MS,
    onFinalFailure: runner.onFinalFailure
  })
  // Schedules edited while no process ran them are made good; then this worker takes its share of due times.
  await syncScheduleTimer(store, backends.scheduler)
  await backends.scheduler.process(createScheduleRunner({ store, queue, timer: backends.scheduler, log }))
  await backends.deliveries.process(createDeliveryHandler({ store, policy: webhookPolicy(config), timeoutMs: config.WEBHOOK_TIMEOUT_MS, log }))
  const stopSweeper = startSweeper(runner, config, log)
  const stopRelay = startOutboxRelay(notifier, log)
  log.info({ concurrency: config.WORKER_CONCURRENCY, queuePrefix: config.QUEUE_PREFIX }, 'worker started')

  closeWithGrace({ delay: 15_000 }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'worker shutting down after an error')
    else log.info({ signal }, 'worker shutting down')
    refresher.close()
    stopSweeper()
    stopRelay()
    await backends.close()
  })
}

main().catch((err) => {
  process.stderr.write(`vulnscan worker failed to start: ${startupMessage(err)}\n`)
  process.exit(1)
})
