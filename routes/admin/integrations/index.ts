import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Static } from '@sinclair/typebox'
import { randomUUID } from 'node:crypto'
import { errors, paging, ref, reply } from '../../../schemas/common'
import {
  IntegrationCreateSchema, IntegrationDeliveriesQuerySchema, IntegrationIdParamsSchema, IntegrationListQuerySchema, IntegrationPatchSchema, IntegrationSchema,
  IntegrationSyncAckSchema, PageIntegrationDeliverySchema, PageIntegrationSchema
} from '../../../schemas/integration'
import { ConflictError, IntegrationError, NotFoundError } from '../../../lib/errors'
import { webhookUrlProblem } from '../../../lib/webhooks/policy'
import { tokenContext } from '../../../lib/integrations/sync'
import type { IntegrationPatch, IntegrationRecord, TrackerKind } from '../../../lib/integrations/types'

/** What leaves the server about an integration: never its token, sealed or not. */
function publicIntegration ({ sealedToken: _t, createdBy: _by, ...rest }: IntegrationRecord): Static<typeof IntegrationSchema> {
  return rest
}

const PROJECT: Record<TrackerKind, [RegExp, string]> = {
  github: [/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'owner/repo'],
  gitlab: [/^(?:[0-9]+|[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)+)$/, 'a project id or its full path (group/project)'],
  'jira-cloud': [/^[A-Z][A-Z0-9_]{0,49}$/, 'a Jira project key (upper-case letters, digits, underscores)'],
  'jira-dc': [/^[A-Z][A-Z0-9_]{0,49}$/, 'a Jira project key (upper-case letters, digits, underscores)']
}

const integrations: FastifyPluginAsyncTypebox = async (fastify) => {
  const adminOnly = { role: 'admin' as const }
  const store = fastify.backends.integrations
  const check = (kind: TrackerKind, fields: { url?: string, project?: string, username?: string }): void => {
    if (fields.url !== undefined) {
      const problem = webhookUrlProblem(fields.url, fastify.webhookPolicy)
      if (problem !== null) throw new IntegrationError(problem)
    }
    if (fields.project !== undefined && !PROJECT[kind][0].test(fields.project)) throw new IntegrationError(`project must be ${PROJECT[kind][1]} for a ${kind} integration`)
  }
  const find = async (id: string): Promise<IntegrationRecord> => {
    const i = await store.get(id)
    if (i === null) throw new NotFoundError(`No integration with id '${id}'`)
    return i
  }

  fastify.post('/', {
    prefixTrailingSlash: 'no-slash',
    config: adminOnly,
    schema: {
      operationId: 'createIntegration',
      tags: ['integrations'],
      summary: 'Connect an issue tracker',
      description: 'Tickets are opened for the findings that pass `filter`, grouped by `grouping`, after each completed scan, after a decision and on ' +
        'demand; each carries a stable key as a label, so that no finding gets two. The token is encrypted at rest under CREDENTIALS_KEY and never returned. ' +
        'A URL to a private, loopback or other special address is a 400 unless WEBHOOK_ALLOW names it.',
      body: ref(IntegrationCreateSchema),
      response: { 201: reply(IntegrationSchema, 'The integration, without its token'), ...errors(400, 401, 403, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    const body = request.body
    check(body.kind, body)
    if (body.kind === 'jira-cloud' && body.username === undefined) throw new IntegrationError('a jira-cloud integration needs `username`: the e-mail address its API token belongs to')
    const at = new Date().toISOString()
    const id = randomUUID()
    const record: IntegrationRecord = {
      id,
      name: body.name,
      kind: body.kind,
      url: body.url,
      project: body.project,
      ...(body.username !== undefined ? { username: body.username } : {}),
      ...(body.issueType !== undefined ? { issueType: body.issueType } : {}),
      sealedToken: fastify.secretBox.seal(body.token, tokenContext(id)),
      filter: body.filter ?? {},
      grouping: body.grouping ?? 'finding',
      enabled: body.enabled ?? true,
      description: body.description ?? '',
      createdAt: at,
      updatedAt: at,
      createdBy: request.principal?.id ?? 'unknown'
    }
    await store.create(record)
    request.auditTarget = id
    request.log.info({ integrationId: id, kind: record.kind }, 'integration created')
    return reply.code(201).send(publicIntegration(record))
  })

  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    config: adminOnly,
    schema: {
      operationId: 'listIntegrations',
      tags: ['integrations'],
      summary: 'List issue-tracker integrations',
      description: 'Newest first, without their tokens.',
      querystring: IntegrationListQuerySchema,
      response: { 200: reply(PageIntegrationSchema, 'A page of integrations'), ...errors(400, 401, 403, 429, 503) }
    }
  }, async (request) => {
    const { limit, offset } = paging(request.query)
    const page = await store.list({ limit, offset })
    return { items: page.items.map(publicIntegration), total: page.total, limit, offset }
  })

  fastify.get('/:id', {
    config: adminOnly,
    schema: {
      operationId: 'getIntegration',
      tags: ['integrations'],
      summary: 'Get an issue-tracker integration',
      params: IntegrationIdParamsSchema,
      response: { 200: reply(IntegrationSchema, 'The integration'), ...errors(400, 401, 403, 404, 429, 503) }
    }
  }, async (request) => publicIntegration(await find(request.params.id)))

  fastify.patch('/:id', {
    config: adminOnly,
    schema: {
      operationId: 'updateIntegration',
      tags: ['integrations'],
      summary: 'Change an issue-tracker integration',
      description: 'Changes the given fields; a new `token` replaces the stored one (sealed again, never returned).',
      params: IntegrationIdParamsSchema,
      body: ref(IntegrationPatchSchema),
      response: { 200: reply(IntegrationSchema, 'The changed integration'), ...errors(400, 401, 403, 404, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const { id } = request.params
    const current = await find(id)
    const { token, ...rest } = request.body
    check(current.kind, rest)
    const patch: IntegrationPatch = { ...rest, updatedAt: new Date().toISOString() }
    if (token !== undefined) patch.sealedToken = fastify.secretBox.seal(token, tokenContext(id))
    const updated = await store.update(id, patch)
    if (updated === null) throw new NotFoundError(`No integration with id '${id}'`)
    request.log.info({ integrationId: id, enabled: updated.enabled, tokenChanged: token !== undefined }, 'integration changed')
    return publicIntegration(updated)
  })

  fastify.delete('/:id', {
    config: adminOnly,
    schema: {
      operationId: 'deleteIntegration',
      tags: ['integrations'],
      summary: 'Delete an issue-tracker integration',
      description: 'With its token, its ticket map and its deliveries; the tickets on the tracker stay as they are.',
      params: IntegrationIdParamsSchema,
      response: { 204: { type: 'null', description: 'Deleted' }, ...errors(400, 401, 403, 404, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    const { id } = request.params
    await find(id)
    if (!(await store.delete(id))) throw new NotFoundError(`No integration with id '${id}'`)
    request.log.info({ integrationId: id }, 'integration deleted')
    return reply.code(204).send()
  })

  fastify.post('/:id/sync', {
    config: adminOnly,
    schema: {
      operationId: 'syncIntegration',
      tags: ['integrations'],
      summary: 'Sync an issue tracker now',
      description: 'Queues a sync: every ticket is brought in step with the findings as they stand (opened, updated, closed or reopened). ' +
        'A disabled integration is a 409.',
      params: IntegrationIdParamsSchema,
      response: { 202: reply(IntegrationSyncAckSchema, 'Queued'), ...errors(400, 401, 403, 404, 409, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    const i = await find(request.params.id)
    if (!i.enabled) throw new ConflictError('The integration is disabled; enable it first')
    const id = await fastify.integrationSync.requests.one(i.id, 'manual')
    request.log.info({ integrationId: i.id, request: id }, 'integration sync queued')
    return reply.code(202).send({ status: 'queued' as const, request: id })
  })

  fastify.get('/:id/deliveries', {
    config: adminOnly,
    schema: {
      operationId: 'listIntegrationDeliveries',
      tags: ['integrations'],
      summary: 'What was sent to the tracker',
      description: 'Every request, newest first (the latest 500): the action, the ticket\'s key and reference, the status or error, the try, and ' +
        'whether it is tried again. With `failed=true`, the failed ones only.',
      params: IntegrationIdParamsSchema,
      querystring: IntegrationDeliveriesQuerySchema,
      response: { 200: reply(PageIntegrationDeliverySchema, 'A page of requests'), ...errors(400, 401, 403, 404, 429, 503) }
    }
  }, async (request) => {
    const { limit, offset } = paging(request.query)
    await find(request.params.id)
    const page = await store.listDeliveries(request.params.id, { limit, offset, ...(request.query.failed === true ? { failed: true } : {}) })
    return { items: page.items.map(({ integrationId: _i, ...d }) => d), total: page.total, limit, offset }
  })
}

export default integrations
