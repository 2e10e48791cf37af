// The templates scans run (lib/templates/): the project's set and TEMPLATES_DIR's, loaded once at start so that
// GET /templates lists what the workers of this configuration load. Refusals are logged, one line each.
import fp from 'fastify-plugin'
import { templateSet, type TemplateSet } from '../lib/templates/index'

declare module 'fastify' {
  interface FastifyInstance {
    templates: TemplateSet
  }
}

export default fp(async function templatesPlugin (fastify) {
  const set = templateSet(fastify.config)
  for (const r of set.refused) fastify.log.warn({ file: r.file, id: r.id, reason: r.reason }, 'template refused')
  fastify.log.info({ loaded: set.templates.length, refused: set.refused.length }, 'templates loaded')
  fastify.decorate('templates', set)
}, { name: 'templates', dependencies: ['env'] })
