import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, ListQuerySchema, paging, ref, reply } from '../../../schemas/common'
import { ApiKeyCreatedSchema, ApiKeyCreateSchema, ApiKeyIdParamsSchema, ApiKeyPatchSchema, ApiKeySchema, PageApiKeySchema } from '../../../schemas/key'
import { newApiKey, parseLifetime } from '../../../lib/api-keys'
import { LEGACY_ROLE, parseKeyScope, type Role } from '../../../lib/access'
import { BadRequestError, NotFoundError } from '../../../lib/errors'
import { API_KEYS_TOPIC, type ApiKeyRecord } from '../../../lib/store/types'

// A change is answered once its announcement came back through the invalidation channel (see `received`),
// so that a client told "done" finds every instance already changed; a channel that is down does not hold it longer.
const ANNOUNCE_WAIT_MS = 1000

/** What may leave the server about a key: never its hash; a key made before roles shows the role it acts with. */
function publicKey ({ hash: _hash, ...rest }: ApiKeyRecord): Omit<ApiKeyRecord, 'hash'> & { role: Role, scope: string[] } {
  return { ...rest, role: rest.role ?? LEGACY_ROLE, scope: rest.scope ?? [] }
}

function checkedScope (scope: string[] | undefined): string[] | undefined {
  if (scope === undefined) return undefined
  try {
    return parseKeyScope(scope)
  } catch (err) {
    throw new BadRequestError(`scope: ${(err as Error).message}`)
  }
}

const keys: FastifyPluginAsyncTypebox = async (fastify) => {
  const adminOnly = { role: 'admin' as const }

  fastify.post('/', {
    prefixTrailingSlash: 'no-slash',
    config: adminOnly,
    schema: {
      operationId: 'createApiKey',
      tags: ['admin'],
      summary: 'Create a dynamic API key',
      description: 'The key is in this response and nowhere else: only its SHA-256 hash is stored. `role` defaults to ' +
        '`operator`; `scope` (CIDRs) narrows what the key may scan within the global lists.',
      body: ref(ApiKeyCreateSchema),
      response: { 201: reply(ApiKeyCreatedSchema, 'The new key; `key` is shown only here'), ...errors(400, 401, 403, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    const lifetime = request.body.expiresIn === undefined ? null : parseLifetime(request.body.expiresIn)
    if (request.body.expiresIn !== undefined && lifetime === null) throw new BadRequestError(`expiresIn '${request.body.expiresIn}' is not a lifetime such as 30d`)
    const scope = checkedScope(request.body.scope)
    const { key, record } = newApiKey(request.body.label, lifetime)
    record.role = request.body.role ?? 'operator'
    if (scope !== undefined) record.scope = scope
    await fastify.store.createApiKey(record)
    request.auditTarget = record.id
    request.log.info({ keyId: record.id, label: record.label, role: record.role }, 'API key created')
    return reply.code(201).send({ ...publicKey(record), key })
  })

  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    config: adminOnly,
    schema: {
      operationId: 'listApiKeys',
      tags: ['admin'],
      summary: 'List dynamic API keys',
      description: 'Shows each key\'s prefix, role, scope and metadata, never the key.',
      querystring: ListQuerySchema,
      response: { 200: reply(PageApiKeySchema, 'A page of keys'), ...errors(400, 401, 403, 429, 503) }
    }
  }, async (request) => {
    const { limit, offset } = paging(request.query)
    const all = await fastify.store.listApiKeys()
    return { items: all.slice(offset, offset + limit).map(publicKey), total: all.length, limit, offset }
  })

  fastify.delete('/:id', {
    config: adminOnly,
    schema: {
      operationId: 'revokeApiKey',
      tags: ['admin'],
      summary: 'Revoke a dynamic API key',
      description: 'Takes effect on the very next request, on every API instance.',
      params: ApiKeyIdParamsSchema,
      response: { 204: { type: 'null', description: 'Revoked' }, ...errors(400, 401, 403, 404, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    const announced = fastify.backends.invalidation.received(API_KEYS_TOPIC, request.params.id, ANNOUNCE_WAIT_MS)
    if (!await fastify.store.deleteApiKey(request.params.id)) throw new NotFoundError(`No API key with id '${request.params.id}'`)
    await announced
    request.log.info({ keyId: request.params.id }, 'API key revoked')
    return reply.code(204).send()
  })

  fastify.patch('/:id', {
    config: adminOnly,
    schema: {
      operationId: 'updateApiKey',
      tags: ['admin'],
      summary: "Change a dynamic API key's role or scope",
      description: 'Takes effect on the very next request, on every API instance. Scans already queued keep the scope they were posted with.',
      params: ApiKeyIdParamsSchema,
      body: ref(ApiKeyPatchSchema),
      response: { 200: reply(ApiKeySchema, 'The key as it is now'), ...errors(400, 401, 403, 404, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const scope = checkedScope(request.body.scope)
    const announced = fastify.backends.invalidation.received(API_KEYS_TOPIC, request.params.id, ANNOUNCE_WAIT_MS)
    const updated = await fastify.store.updateApiKey(request.params.id, { role: request.body.role, scope })
    if (updated !== null) await announced
    if (updated === null) throw new NotFoundError(`No API key with id '${request.params.id}'`)
    request.log.info({ keyId: updated.id, role: updated.role, scope: updated.scope }, 'API key changed')
    return publicKey(updated)
  })
}

export default keys

