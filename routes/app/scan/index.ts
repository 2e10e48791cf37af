import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, paging, ref, reply } from '../../../schemas/common'
import { PageScanSchema, ScanAckSchema, ScanIdParamsSchema, ScanListQuerySchema, ScanRequestSchema, ScanSchema } from '../../../schemas/scan'
import { ConflictError, NotFoundError, QueueUnavailableError, ScopeError, TargetError } from '../../../lib/errors'
import { newScanRecord, scanLimits, scanRequestProblem, type ScanJobData } from '../../../lib/scans'

const scans: FastifyPluginAsyncTypebox = async (fastify) => {
  const limits = scanLimits(fastify.config)

  fastify.post('/', {
    prefixTrailingSlash: 'no-slash',
    schema: {
      operationId: 'createScan',
      tags: ['scans'],
      summary: 'Post a scan',
      description: 'Validates the targets (format, host cap, scope lists) and puts the scan on the queue. ' +
        'Priority 5 is the most urgent, 1 the least. Re-posting the same `id` with the same body answers the same ' +
        '200 and creates nothing; the same `id` with another body is a 409.',
      body: ref(ScanRequestSchema),
      response: { 200: reply(ScanAckSchema, 'Accepted and queued (or already queued by the same request)'), ...errors(400, 401, 409, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const problem = scanRequestProblem(request.body, limits)
    if (problem !== null) throw problem.scope ? new ScopeError(problem.message) : new TargetError(problem.message)
    const record = newScanRecord(request.body, request.principal?.id ?? 'unknown')
    const { created, scan } = await fastify.store.createScan(record)
    if (!created && scan.requestHash !== record.requestHash) {
      throw new ConflictError(`A scan with id '${record.id}' already exists with a different request`)
    }
    try {
      // Also on a re-post: an add that failed before is made good, and an add that succeeded is a no-op.
      await fastify.scanQueue.add<ScanJobData>(scan.id, { scanId: scan.id }, scan.priority)
    } catch (err) {
      request.log.error({ err, scanId: scan.id }, 'could not enqueue scan')
      throw new QueueUnavailableError()
    }
    if (created) request.log.info({ scanId: scan.id, priority: scan.priority, template: scan.template }, 'scan queued')
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
    const page = await fastify.store.listScans({ status, limit, offset })
    return { ...page, limit, offset }
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
  }, async (request) => {
    const scan = await fastify.store.getScan(request.params.id)
    if (scan === null) throw new NotFoundError(`No scan with id '${request.params.id}'`)
    return scan
  })
}

export default scans
