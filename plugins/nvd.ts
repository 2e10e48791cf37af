// Decorates `fastify.nvd`: the local CVE index the backends opened, the NVD API client and on-demand fetch.
import fp from 'fastify-plugin'
import { nvdServiceFor, type NvdService } from '../lib/nvd/service'

declare module 'fastify' {
  interface FastifyInstance {
    nvd: NvdService
  }
}

export default fp(async function nvdPlugin (fastify) {
  fastify.decorate('nvd', nvdServiceFor(fastify.config, fastify.backends.indexes.cve, {
    info: (msg) => fastify.log.info(msg),
    warn: (msg) => fastify.log.warn(msg)
  }))
}, { name: 'nvd', dependencies: ['env', 'backends'] })
