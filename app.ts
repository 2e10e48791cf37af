// The root plugin: plugins/ first (env, store, queue, auth, schemas, swagger, …), then routes/; one error shape.
import { join } from 'node:path'
import { STATUS_CODES, type Server } from 'node:http'
import { randomUUID } from 'node:crypto'
import type { FastifyError, FastifyHttpOptions, FastifyInstance, FastifyReply, FastifySchemaValidationError } from 'fastify'
import autoload from '@fastify/autoload'
import fp from 'fastify-plugin'
import { AjvCompiler } from '@fastify/ajv-compiler'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'
import { trustedProxies, type Config } from './lib/config'
import { InvalidApiKeyError, QueueUnavailableError, ResultsUnavailableError, StoreUnavailableError } from './lib/errors'
import { isConnectionFailure, outageOf, outageReason } from './lib/outage'
import { InvalidAddressError } from './lib/addresses'

export interface AppOptions {
  config: Config
}

/** Turn Ajv errors into one sentence that names the field, e.g. `targets[0].type must be one of: …`. */
export function formatValidationError (errors: FastifySchemaValidationError[], dataVar: string): Error {
  const e = errors[0]
  const path = e.instancePath.split('/').slice(1).reduce((acc, seg) => /^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg, '')
  const where = dataVar === 'body' ? (path || 'body') : `${dataVar}${path ? '.' + path : ''}`
  const p = e.params as Record<string, unknown>
  let text: string
  switch (e.keyword) {
    case 'additionalProperties': text = `${where} has unknown field '${String(p.additionalProperty)}'`; break
    case 'required': text = `${where === 'body' ? '' : where + '.'}${String(p.missingProperty)} is required`; break
    case 'enum': text = `${where} must be one of: ${(p.allowedValues as unknown[]).join(', ')}`; break
    case 'type': text = `${where} must be ${p.type === 'integer' ? 'an integer' : `of type ${String(p.type)}`}`; break
    case 'pattern': text = `${where} has an invalid format (expected ${String(p.pattern)})`; break
    case 'minItems': text = `${where} must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`; break
    case 'minLength': text = p.limit === 1 ? `${where} must not be empty` : `${where} must be at least ${String(p.limit)} characters long`; break
    case 'maxLength': text = `${where} must be at most ${String(p.limit)} characters long`; break
    default: text = `${where} ${e.message ?? 'is invalid'}`
  }
  return new Error(text)
}

const compilers = AjvCompiler()

type Validate = ReturnType<ReturnType<typeof compilers>>

/**
 * The first value of a text part (query string, path, headers) that no store can take, as the path Ajv would name
 * it and why: a coerced number that is not finite, or text holding a NUL character (PostgreSQL text cannot hold
 * one, and a query that carried it failed with a 500).
 */
function unusable (data: unknown, path = ''): { at: string, message: string } | null {
  if (typeof data === 'number') return Number.isFinite(data) ? null : { at: path, message: 'must be a finite number' }
  if (typeof data === 'string') return data.includes('\u0000') ? { at: path, message: 'must not contain a NUL character' } : null
  if (data !== null && typeof data === 'object') {
    for (const [k, v] of Object.entries(data)) {
      const found = unusable(v, `${path}/${k}`)
      if (found !== null) return found
    }
  }
  return null
}

/**
 * Ajv coerces `Infinity` and `1e400` in a query string to Infinity, which then passes `minimum`/`maximum`
 * (its comparisons are skipped on coerced values). Whatever a route declares, a text part that holds a
 * non-finite number after coercion, or a NUL character, is refused as Ajv would refuse a wrong type.
 */
function usableOnly (validate: Validate): Validate {
  const wrapped = function (this: unknown, data: unknown) {
    const ok = (validate as (this: unknown, d: unknown) => unknown).call(this, data)
    if (ok !== true) {
      wrapped.errors = (validate as { errors?: unknown }).errors
      return ok
    }
    const found = unusable(data)
    if (found === null) return ok
    wrapped.errors = [{ keyword: 'usable', instancePath: found.at, schemaPath: '#', params: {}, message: found.message }]
    return false
  } as ((data: unknown) => unknown) & { errors?: unknown }
  return wrapped as unknown as Validate
}
const strictness = { removeAdditional: false, allErrors: false }

const serializers = SerializerSelector()
type Serialize = (data: unknown) => string

/**
 * Response serializers compiled at a route's first answer rather than at start-up. Fastify compiles every route's
 * response schemas when it starts: about half of an app's start on a busy 2-core machine (3 of 7 s seen in one test
 * process), paid again by every test that builds the app and by every route a process never answers. The serializer
 * is the same fast-json-stringify function, built once; a schema it cannot compile fails that route's answers
 * rather than the start, so `test/serializers.test.ts` compiles them all.
 */
export function lazySerializers (externalSchemas: Parameters<typeof serializers>[0], options: Parameters<typeof serializers>[1]) {
  const built: Array<() => Serialize> = []
  const build = (route: Parameters<ReturnType<typeof serializers>>[0]): Serialize => {
    let fn: Serialize | undefined
    // A compiler of its own for each schema: the shared one drops a schema's $id from the shared schemas once a
    // schema carrying that $id is compiled (reply.compileSerializationSchema(ScanSchema) in the event streams), and
    // every $ref to it compiled after that would fail. Compiled eagerly, every route came before; lazily, not.
    const get = (): Serialize => (fn ??= serializers(externalSchemas, options)(route) as Serialize)
    built.push(get)
    return (data: unknown) => get()(data)
  }
  return Object.assign(build, { compileAll: (): number => { for (const get of built) get(); return built.length } })
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/

/** The request's id: the client's X-Request-Id when it is 1..64 of [A-Za-z0-9._-], else a new UUID. */
export function requestId (req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
}

/** Server options shared by server.ts, the tests and the OpenAPI generator. */
export function serverOptions (config: Config): FastifyHttpOptions<Server> {
  return {
    bodyLimit: config.BODY_LIMIT,
    // Compiling every route's schemas takes a few seconds on a busy 2-core machine; avvio's default of 10 s per
    // plugin was seen to run out there, which failed a start that only needed more time.
    pluginTimeout: 60_000,
    // Slow clients: each stalled connection holds a descriptor the scanner's sockets need too.
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    connectionTimeout: config.HTTP_IDLE_TIMEOUT_MS,
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    http: {
      headersTimeout: Math.min(config.HTTP_HEADERS_TIMEOUT_MS, config.HTTP_REQUEST_TIMEOUT_MS),
      // Node looks for expired requests only this often (30 s by default), which would stretch every timeout.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(Math.min(config.HTTP_HEADERS_TIMEOUT_MS, config.HTTP_REQUEST_TIMEOUT_MS) / 4)))
    },
    ajv: { customOptions: strictness },
    schemaErrorFormatter: formatValidationError,
    schemaController: {
      compilersFactory: {
        // Bodies are JSON and must carry the right types ("priority":"3" is refused); query strings and
        // path parameters are text by nature and are coerced.
        buildValidator (externalSchemas: Parameters<typeof compilers>[0], ajvOptions: Parameters<typeof compilers>[1]) {
          const plugins = ajvOptions && 'plugins' in ajvOptions ? ajvOptions.plugins : undefined
          const forBody = compilers(externalSchemas, { plugins, customOptions: { ...strictness, coerceTypes: false } })
          const forText = compilers(externalSchemas, { plugins, customOptions: { ...strictness, coerceTypes: 'array' } })
          return (route: Parameters<typeof forBody>[0] & { httpPart?: string }) => route.httpPart === 'body' ? forBody(route) : usableOnly(forText(route))
        },
        buildSerializer: lazySerializers
      }
    },
    logger: {
      level: config.LOG_LEVEL,
      redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]'], censor: '[redacted]' }
    },
    // A client's X-Request-Id is kept only when it is short and plain, so it can neither forge log lines nor
    // pass for an id this server generated; otherwise one is generated.
    requestIdHeader: false,
    genReqId: requestId,
    // Only the configured proxies are believed about the client address (X-Forwarded-For); nobody else may claim one.
    trustProxy: trustedProxies(config),
    // Errors found before any route runs go through the same mapping as the rest, so they keep the error
    // shape and never echo the URL back.
    frameworkErrors (err, request, reply) {
      const { status, body } = errorReply(err as FastifyError)
      request.log.info({ code: err.code }, 'refused before routing')
      return (reply as FastifyReply).code(status).send(body)
    },
    clientErrorHandler (err, socket) {
      if ((err as NodeJS.ErrnoException).code === 'ECONNRESET' || socket.destroyed) return
      const { status, body } = errorReply(err as FastifyError)
      const text = JSON.stringify(body)
      if (socket.writable) {
        socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`)
      }
      socket.destroy()
    }
  }
}

/** The 503 for a Redis or PostgreSQL connection failure surfacing from a handler (a retry, not a 500), or null. */
function outageError (err: Error): FastifyError | null {
  if (err instanceof StoreUnavailableError || err instanceof ResultsUnavailableError || err instanceof QueueUnavailableError) return null
  const dependency = outageOf(err)
  if (dependency === 'PostgreSQL') return new ResultsUnavailableError()
  if (dependency === 'Redis' || isConnectionFailure(err)) return new StoreUnavailableError()
  return null
}

const FASTIFY_CODES: Record<string, { code: string, status?: number, text?: (err: FastifyError) => string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'VULNSCAN_HTTP_UNSUPPORTED_MEDIA_TYPE', text: () => 'Unsupported Content-Type: send application/json' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'VULNSCAN_HTTP_BODY_TOO_LARGE', text: () => 'Request body is too large' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'VULNSCAN_HTTP_INVALID_JSON', text: () => 'Request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'VULNSCAN_HTTP_EMPTY_BODY', text: () => 'Request body is empty but Content-Type is application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'VULNSCAN_HTTP_BAD_CONTENT_LENGTH', text: () => 'Content-Length does not match the body' },
  // Fastify's own messages for these quote the path; ours do not.
  FST_ERR_BAD_URL: { code: 'VULNSCAN_HTTP_BAD_URL', status: 400, text: () => 'The URL is not valid (bad percent-encoding)' },
  FST_ERR_MAX_PARAM_LENGTH: { code: 'VULNSCAN_HTTP_PARAM_TOO_LONG', status: 400, text: () => 'A path parameter is too long' },
  FST_ERR_ASYNC_CONSTRAINT: { code: 'VULNSCAN_HTTP_BAD_REQUEST', status: 400, text: () => 'The request matches no route' },
  // Node's HTTP parser (clientError): the connection is answered, then closed.
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'VULNSCAN_HTTP_REQUEST_TIMEOUT', status: 408, text: () => 'The request took too long to arrive' },
  HPE_HEADER_OVERFLOW: { code: 'VULNSCAN_HTTP_HEADERS_TOO_LARGE', status: 431, text: () => 'The request headers are too large' },
  HPE_: { code: 'VULNSCAN_HTTP_BAD_REQUEST', status: 400, text: () => 'The request is not valid HTTP/1.1' }
}

/**
 * The one mapping from an error to a status and an `{ error, code }` body, for the error handler and for
 * what Fastify and Node refuse before a handler exists. 5xx bodies never carry internals.
 */
export function errorReply (err: FastifyError, requestId?: string): { status: number, body: { error: string, code: string } } {
  const known = FASTIFY_CODES[err.code] ?? (err.code?.startsWith('HPE_') ? FASTIFY_CODES.HPE_ : undefined)
  const status = known?.status ?? err.statusCode ?? (err.code?.startsWith('ERR_') ? 400 : 500)
  if (status >= 500) {
    if (err.code?.startsWith('VULNSCAN_')) return { status, body: { error: err.message, code: err.code } }
    return { status: 500, body: { error: `Internal server error${requestId === undefined ? '' : ` (request ${requestId})`}`, code: 'VULNSCAN_INTERNAL' } }
  }
  return {
    status,
    body: {
      error: known?.text?.(err) ?? err.message,
      code: known?.code ?? (err.code?.startsWith('VULNSCAN_') ? err.code : 'VULNSCAN_BAD_REQUEST')
    }
  }
}

async function app (fastify: FastifyInstance, opts: AppOptions): Promise<void> {
  // Connections beyond the cap are closed as they arrive, before any byte is read.
  fastify.server.maxConnections = opts.config.HTTP_MAX_CONNECTIONS
  fastify.setErrorHandler(function errorHandler (err: FastifyError, request, reply) {
    if (err instanceof InvalidApiKeyError) {
      // The contract: exactly this body, whatever went wrong with the key.
      return reply.code(401).send({ error: 'Invalid API key' })
    }
    const outage = outageError(err)
    if (outage !== null || err.statusCode === 503) {
      // The outage itself is logged once per process when it starts and ends (lib/outage.ts); each refused request
      // only at debug, and never the driver's error object (ioredis's carries a circular list of earlier errors).
      request.log.debug({ code: (outage ?? err).code, reason: outageReason(err) }, 'dependency unavailable')
      const e = outage ?? err
      return reply.code(503).header('retry-after', 5).send({ error: e.message, code: e.code })
    }
    if (err.validation) {
      return reply.code(400).send({ error: err.message, code: 'VULNSCAN_VALIDATION' })
    }
    // lib/ throws plain errors; those that mean a bad request become one here.
    if (err instanceof InvalidAddressError) {
      return reply.code(400).send({ error: err.message, code: 'VULNSCAN_BAD_REQUEST' })
    }
    const { status, body } = errorReply(err, request.id)
    if (status >= 500) request.log.error({ err }, 'request failed')
    return reply.code(status).send(body)
  })

  // The API speaks JSON only: a text/plain body is a 415, not a string that fails validation.
  fastify.removeContentTypeParser('text/plain')

  fastify.setNotFoundHandler(function notFound (request, reply) {
    return reply.code(404).send({ error: `Route ${request.method} ${request.url.split('?')[0]} not found`, code: 'VULNSCAN_NOT_FOUND' })
  })

  await fastify.register(autoload, { dir: join(__dirname, 'plugins'), options: opts })
  await fastify.register(autoload, {
    dir: join(__dirname, 'routes'),
    options: opts,
    // Routes declare `/` with no trailing slash so the document shows /app/scan, not /app/scan/.
    routeParams: false
  })
}

// Not encapsulated, so that tests and entry points see the decorators (store, scanQueue, swagger, …).
export default fp(app, { name: 'vulnscan' })
