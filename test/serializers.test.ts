// Response serializers are compiled at a route's first answer (lazySerializers in app.ts), so a schema that
// fast-json-stringify cannot compile would show only when that route first answers. This compiles every one of
// them, as a start-up used to, and checks that a serializer still writes what its schema says.
import { test } from 'tap'
import Fastify from 'fastify'
import app, { lazySerializers, serverOptions } from '../app'
import { loadConfig } from '../lib/config'

test('every route\'s response serializers compile', async (t) => {
  const config = loadConfig({ SERVICE_API_KEY: 'serializers-test-key', LOG_LEVEL: 'silent', WORKER_ENABLED: false, NVD_INDEX_FILE: '', SOURCES_FILE: '' }, {})
  const options = serverOptions(config)
  const made: Array<ReturnType<typeof lazySerializers>> = []
  options.schemaController = {
    ...options.schemaController,
    compilersFactory: {
      ...options.schemaController?.compilersFactory,
      buildSerializer: (schemas: Parameters<typeof lazySerializers>[0], opts: Parameters<typeof lazySerializers>[1]) => {
        const built = lazySerializers(schemas, opts)
        made.push(built)
        return built
      }
    }
  }
  const fastify = Fastify(options)
  t.teardown(async () => { await fastify.close() })
  await fastify.register(app, { config })
  await fastify.ready()
  const compiled = made.reduce((n, m) => n + m.compileAll(), 0)
  t.ok(compiled >= 150, `${compiled} response serializers compiled (one per route, status and media type)`)
})

test('a lazy serializer writes what its schema says, compiled once', async (t) => {
  const build = lazySerializers({}, {})
  const serialize = build({ schema: { type: 'object', properties: { a: { type: 'integer' } }, additionalProperties: false }, method: 'GET', url: '/x', httpStatus: '200' } as never)
  t.equal(serialize({ a: 1, secret: 'never written' }), '{"a":1}', 'only the schema\'s properties')
  t.equal(serialize({ a: 2 }), '{"a":2}')
  t.equal(build.compileAll(), 1)
})

test('a schema compiled with its $id does not take that $id from the routes compiled after it', async (t) => {
  // As the scan event streams do (reply.compileSerializationSchema(ScanSchema)) before GET /app/scan/{id} answers.
  const thing = { $id: 'Thing', type: 'object', properties: { a: { type: 'integer' } } }
  const build = lazySerializers({ Thing: thing }, {})
  const route = (schema: object): never => ({ schema, method: 'GET', url: '/x', httpStatus: '200' }) as never
  t.equal(build(route(thing))({ a: 1 }), '{"a":1}')
  t.equal(build(route({ $ref: 'Thing#' }))({ a: 2 }), '{"a":2}', 'the $ref still resolves')
})
