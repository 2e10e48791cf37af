// Runs scan jobs inside the API process (npm start; off with npm run start:api); decorates nothing.
import fp from 'fastify-plugin'
import { JOB_ATTEMPTS, startBullWorker } from '../lib/queue/bullmq'
import { MemoryQueue } from '../lib/queue/memory'
import { createScanRunner, type ScanJobData } from '../lib/worker/runner'

export default fp(async function scanWorkerPlugin (fastify) {
  const config = fastify.config
  if (!config.WORKER_ENABLED) return
  const log = fastify.log.child({ component: 'worker' })
  const runner = createScanRunner({
    store: fastify.store,
    results: fastify.results,
    queue: fastify.scanQueue,
    nvd: fastify.nvd,
    config,
    log,
    attempts: fastify.scanQueue instanceof MemoryQueue ? 1 : JOB_ATTEMPTS
  })
  if (fastify.scanQueue instanceof MemoryQueue) {
    const queue = fastify.scanQueue
    fastify.addHook('onReady', async () => { queue.process<ScanJobData>((job, signal) => runner.handle(job, signal), config.WORKER_CONCURRENCY) })
    return
  }
  // BullMQ workers block on their connection: one of their own, that never gives up on a command.
  const connection = fastify.redis.duplicate({ maxRetriesPerRequest: null, enableAutoPipelining: false })
  connection.on('error', (err) => log.warn({ err: { message: err.message } }, 'worker Redis connection error'))
  const { close } = startBullWorker<ScanJobData>(connection, config.QUEUE_PREFIX, (job, signal) => runner.handle(job, signal), {
    concurrency: config.WORKER_CONCURRENCY,
    lockDurationMs: config.QUEUE_LOCK_MS,
    onFinalFailure: runner.onFinalFailure
  })
  fastify.addHook('onClose', async () => {
    await close()
    connection.disconnect()
  })
}, { name: 'scan-worker', dependencies: ['env', 'redis', 'scan-queue', 'nvd'] })
