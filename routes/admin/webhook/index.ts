import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { Static } from '@sinclair/typebox'
import { randomUUID } from 'node:crypto'
import { errors, paging, ref, reply } from '../../../schemas/common'
import {
  PageWebhookDeliverySchema, PageWebhookSchema, WebhookCreatedSchema, WebhookCreateSchema, WebhookDeliverySchema, WebhookIdParamsSchema, WebhookDeliveriesQuerySchema, WebhookDeliveryParamsSchema, WebhookRedeliverySchema,
  WebhookListQuerySchema, WebhookPatchSchema, WebhookSchema
} from '../../../schemas/webhook'
import { NotFoundError, WebhookUrlError } from '../../../lib/errors'
import { webhookUrlProblem } from '../../../lib/webhooks/policy'
import { attemptDelivery, newWebhookSecret, renderBody, testBody } from '../../../lib/webhooks/events'
import type { WebhookRecord } from '../../../lib/store/types'

/** What leaves the server about a webhook: never its secret (shown once, at creation). */
function publicWebhook ({ secret: _secret, createdBy: _by, ...rest }: WebhookRecord): Static<typeof WebhookSchema> {
  return rest
}

const webhooks: FastifyPluginAsyncTypebox = async (fastify) => {
  const adminOnly = { role: 'admin' as const }
  const checkUrl = (url: string): void => {
    const problem = webhookUrlProblem(url, fastify.webhookPolicy)
    if (problem !== null) throw new WebhookUrlError(problem)
  }
  // Webhooks are owned like every resource (lib/ownership.ts); only admins reach these routes, and admins change any.
  const find = async (request: FastifyRequest, id: string): Promise<WebhookRecord> => await fastify.owned.change(request, 'webhook', id)

  fastify.post('/', {
    prefixTrailingSlash: 'no-slash',
    config: adminOnly,
    schema: {
      operationId: 'createWebhook',
      tags: ['webhooks'],
      summary: 'Create a webhook',
      description: 'Events are posted to `url` as JSON (the WebhookEvent schema) or as a Slack message, signed with HMAC-SHA256 in ' +
        '`X-Vulnscan-Signature-256: sha256=<hex>` over the raw body with the secret in this response (shown only here). A failed ' +
        'delivery (no 2xx answer) is retried WEBHOOK_ATTEMPTS times with a doubling backoff; each attempt is in the delivery log. ' +
        'A URL to a private, loopback, link-local or other special address is a 400 unless WEBHOOK_ALLOW names it.',
      body: ref(WebhookCreateSchema),
      response: { 201: reply(WebhookCreatedSchema, 'The webhook with its secret, shown only here'), ...errors(400, 401, 403, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    const body = request.body
    checkUrl(body.url)
    const at = new Date().toISOString()
    const record: WebhookRecord = {
      id: randomUUID(),
      url: body.url,
      events: [...new Set(body.events)],
      filter: body.filter ?? {},
      format: body.format ?? 'json',
      enabled: body.enabled ?? true,
      description: body.description ?? '',
      secret: newWebhookSecret(),
      createdAt: at,
      updatedAt: at,
      createdBy: request.principal?.id ?? 'unknown'
    }
    await fastify.store.createWebhook(record)
    request.auditTarget = record.id
    request.log.info({ webhookId: record.id, events: record.events }, 'webhook created')
    return reply.code(201).send({ ...publicWebhook(record), secret: record.secret })
  })

  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    config: adminOnly,
    schema: {
      operationId: 'listWebhooks',
      tags: ['webhooks'],
      summary: 'List webhooks',
      description: 'Newest first, without their secrets.',
      querystring: WebhookListQuerySchema,
      response: { 200: reply(PageWebhookSchema, 'A page of webhooks'), ...errors(400, 401, 403, 429, 503) }
    }
  }, async (request) => {
    const { limit, offset } = paging(request.query)
    const page = await fastify.store.listWebhooks({ limit, offset })
    return { items: page.items.map(publicWebhook), total: page.total, limit, offset }
  })

  fastify.get('/:id', {
    config: adminOnly,
    schema: {
      operationId: 'getWebhook',
      tags: ['webhooks'],
      summary: 'Get a webhook',
      params: WebhookIdParamsSchema,
      response: { 200: reply(WebhookSchema, 'The webhook'), ...errors(400, 401, 403, 404, 429, 503) }
    }
  }, async (request) => publicWebhook(await fastify.owned.read(request, 'webhook', request.params.id)))

  fastify.patch('/:id', {
    config: adminOnly,
    schema: {
      operationId: 'updateWebhook',
      tags: ['webhooks'],
      summary: 'Change a webhook',
      description: 'Changes the given fields; a new `url` is checked as at creation. The secret stays.',
      params: WebhookIdParamsSchema,
      body: ref(WebhookPatchSchema),
      response: { 200: reply(WebhookSchema, 'The changed webhook'), ...errors(400, 401, 403, 404, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const { id } = request.params
    await find(request, id)
    const body = request.body
    if (body.url !== undefined) checkUrl(body.url)
    const updated = await fastify.store.updateWebhook(id, {
      ...body,
      ...(body.events !== undefined ? { events: [...new Set(body.events)] } : {}),
      updatedAt: new Date().toISOString()
    })
    if (updated === null) throw new NotFoundError(`No webhook with id '${id}'`)
    request.log.info({ webhookId: id, enabled: updated.enabled }, 'webhook changed')
    return publicWebhook(updated)
  })

  fastify.delete('/:id', {
    config: adminOnly,
    schema: {
      operationId: 'deleteWebhook',
      tags: ['webhooks'],
      summary: 'Delete a webhook',
      description: 'With its delivery log; deliveries still queued are dropped.',
      params: WebhookIdParamsSchema,
      response: { 204: { type: 'null', description: 'Deleted' }, ...errors(400, 401, 403, 404, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    const { id } = request.params
    await find(request, id)
    if (!(await fastify.store.deleteWebhook(id))) throw new NotFoundError(`No webhook with id '${id}'`)
    request.log.info({ webhookId: id }, 'webhook deleted')
    return reply.code(204).send()
  })

  fastify.get('/:id/deliveries', {
    config: adminOnly,
    schema: {
      operationId: 'listWebhookDeliveries',
      tags: ['webhooks'],
      summary: 'A webhook\'s delivery log',
      description: 'Every attempt, newest first (the latest 200): time, event, status code or error, attempt number, duration. ' +
        'With `failed=true`, the deliveries that failed for good and are kept for redelivery instead (each event\'s last attempt, ' +
        'its `eventId` the delivery id to retry): kept until delivered or the webhook is deleted.',
      params: WebhookIdParamsSchema,
      querystring: WebhookDeliveriesQuerySchema,
      response: { 200: reply(PageWebhookDeliverySchema, 'A page of delivery attempts'), ...errors(400, 401, 403, 404, 429, 503) }
    }
  }, async (request) => {
    const { limit, offset } = paging(request.query)
    await fastify.owned.read(request, 'webhook', request.params.id)
    if (request.query.failed === true) {
      const page = await fastify.store.listFailedDeliveries(request.params.id, { limit, offset })
      const items = page.items.map((f) => ({
        id: f.eventId, at: f.failedAt, event: f.event, eventId: f.eventId, attempt: f.attempts, statusCode: f.statusCode, error: f.error, durationMs: 0, ok: false, willRetry: false
      }))
      return { items, total: page.total, limit, offset }
    }
    const page = await fastify.store.listWebhookDeliveries(request.params.id, { limit, offset })
    return { ...page, limit, offset }
  })

  fastify.post('/:id/deliveries/:delivery/retry', {
    config: adminOnly,
    schema: {
      operationId: 'retryWebhookDelivery',
      tags: ['webhooks'],
      summary: 'Deliver a failed event again',
      description: 'Queues a delivery that failed for good (listed with `failed=true`) again, with the same body, signature input ' +
        'and delivery id (X-Vulnscan-Delivery), so a receiver that saw it before can tell. Its attempts start again; it leaves the ' +
        'failed list once delivered. Deliveries are at least once and not ordered: a retried event arrives after later ones.',
      params: WebhookDeliveryParamsSchema,
      response: { 200: reply(WebhookRedeliverySchema, 'Queued'), ...errors(400, 401, 403, 404, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const { id, delivery } = request.params
    await find(request, id)
    const failed = await fastify.store.getFailedDelivery(id, delivery)
    if (failed === null) throw new NotFoundError(`No failed delivery '${delivery}' is kept for webhook '${id}'`)
    // A job id of its own: the failed job keeps the original id, which the queue would take as already done.
    await fastify.backends.deliveries.add(`${failed.eventId}:${id}:retry:${Date.now()}`, { webhookId: id, event: failed.event, eventId: failed.eventId, body: failed.body, retry: true })
    request.log.info({ webhookId: id, eventId: failed.eventId }, 'webhook delivery queued again')
    return { status: 'queued' as const, delivery: failed.eventId, event: failed.event }
  })

  fastify.post('/:id/test', {
    config: adminOnly,
    schema: {
      operationId: 'testWebhook',
      tags: ['webhooks'],
      summary: 'Send a test delivery',
      description: `Posts a \`webhook.test\` event (in the webhook's format, signed) once, now, from this process, and answers how it ` +
        'went; the attempt is in the delivery log. Not retried. A refused address or a failing receiver is a 200 whose `ok` is false.',
      params: WebhookIdParamsSchema,
      response: { 200: reply(WebhookDeliverySchema, 'The attempt'), ...errors(400, 401, 403, 404, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const w = await find(request, request.params.id)
    const body = testBody(w.id)
    const { delivery } = await attemptDelivery({ store: fastify.store, policy: fastify.webhookPolicy, timeoutMs: fastify.config.WEBHOOK_TIMEOUT_MS },
      w, { event: body.event, eventId: body.id, body: renderBody(w.format, body) }, 1, true)
    request.log.info({ webhookId: w.id, ok: delivery.ok, statusCode: delivery.statusCode }, 'webhook test delivery')
    const { webhookId: _w, ...shown } = delivery
    return shown
  })
}

export default webhooks
