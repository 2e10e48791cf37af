import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, paging, ref, reply } from '../../../schemas/common'
import { PageScanSchema, ScanAckSchema, ScanIdParamsSchema, ScanListQuerySchema, ScanRequestSchema, ScanSchema } from '../../../schemas/scan'
import { ConflictError, KeyScopeError, NotFoundError, QueueUnavailableError, ScopeError, TargetError } from '../../../lib/errors'
import { isTerminal } from '../../../lib/store/types'
import { newScanRecord, scanLimits, scanRequestProblem } from '../../../lib/scans'
import { keyScopeProblem } from '../../../lib/access'
import type { ScanJobData } from '../../../lib/worker/runner'

// How often an event stream looks at the scan; the store is shared, so this works across processes.
const SSE_POLL_MS = 500

const scans: FastifyPluginAsyncTypebox = async (fastify) => {
  const limits = scanLimits(fastify.config)
  // Open event streams end when the server closes, instead of holding the close up.
  const streams = new Set<() => void>()
  fastify.addHook('preClose', async () => { for (const end of streams) end() })

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
      response: { 200: reply(ScanAckSchema, 'Accepted and queued (or already queued by the same request)'), ...errors(400, 401, 403, 409, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const problem = scanRequestProblem(request.body, limits)
    if (problem !== null) throw problem.scope ? new ScopeError(problem.message) : new TargetError(problem.message)
    const keyScope = request.principal?.scope ?? []
    const outside = keyScopeProblem(request.body.targets, keyScope)
    if (outside !== null) throw new KeyScopeError(outside)
    const record = newScanRecord(request.body, request.principal?.id ?? 'unknown')
    if (keyScope.length > 0) record.keyScope = [...keyScope]
    const { created, scan } = await fastify.store.createScan(record)
    request.auditTarget = scan.id
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

  fastify.delete('/:id', {
    schema: {
      operationId: 'cancelScan',
      tags: ['scans'],
      summary: 'Cancel a scan',
      description: 'Cancels a queued or running scan: workers stop its sockets within 2 seconds. Results written so far stay. ' +
        'A scan that already ended gets a 409.',
      params: ScanIdParamsSchema,
      response: { 200: reply(ScanSchema, 'The scan, now cancelled'), ...errors(400, 401, 404, 409, 429, 503) }
    }
  }, async (request) => {
    const { id } = request.params
    const r = await fastify.store.updateScan(id, {
      status: 'cancelled',
      reason: `cancelled by ${request.principal?.id === 'service' ? 'the infrastructure key' : `key ${request.principal?.id ?? 'unknown'}`}`,
      finishedAt: new Date().toISOString()
    })
    if (r === null) throw new NotFoundError(`No scan with id '${id}'`)
    if (!r.applied) throw new ConflictError(`Scan '${id}' already ended (${r.scan.status})`)
    request.log.info({ scanId: id }, 'scan cancelled')
    return r.scan
  })

  fastify.get('/:id/events', {
    schema: {
      operationId: 'streamScanEvents',
      tags: ['scans'],
      summary: 'Follow a scan as Server-Sent Events',
      description: 'A `progress` event whenever the scan changes (data: the Scan), then one `end` event with the final state, ' +
        'after which the stream closes. Works across API instances and workers (it follows the shared store).',
      params: ScanIdParamsSchema,
      response: {
        200: { description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
        ...errors(400, 401, 404, 429, 503)
      }
    }
  }, async (request, reply) => {
    const { id } = request.params
    const first = await fastify.store.getScan(id)
    if (first === null) throw new NotFoundError(`No scan with id '${id}'`)
    reply.hijack()
    const res = reply.raw
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no'
    })
    let last = ''
    let closed = false
    // The hijacked stream bypasses the response serializer, so the Scan schema is applied here: it is the
    // allow-list that keeps internal fields (request hash, creator key id, batch count) off the wire.
    const serializeScan = reply.compileSerializationSchema(ScanSchema)
    const send = (event: string, json: string): void => { res.write(`event: ${event}\ndata: ${json}\n\n`) }
    const tick = async (): Promise<void> => {
      if (closed) return
      const scan = await fastify.store.getScan(id).catch(() => null)
      if (scan === null) return
      const json = serializeScan(scan as unknown as Record<string, unknown>)
      if (json !== last) {
        last = json
        send(isTerminal(scan.status) ? 'end' : 'progress', json)
      }
      if (isTerminal(scan.status)) finish()
    }
    const timer = setInterval(() => { void tick() }, SSE_POLL_MS)
    const heartbeat = setInterval(() => { if (!closed) res.write(': keep-alive\n\n') }, 15_000)
    const finish = (): void => {
      if (closed) return
      closed = true
      clearInterval(timer)
      clearInterval(heartbeat)
      res.end()
    }
    request.raw.on('close', finish)
    streams.add(finish)
    request.raw.on('close', () => streams.delete(finish))
    await tick()
  })
}

export default scans
