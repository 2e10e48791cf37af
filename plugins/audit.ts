// The audit log: every state-changing request (POST, PATCH, PUT, DELETE) made with a valid key is appended to the
// store before its answer leaves, whatever the answer, so a client that saw a result can find it in GET /admin/audit.
// Requests without one (401, and the 429s of a locked address) are counted per client address and window instead
// (GET /admin/audit/refused): anyone can send them, and an entry each would let anyone grow the log.
import fp from 'fastify-plugin'
import { describeError } from '../lib/outage'
import { randomUUID } from 'node:crypto'

declare module 'fastify' {
  interface FastifyRequest {
    /** What the request acted on when the path does not say it (e.g. a key id made by the request). */
    auditTarget: string | null
  }
}

const AUDITED = new Set(['POST', 'PATCH', 'PUT', 'DELETE'])
const DAY_MS = 86_400_000

function targetOf (params: unknown, body: unknown): string | null {
  if (params !== null && typeof params === 'object') {
    for (const v of Object.values(params)) if (typeof v === 'string' && v !== '') return v
  }
  if (body !== null && typeof body === 'object' && typeof (body as { id?: unknown }).id === 'string') return (body as { id: string }).id
  return null
}

export default fp(async function auditPlugin (fastify) {
  const limits = { retentionMs: fastify.config.AUDIT_RETENTION_DAYS * DAY_MS, maxEntries: fastify.config.AUDIT_MAX_ENTRIES }
  const refusedWindowMs = fastify.config.AUTH_FAILURE_WINDOW * 1000
  fastify.decorateRequest('auditTarget', null)

  fastify.addHook('onSend', async (request, reply, payload) => {
    if (!AUDITED.has(request.method)) return payload
    const principal = request.principal
    if (principal === null) {
      try {
        await fastify.store.countRefused(request.ip, Date.now(), refusedWindowMs, limits)
      } catch (err) {
        request.log.error({ err }, 'could not count a refused request')
      }
      return payload
    }
    const entry = {
      id: randomUUID(),
      at: new Date().toISOString(),
      keyId: principal.id,
      keyLabel: principal.label,
      method: request.method,
      // The pattern, never the raw URL: a path is client input of any length.
      route: request.routeOptions.url ?? '(no route)',
      targetId: (request.auditTarget ?? targetOf(request.params, request.body))?.slice(0, 256) ?? null,
      ip: request.ip,
      status: reply.statusCode
    }
    try {
      await fastify.store.appendAudit(entry, limits)
    } catch (err) {
      request.log.error({ error: describeError(err), audit: entry }, 'could not write the audit log')
    }
    return payload
  })
}, { name: 'audit', dependencies: ['env', 'backends', 'auth'] })
