// Decorates `fastify.scanQueue`: BullMQ on Redis, or the in-process priority queue.
import fp from 'fastify-plugin'
import { BullQueue } from '../lib/queue/bullmq'
import { MemoryQueue } from '../lib/queue/memory'
import type { ScanQueue } from '../lib/queue/types'

declare module 'fastify' {
  interface FastifyInstance {
    scanQueue: ScanQueue
  }
}

export default fp(async function scanQueuePlugin (fastify) {
  const { REDIS_URL, QUEUE_PREFIX } = fastify.config
  if (REDIS_URL) {
    // Its own connection: BullMQ must not share the store's auto-pipelined one.
    const connection = fastify.redis.duplicate({ enableAutoPipelining: false })
    connection.on('error', (err) => fastify.log.warn({ err: { message: err.message } }, 'queue Redis connection error'))
    const queue = new BullQueue(connection, QUEUE_PREFIX)
    fastify.decorate('scanQueue', queue)
    fastify.addHook('onClose', async () => {
      await queue.close()
      await connection.quit()
    })
  } else {
    const queue = new MemoryQueue()
    fastify.decorate('scanQueue', queue)
    fastify.addHook('onClose', async () => { await queue.close() })
  }
}, { name: 'scan-queue', dependencies: ['env', 'redis'] })
