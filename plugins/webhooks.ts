// Decorates `fastify.notifier` (scan ends and new findings, queued for webhooks) and `fastify.webhookPolicy` (where
// webhooks may be sent: WEBHOOK_ALLOW, WEBHOOK_DENY).
import fp from 'fastify-plugin'
import { createNotifier, type Notifier } from '../lib/webhooks/events'
import { webhookPolicy, type WebhookPolicy } from '../lib/webhooks/policy'
import { syncRequests } from '../lib/integrations/jobs'

declare module 'fastify' {
  interface FastifyInstance {
    notifier: Notifier
    webhookPolicy: WebhookPolicy
  }
}

export default fp(async function webhooksPlugin (fastify) {
  fastify.decorate('webhookPolicy', webhookPolicy(fastify.config))
  fastify.decorate('notifier', createNotifier({
    store: fastify.store,
    results: fastify.backends.results,
    deliveries: fastify.backends.deliveries,
    log: fastify.log.child({ component: 'webhooks' }),
    onScanCompleted: async (scan) => { await syncRequests(fastify.backends.integrations, fastify.backends.integrationSyncs).all(`scan:${scan.id}`) }
  }))
}, { name: 'webhooks', dependencies: ['env', 'backends'] })
