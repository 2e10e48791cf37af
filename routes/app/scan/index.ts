import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { describeError } from '../../../lib/outage'
import { errors, paging, ref, reply } from '../../../schemas/common'
import { PageScanSchema, ScanAckSchema, ScanIdParamsSchema, ScanListQuerySchema, ScanRequestSchema, ScanSchema } from '../../../schemas/scan'
import { BadRequestError, ConflictError, CredentialError, CredentialScopeError, KeyScopeError, NotFoundError, QueueUnavailableError, ScopeError, TargetError } from '../../../lib/errors'
import { scanView } from '../../../lib/ownership'
import { Type } from '@sinclair/typebox'
import { ScanNotQueuedError, scanLimits, scanRequestProblem, submitScan } from '../../../lib/scans'
import { isReservedScanId, RESERVED_SCAN_ID_PREFIX } from '../../../lib/schedules'
import { keyScopeProblem } from '../../../lib/access'
import { tagSet } from '../../../lib/tags'
import { CredentialInputError } from '../../../lib/credentials/vault'

const scans: FastifyPluginAsyncTypebox = async (fastify) => {
  const limits = scanLimits(fastify.config)
  /**
   * A scan with nothing but targetTags that name no host now would fail as soon as it is planned: said at once.
   * A re-post of a scan that exists already is the same request whatever the hosts' tags are now.
   */
  const checkTargetTags = async (body: { id?: string, targets?: unknown[], targetTags?: string[] }, sees: ((address: string) => boolean) | null): Promise<void> => {
    const targetTags = tagSet(body.targetTags ?? [])
    if ((body.targets ?? []).length > 0 || targetTags.length === 0) return
    if (body.id !== undefined && await fastify.store.getScan(body.id) !== null) return
    // Hosts outside the key's scope are neither scanned nor revealed: tags that only they carry name no host here.
    const tagged = await fastify.results.hostsWithTags(targetTags)
    if ((sees === null ? tagged : tagged.filter(sees)).length > 0) return
    throw new TargetError(`targetTags: no known host carries ${targetTags.length === 1 ? 'the tag' : 'any of the tags'} ${targetTags.join(', ')}, and the scan names no targets`)
  }

  fastify.post('/', {
    prefixTrailingSlash: 'no-slash',
    schema: {
      operationId: 'createScan',
      tags: ['scans'],
      summary: 'Post a scan',
      description: 'Validates the targets (format, host cap, scope lists) and puts the scan on the queue. ' +
        '`targetTags` add the known hosts carrying those tags, looked up when the scan is planned; `tags` are added to every host it finds up. ' +
        '`options.credentials` names stored SSH credentials to log in with and read each host\'s package list (a credential unknown: 400; a target outside its scope: 403). ' +
        'Priority 5 is the most urgent, 1 the least. Re-posting the same `id` with the same body answers the same ' +
        '200 and creates nothing; the same `id` with another body is a 409.',
      body: ref(ScanRequestSchema),
      response: { 200: reply(ScanAckSchema, 'Accepted and queued (or already queued by the same request)'), ...errors(400, 401, 403, 409, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const problem = scanRequestProblem(request.body, limits)
    if (problem !== null) throw problem.scope ? new ScopeError(problem.message) : new TargetError(problem.message)
    if (request.body.id !== undefined && isReservedScanId(request.body.id)) {
      throw new BadRequestError(`id: scan ids starting '${RESERVED_SCAN_ID_PREFIX}' are reserved for the runs of schedules; choose another id`)
    }
    const keyScope = request.principal?.scope ?? []
    const outside = keyScopeProblem(request.body.targets ?? [], keyScope)
    if (outside !== null) throw new KeyScopeError(outside)
    await checkTargetTags(request.body, fastify.owned.addresses(request))
    const owner = request.principal?.id ?? 'unknown'
    // Named by id or name, stored by id; the rule for using them (docs/credentialed-scans.md) is checked here.
    const credentials = await fastify.credentials.forScan(request.body.options?.credentials, request.body.targets ?? []).catch((err) => {
      if (err instanceof CredentialInputError) throw err.kind === 'scope' ? new CredentialScopeError(err.message) : new CredentialError(err.message)
      throw err
    })
    const body = credentials === undefined ? request.body : { ...request.body, options: { ...request.body.options, credentials } }
    const submitted = await submitScan({ store: fastify.store, queue: fastify.scanQueue }, body, { owner, keyScope },
      // A re-post is the same request from the same key; an id another key took is taken, whatever the body.
      (existing, record) => existing.requestHash === record.requestHash && existing.createdBy === owner
    ).catch((err) => {
      if (!(err instanceof ScanNotQueuedError)) throw err
      request.auditTarget = err.scanId
      request.log.warn({ error: describeError(err.cause), scanId: err.scanId }, 'could not enqueue scan: the sweep queues it later')
      throw new QueueUnavailableError()
    })
    const { scan, record } = submitted
    request.auditTarget = scan.id
    if (submitted.outcome === 'taken') {
      throw new ConflictError(`A scan with id '${record.id}' already exists${scan.createdBy === owner ? ' with a different request' : ''}`)
    }
    if (submitted.outcome === 'created') request.log.info({ scanId: scan.id, priority: scan.priority, template: scan.template }, 'scan queued')
    return { status: 'Message sent successfully' as const, id: scan.id }
  })

  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    schema: {
      operationId: 'listScans',
      tags: ['scans'],
      summary: 'List scans',
      description: 'Newest first, optionally only those in one state.',
      querystring: ScanListQuerySchema,
      response: { 200: reply(PageScanSchema, 'A page of scans'), ...errors(400, 401, 429, 503) }
    }
  }, async (request) => {
    const { limit, offset } = paging(request.query)
    const { status } = request.query
    const where = fastify.owned.filter(request, 'scan')
    const page = await fastify.store.listScans({ status, limit, offset, ...(where === null ? {} : { where }) })
    const actor = fastify.owned.actor(request)
    return { items: page.items.map((scan) => scanView(actor, scan)), total: page.total, limit, offset }
  })

  fastify.get('/:id', {
    schema: {
      operationId: 'getScan',
      tags: ['scans'],
      summary: 'Get a scan',
      description: 'Status, progress and, once finished, the summary.',
      params: ScanIdParamsSchema,
      response: { 200: reply(ScanSchema, 'The scan'), ...errors(400, 401, 404, 429, 503) }
    }
  }, async (request) => scanView(fastify.owned.actor(request), await fastify.owned.read(request, 'scan', request.params.id)))

  fastify.delete('/:id', {
    schema: {
      operationId: 'cancelScan',
      tags: ['scans'],
      summary: 'Cancel a scan',
      description: 'Cancels a queued or running scan: workers stop its sockets within 2 seconds. Results written so far stay. ' +
        'A scan that already ended gets a 409.',
      params: ScanIdParamsSchema,
      response: { 200: reply(ScanSchema, 'The scan, now cancelled'), ...errors(400, 401, 404, 409, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const { id } = request.params
    await fastify.owned.change(request, 'scan', id)
    const r = await fastify.store.updateScan(id, {
      status: 'cancelled',
      reason: `cancelled by ${request.principal?.id === 'service' ? 'the infrastructure key' : `key ${request.principal?.id ?? 'unknown'}`}`,
      finishedAt: new Date().toISOString()
    })
    if (r === null) throw new NotFoundError(`No scan with id '${id}'`)
    if (!r.applied) throw new ConflictError(`Scan '${id}' already ended (${r.scan.status})`)
    request.log.info({ scanId: id }, 'scan cancelled')
    await fastify.notifier.scanEnded(r.scan)
    return scanView(fastify.owned.actor(request), r.scan)
  })

  fastify.get('/:id/events', {
    schema: {
      operationId: 'streamScanEvents',
      tags: ['scans'],
      summary: 'Follow a scan as Server-Sent Events',
      description: 'A `progress` event whenever the scan changes (data: the Scan), then one `end` event with the final state, ' +
        'after which the stream closes. Each event has an `id`; reconnecting with `Last-Event-ID` skips a state already seen. ' +
        'Updates are pushed by the store (across API instances and workers). At most SSE_MAX_STREAMS_PER_KEY streams per key ' +
        'and SSE_MAX_STREAMS in all per instance: 429 beyond.',
      params: ScanIdParamsSchema,
      headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ maxLength: 64, description: 'The id of the last event received' })) }),
      response: {
        200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
        ...errors(400, 401, 404, 429, 503)
      }
    }
  }, async (request, reply) => {
    const { id } = request.params
    fastify.scanStreams.admit(request.principal?.id ?? 'unknown')
    const first = await fastify.owned.read(request, 'scan', id)
    const actor = fastify.owned.actor(request)
    fastify.scanStreams.serve(request, reply, first, (scan) => scanView(actor, scan))
  })
}

export default scans
