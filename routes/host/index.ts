import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errors, ListQuerySchema, paging, ref, reply } from '../../schemas/common'
import { PageHostSchema } from '../../schemas/host'

const hosts: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/', {
    prefixTrailingSlash: 'no-slash',
    schema: {
      operationId: 'listHosts',
      tags: ['hosts'],
      summary: 'List hosts',
      description: 'Hosts seen by scans, most recently seen first.',
      querystring: ListQuerySchema,
      response: { 200: reply(PageHostSchema, 'A page of hosts'), ...errors(400, 401, 429, 503) }
    }
  }, async (request, reply) => {
    const { limit, offset } = paging(request.query)
    const page = await fastify.store.listHostsJson({ limit, offset })
    // Hosts are stored as the JSON of records the worker builds field by field, so they are sent as they
    // are, without a parse and re-serialize per request.
    return reply.type('application/json; charset=utf-8')
      .send(`{"items":[${page.items.join(',')}],"total":${page.total},"limit":${limit},"offset":${offset}}` as never)
  })
}

export default hosts
