// Decorates `fastify.nvd`: the local CVE index the backends opened, the NVD API client and on-demand fetch.
import fp from 'fastify-plugin'
import { createNvdService, type NvdService } from '../lib/nvd/service'

declare module 'fastify' {
  interface FastifyInstance {
    nvd: NvdService
  }
}

export default fp(async function nvdPlugin (fastify) {
  const c = fastify.config
  fastify.decorate('nvd', createNvdService({
    index: fastify.backends.indexes.cve,
    apiUrl: c.NVD_API_URL,
    apiKey: c.NVD_API_KEY,
    requestsPerWindow: c.NVD_RATE_LIMIT,
    productTtlSeconds: c.NVD_PRODUCT_TTL,
    logger: { info: (msg) => fastify.log.info(msg), warn: (msg) => fastify.log.warn(msg) }
  }))
}, { name: 'nvd', dependencies: ['env', 'backends'] })
