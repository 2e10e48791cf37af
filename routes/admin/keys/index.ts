import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, ListQuerySchema, paging, ref, reply } from '../../../schemas/common'
import { ApiKeyCreatedSchema, ApiKeyCreateSchema, ApiKeyIdParamsSchema, PageApiKeySchema } from '../../../schemas/key'
import { newApiKey, parseLifetime } from '../../../lib/api-keys'
import { BadRequestError, NotFoundError } from '../../../lib/errors'
import type { ApiKeyRecord } from '../../../lib/store/types'

/** What may leave the server about a key: never its hash. */
function publicKey ({ hash: _hash, ...rest }: ApiKeyRecord): Omit<ApiKeyRecord, 'hash'> {
  return rest
}

const keys: FastifyPluginAsyncTypebox = async (fastify) => {
  const adminOnly = { admin: true }

  fastify.post('/', {
    prefixTrailingSlash: 'no-slash',
    config: adminOnly,
    schema: {
      operationId: 'createApiKey',
      tags: ['admin'],
      summary: 'Create a dynamic API key',
      description: 'Infrastructure key only. The key is in this response and nowhere else: only its SHA-256 hash is stored.',
      body: ref(ApiKeyCreateSchema),
      response: { 201: reply(ApiKeyCreatedSchema, 'The new key; `key` is shown only here'), ...errors(400, 401, 403, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    const lifetime = request.body.expiresIn === undefined ? null : parseLifetime(request.body.expiresIn)
    if (request.body.expiresIn !== undefined && lifetime === null) throw new BadRequestError(`expiresIn '${request.body.expiresIn}' is not a lifetime such as 30d`)
    const { key, record } = newApiKey(request.body.label, lifetime)
    await fastify.store.createApiKey(record)
    request.log.info({ keyId: record.id, label: record.label }, 'API key created')
    return reply.code(201).send({ ...publicKey(record), key })
  })

  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    config: adminOnly,
    schema: {
      operationId: 'listApiKeys',
      tags: ['admin'],
      summary: 'List dynamic API keys',
      description: 'Infrastructure key only. Shows each key\'s prefix and metadata, never the key.',
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
      description: 'Infrastructure key only. Takes effect on the very next request, on every API instance.',
      params: ApiKeyIdParamsSchema,
      response: { 204: { type: 'null', description: 'Revoked' }, ...errors(400, 401, 403, 404, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    if (!await fastify.store.deleteApiKey(request.params.id)) throw new NotFoundError(`No API key with id '${request.params.id}'`)
    request.log.info({ keyId: request.params.id }, 'API key revoked')
    return reply.code(204).send()
  })
}

export default keys
