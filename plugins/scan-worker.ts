// Runs scan jobs, schedules' due times and webhook deliveries inside the API process (npm start; off with npm run start:api); decorates nothing.
import fp from 'fastify-plugin'
import { startWorkers } from '../lib/worker/start'
import { credentialedScanning, sshLimitsOf } from '../lib/credentialed/scanning'
import { createSyncHandler } from '../lib/integrations/jobs'

export default fp(async function scanWorkerPlugin (fastify) {
  const config = fastify.config
  if (!config.WORKER_ENABLED) return
  // The backends plugin's close stops the queues, and with them these workers.
  let stop = (): void => {}
  fastify.addHook('onClose', async () => { stop() })
  fastify.addHook('onReady', async () => {
    const workers = await startWorkers({
      config,
      store: fastify.store,
      results: fastify.results,
      queue: fastify.scanQueue,
      scheduler: fastify.backends.scheduler,
      deliveries: fastify.backends.deliveries,
      nvd: fastify.nvd,
      sources: fastify.backends.indexes.sources,
      notifier: fastify.notifier,
      policy: fastify.webhookPolicy,
      integrations: { queue: fastify.backends.integrationSyncs, handler: createSyncHandler(fastify.integrationSync.deps) },
      credentialed: credentialedScanning({ vault: fastify.credentials, store: fastify.store, limits: sshLimitsOf(config), sessions: config.SSH_SESSIONS }),
      log: (component) => fastify.log.child({ component })
    })
    stop = workers.stop
  })
}, { name: 'scan-worker', dependencies: ['env', 'backends', 'nvd', 'webhooks', 'credentials', 'integrations'] })
