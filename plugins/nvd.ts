// Decorates `fastify.nvd`: the local CVE index (Redis, or memory backed by a file), the NVD API client and on-demand fetch.
import fp from 'fastify-plugin'
import { createNvdService, type NvdService } from '../lib/nvd/service'

declare module 'fastify' {
  interface FastifyInstance {
    nvd: NvdService
  }
}

export default fp(async function nvdPlugin (fastify) {
  const c = fastify.config
  const nvd = await createNvdService({
    redis: c.REDIS_URL ? fastify.redis : undefined,
    prefix: c.REDIS_PREFIX,
    indexFile: c.NVD_INDEX_FILE,
    apiUrl: c.NVD_API_URL,
    apiKey: c.NVD_API_KEY,
    requestsPerWindow: c.NVD_RATE_LIMIT,
    productTtlSeconds: c.NVD_PRODUCT_TTL,
    logger: { info: (msg) => fastify.log.info(msg), warn: (msg) => fastify.log.warn(msg) }
  })
  fastify.decorate('nvd', nvd)
  fastify.addHook('onClose', async () => { await nvd.close() })
}, { name: 'nvd', dependencies: ['env', 'redis'] })
