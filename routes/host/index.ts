import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Readable } from 'node:stream'
import accepts from '@fastify/accepts'
import { errors, paging, ref, reply } from '../../schemas/common'
import { HostAddressParamsSchema, HostListQuerySchema, HostSchema, PageHostSchema } from '../../schemas/host'
import { HostFindingQuerySchema, HostReportQuerySchema, PageFindingSchema } from '../../schemas/finding'
import { ConflictError, NotAcceptableError, NotFoundError } from '../../lib/errors'
import { normalizeAddress, parseAddress } from '../../lib/addresses'
import type { HostRecord } from '../../lib/domain/hosts'
import { HostTagsPatchSchema, HostTagsSchema } from '../../schemas/tags'
import { tagSet } from '../../lib/tags'
import { HOST_SORT_DEFAULT_ORDER } from '../../lib/vocabulary'
import { hostSortValue } from '../../lib/sorting'
import { notFoundAs } from '../../lib/errors'
import { VEX_FORMATS, VEX_RESPONSE, vexDocument, vexFormatOf, vexHeaders } from '../../lib/reports/vex'

const hosts: FastifyPluginAsyncTypebox = async (fastify) => {
  await fastify.register(accepts)
  // The results store hands out the same page object until a scan writes hosts (lib/store/host-page-cache.ts);
  // each such page goes through the response schema's serialiser once, not once per request.
  const bodies = new WeakMap<object, string>()

  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    schema: {
      operationId: 'listHosts',
      tags: ['hosts'],
      summary: 'List hosts',
      description: 'Hosts seen by scans, one per address however many scans or hostnames saw it. Filters combine (AND); ' +
        'by default the most recently seen first. Ports in the list carry their state, service, product and version; ' +
        'banners, CPE names, TLS facts and distro details are on GET /host/{address}.',
      querystring: HostListQuerySchema,
      response: { 200: reply(PageHostSchema, 'A page of hosts'), ...errors(400, 401, 404, 429, 503) }
    }
  }, async (request, reply) => {
    const { limit, offset } = paging(request.query)
    const { q, port, service, product, minSeverity, hasFindings, scanId, tag, cursor } = request.query
    const sort = request.query.sort ?? 'lastSeen'
    const order = request.query.order ?? HOST_SORT_DEFAULT_ORDER[sort]
    const filters = { q, port, service, product, minSeverity, hasFindings, scanId, tag, sort, order }
    const scope = { list: 'hosts', ...filters }
    const asked = fastify.cursors.request(cursor, offset, limit, scope, { value: sort === 'address' ? 'string' : 'number', key: (k) => normalizeAddress(k) === k })
    // A mistyped scan id is a 404 naming it, not an empty page that looks like a scan that saw nothing; so is a scan
    // this key may not see.
    if (scanId !== undefined) await fastify.owned.read(request, 'scan', scanId).catch(notFoundAs(`No scan with id '${scanId}' (scanId)`))
    const page = await fastify.results.listHosts({ ...filters, scope: fastify.owned.scope(request), offset, ...asked })
    let body = bodies.get(page)
    if (body === undefined) {
      const serialize = reply.getSerializationFunction('200')
      if (serialize === undefined) throw new Error('GET /host has no compiled 200 serialiser')
      const sent = fastify.cursors.next(page, limit, offset, asked.after, scope, (h) => ({ value: hostSortValue(h, sort), key: h.address }))
      body = serialize({ ...sent, limit, offset })
      bodies.set(page, body)
    }
    return reply.type('application/json; charset=utf-8').send(body as never)
  })

  /** The address in its canonical form, or a 403 when it lies outside the key's scope (said before any lookup). */
  const inScope = (request: FastifyRequest, value: string): string => {
    const address = parseAddress(value)
    fastify.owned.address(request, address)
    return address
  }

  /** The host, or the 404 that names its address. */
  const known = (address: string, host: HostRecord | null): HostRecord => {
    if (host === null) throw new NotFoundError(`No host with address '${address}'`)
    return host
  }

  fastify.get('/:address', {
    schema: {
      operationId: 'getHost',
      tags: ['hosts'],
      summary: 'Get a host',
      description: 'The host with its ports (service, product, version, CPE, TLS facts, banner) and finding tallies.',
      params: HostAddressParamsSchema,
      response: { 200: reply(HostSchema, 'The host'), ...errors(400, 401, 403, 404, 429, 503) }
    }
  }, async (request) => {
    const address = inScope(request, request.params.address)
    return known(address, await fastify.results.getHost(address))
  })

  fastify.delete('/:address', {
    schema: {
      operationId: 'deleteHost',
      tags: ['hosts'],
      summary: 'Delete a host',
      description: 'Deletes the host and all its findings, decisions included. A later scan that sees it again starts afresh.',
      params: HostAddressParamsSchema,
      response: { 204: { description: 'Deleted', type: 'null' }, ...errors(400, 401, 404, 413, 415, 429, 503) }
    }
  }, async (request, reply) => {
    const address = inScope(request, request.params.address)
    if (!await fastify.results.deleteHost(address)) throw new NotFoundError(`No host with address '${address}'`)
    return reply.code(204).send()
  })

  fastify.put('/:address/tags', {
    schema: {
      operationId: 'setHostTags',
      tags: ['hosts'],
      summary: 'Set a host\'s tags',
      description: 'Replaces the host\'s tags with those in the body (`[]` removes them all). Later scans keep them: a scan ' +
        'only adds the tags its body names. The `tag` filter of GET /host, GET /vulnerability and the CSV export, and the ' +
        '`targetTags` of a scan or schedule, read them.',
      params: HostAddressParamsSchema,
      body: ref(HostTagsSchema),
      response: { 200: reply(HostSchema, 'The host with its new tags'), ...errors(400, 401, 404, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const address = inScope(request, request.params.address)
    return known(address, await fastify.results.setHostTags(address, tagSet(request.body.tags)))
  })

  fastify.patch('/:address/tags', {
    schema: {
      operationId: 'changeHostTags',
      tags: ['hosts'],
      summary: 'Add and remove some of a host\'s tags',
      description: 'Adds the tags of `add` and removes those of `remove`, keeping the others, in one step (two clients ' +
        'changing different tags lose neither change). A host that would carry more than the limit is a 400.',
      params: HostAddressParamsSchema,
      body: ref(HostTagsPatchSchema),
      response: { 200: reply(HostSchema, 'The host with its new tags'), ...errors(400, 401, 404, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const address = inScope(request, request.params.address)
    return known(address, await fastify.results.addHostTags(address, tagSet(request.body.add ?? []), tagSet(request.body.remove ?? [])))
  })

  fastify.get('/:address/vulnerability', {
    schema: {
      operationId: 'listHostFindings',
      tags: ['hosts', 'vulnerabilities'],
      summary: 'List a host\'s findings',
      description: 'The host\'s findings, every status included unless `status` says otherwise; highest CVSS first by default.',
      params: HostAddressParamsSchema,
      querystring: HostFindingQuerySchema,
      response: { 200: reply(PageFindingSchema, 'A page of findings'), ...errors(400, 401, 403, 404, 429, 503) }
    }
  }, async (request) => {
    const address = inScope(request, request.params.address)
    const { limit, offset } = paging(request.query)
    const [host, page] = await Promise.all([
      fastify.results.getHost(address),
      fastify.results.listFindings({ ...request.query, limit, offset, host: address })
    ])
    if (host === null) throw new NotFoundError(`No host with address '${address}'`)
    return { ...page, limit, offset }
  })

  fastify.get('/:address/report', {
    schema: {
      operationId: 'getHostReport',
      tags: ['hosts', 'vulnerabilities'],
      summary: 'Get a host\'s CycloneDX or OpenVEX document',
      description: 'The host\'s findings now, across every scan, as the scan report makes them: a CycloneDX 1.6 BOM (the host, its open ' +
        'services with their CPE and, after a credentialed scan, its packages with their purl as components; each finding a ' +
        'vulnerability whose analysis state follows its status and decision) or an OpenVEX 0.2 document (one statement per ' +
        'finding: affected, not_affected, fixed or under_investigation; 409 when the filters keep none). The finding filters of ' +
        '`GET /host/{address}/vulnerability` apply, every matching finding by default.',
      params: HostAddressParamsSchema,
      querystring: HostReportQuerySchema,
      response: {
        200: VEX_RESPONSE,
        ...errors(400, 401, 403, 404, 406, 409, 429, 503)
      }
    }
  }, async (request, reply) => {
    const address = inScope(request, request.params.address)
    const { format: asked, limit, offset, ...filters } = request.query
    const format = vexFormatOf(asked, (types) => request.accepts().type(types) as string | false)
    if (format === null) throw new NotAcceptableError(`A host's document is available as ${VEX_FORMATS.cyclonedx.media} or ${VEX_FORMATS.openvex.media} (or ask with ?format=); the Accept header allows neither`)
    const host = await fastify.results.getHost(address)
    if (host === null) throw new NotFoundError(`No host with address '${address}'`)
    const doc = await vexDocument(format, {
      generatedAt: new Date().toISOString(),
      subject: [{ name: 'vulnscan:host', value: address }],
      describedAs: `host ${address}`,
      hosts: async function * () { yield host },
      findings: () => fastify.results.streamFindings({ ...filters, host: address, ...(offset !== undefined ? { offset } : {}), ...(limit !== undefined ? { limit } : {}) })
    })
    if (doc === null) throw new ConflictError(`Host '${address}' has no findings${Object.keys(filters).length > 0 ? ' these filters keep' : ''}: an OpenVEX document needs at least one statement`)
    return reply.headers(vexHeaders(format, `vulnscan-host-${address}`)).send(Readable.from(doc, { highWaterMark: 1 }))
  })
}

export default hosts
