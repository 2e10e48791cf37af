// Worker-only entry point (`npm run start:worker`): runs scan jobs from the shared Redis queue, no HTTP.
// Start as many as needed, on as many machines, all pointing at the same REDIS_URL.
import closeWithGrace from 'close-with-grace'
import { Redis } from 'ioredis'
import pino from 'pino'
import { loadConfig } from './lib/config'
import { RedisStore } from './lib/store/redis'
import { createResultsStore } from './lib/store/results-redis'
import { BullQueue, JOB_ATTEMPTS, startBullWorker } from './lib/queue/bullmq'
import { createNvdService } from './lib/nvd/service'
import { createScanRunner, type ScanJobData } from './lib/worker/runner'

async function main (): Promise<void> {
  const config = loadConfig()
  const log = pino({ level: config.LOG_LEVEL, name: 'vulnscan-worker' })
  if (!config.REDIS_URL) {
    log.fatal('REDIS_URL is not set: a separate worker needs the shared Redis queue. With the embedded default, `npm start` runs the worker in the API process.')
    process.exit(1)
  }
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 3, enableAutoPipelining: true })
  const queueConnection = new Redis(config.REDIS_URL)
  const workerConnection = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null })
  for (const c of [redis, queueConnection, workerConnection]) c.on('error', (err) => log.warn({ err: { message: err.message } }, 'Redis connection error'))

  const store = new RedisStore(redis, config.REDIS_PREFIX)
  const results = createResultsStore(redis, config.REDIS_PREFIX)
  const queue = new BullQueue(queueConnection, config.QUEUE_PREFIX)
  const nvd = await createNvdService({
    redis,
    prefix: config.REDIS_PREFIX,
    indexFile: '',
    apiUrl: config.NVD_API_URL,
    apiKey: config.NVD_API_KEY,
    requestsPerWindow: config.NVD_RATE_LIMIT,
    productTtlSeconds: config.NVD_PRODUCT_TTL,
    logger: { info: (msg) => log.info(msg), warn: (msg) => log.warn(msg) }
  })
  const runner = createScanRunner({ store, results, queue, nvd, config, log, attempts: JOB_ATTEMPTS })
  const worker = startBullWorker<ScanJobData>(workerConnection, config.QUEUE_PREFIX, (job, signal) => runner.handle(job, signal), {
    concurrency: config.WORKER_CONCURRENCY,
    lockDurationMs: config.QUEUE_LOCK_MS,
    onFinalFailure: runner.onFinalFailure
  })
  log.info({ concurrency: config.WORKER_CONCURRENCY, queuePrefix: config.QUEUE_PREFIX }, 'worker started')

  closeWithGrace({ delay: 15_000 }, async ({ signal, err }) => {
    if (err) log.error({ err }, 'worker shutting down after an error')
    else log.info({ signal }, 'worker shutting down')
    await worker.close()
    await queue.close()
    await nvd.close()
    for (const c of [redis, queueConnection, workerConnection]) c.disconnect()
  })
}

main().catch((err) => {
  process.stderr.write(`vulnscan worker failed to start: ${(err as Error).stack ?? String(err)}\n`)
  process.exit(1)
})
