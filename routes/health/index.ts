import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, reply } from '../../schemas/common'
import { HealthSchema } from '../../schemas/health'
import { VERSION } from '../../lib/version'
import { dataSources, type DataSources } from '../../lib/sources/registry'
import { isConnectionFailure, outageReason, withoutAddresses } from '../../lib/outage'
import { withinMs } from '../../lib/time-limit'

// A dependency that does not answer within this time counts as down: /health never hangs.
const CHECK_TIMEOUT_MS = 1500

/** Why a check failed, naming the dependency's failure but never its address (/health needs no key). */
function whyDown (err: unknown): string {
  if (isConnectionFailure(err)) return outageReason(err)
  return withoutAddresses((err as Error).message)
}

async function check (backend: string, probe: () => Promise<void>): Promise<{ status: 'ok' | 'down', backend: string, error?: string }> {
  try {
    await withinMs(probe, CHECK_TIMEOUT_MS, `no answer within ${CHECK_TIMEOUT_MS} ms`)
    return { status: 'ok', backend }
  } catch (err) {
    return { status: 'down', backend, error: whyDown(err) }
  }
}

const health: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    // Counted like any request, but not refused when the shared count cannot be reached: the health check is what
    // has to answer during a Redis outage (its 503 is a Health body, not an Error).
    config: { public: true, rateLimit: { skipOnError: true } },
    schema: {
      operationId: 'getHealth',
      tags: ['health'],
      summary: 'Health check',
      description: '200 when the store (Redis), the queue and the results database (PostgreSQL) answer, 503 (status `degraded`) ' +
        'when one does not, naming it in `checks`. No scan worker alive (`checks.workers`) also makes the status `degraded`, ' +
        'with a 200: this instance still serves requests, scans wait in the queue. Needs no key. ' +
        '`dataSources` says what vulnerability data scans are matched against and how current each source is.',
      security: [],
      response: { 200: reply(HealthSchema, 'Store, queue and results database answer'), 503: reply(HealthSchema, 'A dependency does not answer (status `degraded`)'), ...errors(429) }
    }
  }, async (_request, reply) => {
    let stats: Awaited<ReturnType<typeof fastify.nvd.index.stats>> | undefined
    let sources: DataSources | undefined
    let workerCount = 0
    const { cve, sources: sourceStore } = fastify.backends.indexes
    // An import run by another process (npm run data, nvd:import) shows here at once, not after the next scan: the
    // embedded files are looked at again (at most once a second) when they changed; Redis is always current.
    await Promise.all([cve.refresh().catch(() => false), sourceStore?.revision().catch(() => '')])
    const [store, queue, results, workersCheck] = await Promise.all([
      check(fastify.store.kind, () => fastify.store.ping()),
      check(fastify.scanQueue.kind, () => fastify.scanQueue.ping()),
      check(fastify.backends.kind === 'redis' ? 'postgresql' : 'memory', () => fastify.results.ping()),
      check(fastify.scanQueue.kind, async () => { workerCount = await fastify.scanQueue.workers() }),
      check('nvd', async () => { stats = await cve.stats() }).catch(() => undefined),
      check('sources', async () => { sources = await dataSources(cve, sourceStore) }).catch(() => undefined)
    ])
    const workers = workersCheck.status === 'ok'
      ? { status: workerCount > 0 ? 'ok' as const : 'down' as const, count: workerCount, ...(workerCount === 0 ? { error: 'no scan worker is running: scans wait in the queue' } : {}) }
      : { status: 'down' as const, count: 0, error: workersCheck.error ?? 'unknown' }
    const serving = store.status === 'ok' && queue.status === 'ok' && results.status === 'ok'
    return reply.code(serving ? 200 : 503).send({
      status: serving && workers.status === 'ok' ? 'ok' : 'degraded',
      version: VERSION,
      uptimeSeconds: Math.floor(process.uptime()),
      checks: { store, queue, results, workers },
      // Said in words too: without a worker the API answers, but no scan ever starts.
      ...(workers.count === 0 && workers.status === 'down' && workersCheck.status === 'ok' ? { warnings: ['No scan worker is running: posted scans stay queued until one starts (npm run start:worker, or npm start).'] } : {}),
      ...(stats ? { nvd: stats } : {}),
      ...(sources ? { dataSources: sources } : {})
    })
  })
}

export default health
