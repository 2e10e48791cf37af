import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { basename } from 'node:path'
import { errors, reply } from '../../schemas/common'
import { TemplateListSchema } from '../../schemas/template'

const templates: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    schema: {
      operationId: 'listTemplates',
      tags: ['templates'],
      summary: 'List the templates scans run',
      description: 'The Nuclei-format network templates loaded from the project\'s templates/ and the TEMPLATES_DIR directories: ' +
        'id (the `rule` of their findings), severity, tags, source, whether signed, the services and ports they bind to, ' +
        'and whether intrusive; then the templates refused, with the reason. docs/templates.md explains the format supported.',
      response: { 200: reply(TemplateListSchema, 'The loaded and the refused templates'), ...errors(401, 429, 503) }
    }
  }, async () => {
    const { templates: loaded, refused } = fastify.templates
    return {
      items: loaded.map((t) => ({
        id: t.id,
        name: t.name,
        severity: t.severity,
        tags: t.tags,
        cveIds: t.cveIds,
        source: t.origin,
        signed: t.signature === 'signed' ? 'signed' as const : 'unsigned' as const,
        services: t.services,
        ports: t.ports,
        intrusive: t.intrusive
      })),
      total: loaded.length,
      // File names only: the server's directories are not the reader's business.
      refused: refused.map((r) => ({ file: basename(r.file), ...(r.id !== undefined ? { id: r.id } : {}), source: r.origin, reason: r.reason }))
    }
  })
}

export default templates
