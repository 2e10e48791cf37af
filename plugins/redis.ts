// Decorates `fastify.store` (scans, API keys), `fastify.results` (hosts, findings) and, when REDIS_URL is set,
// `fastify.redis`.
import fp from 'fastify-plugin'
import fastifyRedis from '@fastify/redis'
import { Redis } from 'ioredis'
import { RedisStore } from '../lib/store/redis'
import { MemoryStore } from '../lib/store/memory'
import type { Store } from '../lib/store/types'
import { createResultsStore } from '../lib/store/results-redis'
import type { ResultsStore } from '../lib/store/results-types'

declare module 'fastify' {
  interface FastifyInstance {
    store: Store
    results: ResultsStore
  }
}

/** The URL without its password, for messages. */
function redactUrl (url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'the configured REDIS_URL'
  }
}

export default fp(async function redisPlugin (fastify) {
  const { REDIS_URL, REDIS_PREFIX } = fastify.config
  if (REDIS_URL) {
    const client = new Redis(REDIS_URL, {
      // Fail a command after one reconnect attempt rather than queueing it forever: requests get a 503.
      maxRetriesPerRequest: 1,
      enableAutoPipelining: true,
      connectTimeout: 5000,
      lazyConnect: true
    })
    try {
      await client.connect()
    } catch (err) {
      client.disconnect()
      throw new Error(`Cannot reach Redis at ${redactUrl(REDIS_URL)}: ${(err as Error).message}`)
    }
    // Later outages are survivable (ioredis reconnects; /health says degraded): log them, do not crash.
    client.on('error', (err) => fastify.log.warn({ err: { message: err.message } }, 'Redis connection error'))
    await fastify.register(fastifyRedis, { client, closeClient: true })
    fastify.decorate('store', new RedisStore(fastify.redis, REDIS_PREFIX))
    fastify.decorate('results', createResultsStore(fastify.redis, REDIS_PREFIX))
  } else {
    fastify.log.warn('REDIS_URL is not set: running on the embedded in-memory store and queue. Nothing survives a restart; set REDIS_URL for persistence and separate workers.')
    fastify.decorate('store', new MemoryStore())
    fastify.decorate('results', createResultsStore(undefined, REDIS_PREFIX))
  }
  fastify.addHook('onClose', async () => { await fastify.store.close() })
}, { name: 'redis', dependencies: ['env'] })
