import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, reply } from '../../schemas/common'
import { HealthSchema } from '../../schemas/health'
import { VERSION } from '../../lib/version'
import { dataSources, type DataSources } from '../../lib/sources/registry'

// A dependency that does not answer within this time counts as down: /health never hangs.
const CHECK_TIMEOUT_MS = 1500

async function check (backend: string, probe: () => Promise<void>): Promise<{ status: 'ok' | 'down', backend: string, error?: string }> {
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      probe(),
      new Promise((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS) })
    ])
    return { status: 'ok', backend }
  } catch (err) {
    return { status: 'down', backend, error: (err as Error).message }
  } finally {
    clearTimeout(timer)
  }
}

const health: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    config: { public: true },
    schema: {
      operationId: 'getHealth',
      tags: ['health'],
      summary: 'Health check',
      description: '200 when the store and the queue answer, 503 (status `degraded`) when one does not. Needs no key. ' +
        '`dataSources` says what vulnerability data scans are matched against and how current each source is.',
      security: [],
      response: { 200: reply(HealthSchema, 'Store and queue answer'), 503: reply(HealthSchema, 'A dependency does not answer (status `degraded`)'), ...errors(429) }
    }
  }, async (_request, reply) => {
    let stats: Awaited<ReturnType<typeof fastify.nvd.index.stats>> | undefined
    let sources: DataSources | undefined
    const { cve, sources: sourceStore } = fastify.backends.indexes
    const [store, queue] = await Promise.all([
      check(fastify.store.kind, () => fastify.store.ping()),
      check(fastify.scanQueue.kind, () => fastify.scanQueue.ping()),
      check('nvd', async () => { stats = await cve.stats() }).catch(() => undefined),
      check('sources', async () => { sources = await dataSources(cve, sourceStore) }).catch(() => undefined)
    ])
    const ok = store.status === 'ok' && queue.status === 'ok'
    // Without a worker the API answers but no scan ever starts: said here, not hidden behind "ok". The status (and so a
    // load balancer's view of this API process) is left to the store and the queue.
    const workers = queue.status === 'ok' ? await fastify.scanQueue.workers().catch(() => undefined) : undefined
    const warnings = workers === 0 ? ['No scan worker is running: posted scans stay queued until one starts (npm run start:worker, or npm start).'] : []
    return reply.code(ok ? 200 : 503).send({
      status: ok ? 'ok' : 'degraded',
      version: VERSION,
      uptimeSeconds: Math.floor(process.uptime()),
      checks: { store, queue },
      ...(workers !== undefined ? { workers } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
      ...(stats ? { nvd: stats } : {}),
      ...(sources ? { dataSources: sources } : {})
    })
  })
}

export default health
