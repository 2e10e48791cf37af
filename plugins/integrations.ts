// Decorates `fastify.integrationSync`: requests for issue-tracker syncs (queued) and what a sync needs to run
// (lib/integrations/sync.ts), for the worker set and the on-demand route.
import fp from 'fastify-plugin'
import { syncRequests, type SyncRequests } from '../lib/integrations/jobs'
import type { SyncDeps } from '../lib/integrations/sync'

declare module 'fastify' {
  interface FastifyInstance {
    integrationSync: { requests: SyncRequests, deps: SyncDeps }
  }
}

export default fp(async function integrationsPlugin (fastify) {
  const config = fastify.config
  fastify.decorate('integrationSync', {
    requests: syncRequests(fastify.backends.integrations, fastify.backends.integrationSyncs),
    deps: {
      store: fastify.backends.integrations,
      results: fastify.backends.results,
      box: fastify.secretBox,
      policy: fastify.webhookPolicy,
      http: { timeoutMs: config.WEBHOOK_TIMEOUT_MS, tries: config.INTEGRATION_TRIES, backoffMs: config.INTEGRATION_BACKOFF_MS, retryAfterMaxMs: config.INTEGRATION_RETRY_AFTER_MAX_MS },
      log: fastify.log.child({ component: 'integrations' })
    }
  })
}, { name: 'integrations', dependencies: ['env', 'backends', 'credentials', 'webhooks'] })
