import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, paging, ref, reply } from '../../../schemas/common'
import { CredentialCreateSchema, CredentialIdParamsSchema, CredentialListQuerySchema, CredentialPatchSchema, CredentialRotationSchema, CredentialSchema, PageCredentialSchema } from '../../../schemas/credential'
import { ConflictError, CredentialError, NotFoundError } from '../../../lib/errors'
import { CredentialInputError, credentialView } from '../../../lib/credentials/vault'
import type { CredentialRecord } from '../../../lib/store/types'
import { resealTokens } from '../../../lib/integrations/tokens'

const USE_RULE = 'Scans name credentials in `options.credentials` (by id or name): any key that may post scans (operator or admin) ' +
  'may use any credential, within the credential\'s `scope`; only admins create, read, change or delete them.'

const credentials: FastifyPluginAsyncTypebox = async (fastify) => {
  const adminOnly = { role: 'admin' as const }
  const vault = fastify.credentials
  // A credential is named in the path by its id or its name.
  const find = async (ref: string): Promise<CredentialRecord> => {
    const c = await vault.get(ref) ?? await fastify.store.getCredentialByName(ref)
    if (c === null) throw new NotFoundError(`No credential with id or name '${ref}'`)
    return c
  }
  const refused = (err: unknown): never => {
    if (err instanceof CredentialInputError) throw err.kind === 'taken' ? new ConflictError(err.message) : new CredentialError(err.message)
    throw err
  }

  fastify.post('/', {
    prefixTrailingSlash: 'no-slash',
    config: adminOnly,
    schema: {
      operationId: 'createCredential',
      tags: ['credentials'],
      summary: 'Store an SSH credential',
      description: 'The secret (`privateKey` or `password`, and `passphrase`) is encrypted at rest with AES-256-GCM under CREDENTIALS_KEY ' +
        'and never returned, logged or audited. A private key that cannot be read (or whose passphrase is wrong) is a 400. ' + USE_RULE,
      body: ref(CredentialCreateSchema),
      response: { 201: reply(CredentialSchema, 'The credential, without its secret'), ...errors(400, 401, 403, 409, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    const record = await vault.create(request.body, request.principal?.id ?? 'unknown').catch(refused)
    request.auditTarget = record.id
    request.log.info({ credentialId: record.id, name: record.name }, 'credential created')
    return reply.code(201).send(credentialView(record))
  })

  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    config: adminOnly,
    schema: {
      operationId: 'listCredentials',
      tags: ['credentials'],
      summary: 'List credentials',
      description: 'Newest first, without their secrets.',
      querystring: CredentialListQuerySchema,
      response: { 200: reply(PageCredentialSchema, 'A page of credentials'), ...errors(400, 401, 403, 429, 503) }
    }
  }, async (request) => {
    const { limit, offset } = paging(request.query)
    const page = await vault.list({ limit, offset })
    return { items: page.items.map(credentialView), total: page.total, limit, offset }
  })

  fastify.get('/:id', {
    config: adminOnly,
    schema: {
      operationId: 'getCredential',
      tags: ['credentials'],
      summary: 'Get a credential',
      description: 'By id or name, without its secret.',
      params: CredentialIdParamsSchema,
      response: { 200: reply(CredentialSchema, 'The credential'), ...errors(400, 401, 403, 404, 429, 503) }
    }
  }, async (request) => credentialView(await find(request.params.id)))

  fastify.patch('/:id', {
    config: adminOnly,
    schema: {
      operationId: 'updateCredential',
      tags: ['credentials'],
      summary: 'Change a credential or rotate its secret',
      description: 'A new `privateKey` or `password` replaces the secret; the other fields change what they name. Scans already queued ' +
        'log in with the credential as it is when they reach each host.',
      params: CredentialIdParamsSchema,
      body: ref(CredentialPatchSchema),
      response: { 200: reply(CredentialSchema, 'The changed credential'), ...errors(400, 401, 403, 404, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const c = await find(request.params.id)
    request.auditTarget = c.id
    const updated = await vault.update(c.id, request.body).catch(refused)
    if (updated === null) throw new NotFoundError(`No credential with id or name '${request.params.id}'`)
    request.log.info({ credentialId: c.id, secretRotated: updated.secretUpdatedAt !== c.secretUpdatedAt }, 'credential changed')
    return credentialView(updated)
  })

  fastify.post('/rotate', {
    config: adminOnly,
    schema: {
      operationId: 'rotateCredentialsKey',
      tags: ['credentials'],
      summary: 'Seal every secret again under the current CREDENTIALS_KEY',
      description: 'The last step of a key rotation: with the new key in CREDENTIALS_KEY and the old one in CREDENTIALS_KEY_PREVIOUS on every ' +
        'process, this seals each secret (and the store\'s check value) again under the new key; then CREDENTIALS_KEY_PREVIOUS can go. ' +
        'Safe to repeat: secrets already under the current key are left as they are.',
      response: {
        200: reply(CredentialRotationSchema, 'What was sealed again'),
        ...errors(400, 401, 403, 413, 415, 429, 503)
      }
    }
  }, async (request) => {
    const r = await vault.rotateKey()
    // Tracker tokens (issue-tracker integrations) are sealed under the same key, and counted with the credentials.
    const tokens = await resealTokens(fastify.backends.integrations, fastify.secretBox)
    const total = { resealed: r.resealed + tokens.resealed, current: r.current + tokens.current }
    request.log.info(total, 'credentials and tracker tokens sealed again under the current key')
    return total
  })

  fastify.delete('/:id', {
    config: adminOnly,
    schema: {
      operationId: 'deleteCredential',
      tags: ['credentials'],
      summary: 'Delete a credential',
      description: 'With the host keys its logins recorded. Scans and schedules that name it log in with it no more (their hosts say so).',
      params: CredentialIdParamsSchema,
      response: { 204: { type: 'null', description: 'Deleted' }, ...errors(400, 401, 403, 404, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    const c = await find(request.params.id)
    request.auditTarget = c.id
    await vault.delete(c.id)
    request.log.info({ credentialId: c.id }, 'credential deleted')
    return reply.code(204).send()
  })
}

export default credentials
