// Decorates `fastify.config`: the configuration the caller loaded (lib/config.ts), or the environment's.
import fp from 'fastify-plugin'
import { loadConfig, type Config } from '../lib/config'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
  }
}

export default fp(async function envPlugin (fastify, opts: { config?: Config }) {
  fastify.decorate('config', opts.config ?? loadConfig())
}, { name: 'env' })
