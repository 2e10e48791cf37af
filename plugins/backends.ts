// Decorates `fastify.backends` and, for the routes, its parts `fastify.store` (scans, API keys), `fastify.results`
// (hosts, findings; host pages cached) and `fastify.scanQueue`: whatever lib/backends.ts opens for the configuration.
import fp from 'fastify-plugin'
import { openBackends, type Backends } from '../lib/backends'
import { withHostPageCache } from '../lib/store/host-page-cache'
import type { Store } from '../lib/store/types'
import type { ResultsStore } from '../lib/store/results-types'
import type { ScanQueue } from '../lib/queue/types'

declare module 'fastify' {
  interface FastifyInstance {
    backends: Backends
    store: Store
    results: ResultsStore
    scanQueue: ScanQueue
  }
}

export default fp(async function backendsPlugin (fastify) {
  const backends = await openBackends(fastify.config, fastify.log)
  if (backends.kind === 'memory') {
    fastify.log.warn('REDIS_URL is not set: running on the embedded in-memory store and queue. Nothing survives a restart; set REDIS_URL for persistence and separate workers.')
  }
  fastify.decorate('backends', backends)
  fastify.decorate('store', backends.store)
  // Clients page through hosts far more often than scans write them. On Redis every process announces its host
  // writes on the invalidation channel, so the revision is read only after one (or while the channel is down).
  const results = withHostPageCache(backends.results, backends.kind === 'redis' ? { channel: backends.invalidation } : {})
  fastify.decorate('results', results)
  fastify.decorate('scanQueue', backends.queue)
  fastify.addHook('onClose', async () => {
    results.close()
    await backends.close()
  })
}, { name: 'backends', dependencies: ['env'] })
