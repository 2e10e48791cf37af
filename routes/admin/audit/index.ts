import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, paging, reply } from '../../../schemas/common'
import { AuditQuerySchema, PageAuditEntrySchema } from '../../../schemas/audit'

const audit: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    config: { role: 'admin' },
    schema: {
      operationId: 'listAudit',
      tags: ['admin'],
      summary: 'List the audit log',
      description: 'Every state-changing request (POST, PATCH, PUT, DELETE), newest first: who (key id and label, or ' +
        "'service'), what (method, route, target id), when, from which address, and the response status. " +
        'Entries are kept AUDIT_RETENTION_DAYS days and never changed. Keys themselves are never logged.',
      querystring: AuditQuerySchema,
      response: { 200: reply(PageAuditEntrySchema, 'A page of audit entries'), ...errors(400, 401, 403, 429, 503) }
    }
  }, async (request) => {
    const { limit, offset } = paging(request.query)
    const { keyId, method, since, until, status } = request.query
    const page = await fastify.store.listAudit({ limit, offset, keyId, method, since, until, status })
    return { ...page, limit, offset }
  })
}

export default audit
