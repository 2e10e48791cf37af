import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, ListQuerySchema, paging, reply } from '../../../schemas/common'
import { AuditQuerySchema, PageAuditEntrySchema, PageRefusedCountSchema } from '../../../schemas/audit'

const audit: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    config: { role: 'admin' },
    schema: {
      operationId: 'listAudit',
      tags: ['admin'],
      summary: 'List the audit log',
      description: 'Every state-changing request (POST, PATCH, PUT, DELETE) made with a valid key, newest first: who (key id ' +
        "and label, or 'service'), what (method, route, target id), when, from which address, and the response status. " +
        'Entries are kept AUDIT_RETENTION_DAYS days, AUDIT_MAX_ENTRIES at most, and never changed. Keys themselves are never ' +
        'logged. Requests without a valid key are counted per address in GET /admin/audit/refused instead.',
      querystring: AuditQuerySchema,
      response: { 200: reply(PageAuditEntrySchema, 'A page of audit entries'), ...errors(400, 401, 403, 429, 503) }
    }
  }, async (request) => {
    const { limit, offset } = paging(request.query)
    const { keyId, method, since, until, status } = request.query
    const page = await fastify.store.listAudit({ limit, offset, keyId, method, since, until, status })
    return { ...page, limit, offset }
  })

  fastify.get('/refused', {
    config: { role: 'admin' },
    schema: {
      operationId: 'listRefusedRequests',
      tags: ['admin'],
      summary: 'Count refused requests per address',
      description: 'State-changing requests refused for want of a valid key (401, and the 429s of an address locked after ' +
        'too many failed logins), counted per client address in windows of AUTH_FAILURE_WINDOW seconds, newest window first. ' +
        'Kept like the audit log (AUDIT_RETENTION_DAYS, at most AUDIT_MAX_ENTRIES counters).',
      querystring: ListQuerySchema,
      response: { 200: reply(PageRefusedCountSchema, 'A page of counters'), ...errors(400, 401, 403, 429, 503) }
    }
  }, async (request) => {
    const { limit, offset } = paging(request.query)
    const page = await fastify.store.listRefused({ limit, offset })
    return { ...page, limit, offset }
  })
}

export default audit
