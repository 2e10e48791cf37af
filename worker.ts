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
import { startWorkers } from './lib/worker/start'
import { createNotifier } from './lib/webhooks/events'
import { webhookPolicy } from './lib/webhooks/policy'
import { secretBoxFor } from './lib/secrets'
import { CredentialVault } from './lib/credentials/vault'
import { credentialedScanning, sshLimitsOf } from './lib/credentialed/scanning'
import { createSyncHandler, syncRequests } from './lib/integrations/jobs'

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
  const syncs = syncRequests(backends.integrations, backends.integrationSyncs)
  const notifier = createNotifier({ store, results, deliveries: backends.deliveries, log, onScanCompleted: async (scan) => { await syncs.all(`scan:${scan.id}`) } })
  const policy = webhookPolicy(config)
  const integrations = {
    queue: backends.integrationSyncs,
    handler: createSyncHandler({
      store: backends.integrations,
      results,
      box,
      policy,
      http: { timeoutMs: config.WEBHOOK_TIMEOUT_MS, tries: config.INTEGRATION_TRIES, backoffMs: config.INTEGRATION_BACKOFF_MS, retryAfterMaxMs: config.INTEGRATION_RETRY_AFTER_MAX_MS },
      log: log.child({ component: 'integrations' })
    })
  }
  const credentialed = credentialedScanning({ vault, store, limits: sshLimitsOf(config), sessions: config.SSH_SESSIONS })
  const workers = await startWorkers({
    config, store, results, queue, scheduler: backends.scheduler, deliveries: backends.deliveries, nvd, sources, notifier,
    policy, integrations, credentialed, log: (component) => log.child({ component })
  })
  // Findings take in a newer KEV, EPSS or EUVD import; the processes on one Redis share the check's stamp.
  const refresher = startExploitRefresher({ sources, results, nvd: cve, intervalMs: config.EXPLOIT_REFRESH * 1000, log })
  log.info({ concurrency: config.WORKER_CONCURRENCY, queuePrefix: config.QUEUE_PREFIX }, 'worker started')

  closeWithGrace({ delay: 15_000 }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'worker shutting down after an error')
    else log.info({ signal }, 'worker shutting down')
    refresher.close()
    workers.stop()
    await backends.close()
  })
}

main().catch((err) => {
  process.stderr.write(`vulnscan worker failed to start: ${startupMessage(err)}\n`)
  process.exit(1)
})
