// Decorates each request with `principal`: who holds the X-API-Key. Routes opt out with config.public.
import fp from 'fastify-plugin'
import { randomBytes } from 'node:crypto'
import { hashKey, sameKey } from '../lib/api-keys'
import { ForbiddenError, InvalidApiKeyError, StoreUnavailableError } from '../lib/errors'

export interface Principal {
  /** 'service' for the infrastructure key, else the dynamic key's id. */
  id: string
  admin: boolean
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null
  }
  interface FastifyContextConfig {
    /** No key needed (health, docs). */
    public?: boolean
    /** Only the infrastructure key may call it. */
    admin?: boolean
  }
}

// lastUsedAt is written at most this often per key and process, keeping writes off the hot path.
const TOUCH_INTERVAL_MS = 60_000

export default fp(async function authPlugin (fastify) {
  let serviceKey = fastify.config.SERVICE_API_KEY
  if (!serviceKey) {
    serviceKey = randomBytes(24).toString('base64url')
    // Printed once, on purpose: without it nobody could use a server started with no key configured.
    process.stderr.write(`\nWARNING: SERVICE_API_KEY is not set. Generated a key for this run only:\n\n  ${serviceKey}\n\nSet SERVICE_API_KEY to keep a stable key.\n\n`)
    fastify.log.warn('SERVICE_API_KEY is not set: generated a random key for this run (printed on stderr)')
  }
  const serviceHash = hashKey(serviceKey)
  const lastTouch = new Map<string, number>()

  fastify.decorateRequest('principal', null)

  fastify.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config
    if (config.public === true) return
    const header = request.headers['x-api-key']
    if (typeof header !== 'string' || header.length === 0 || header.length > 512) throw new InvalidApiKeyError()
    const digest = hashKey(header)
    if (sameKey(digest, serviceHash)) {
      request.principal = { id: 'service', admin: true }
      return
    }
    const hex = digest.toString('hex')
    let record
    try {
      record = await fastify.store.findApiKey(hex)
    } catch (err) {
      request.log.error({ err }, 'API key lookup failed')
      throw new StoreUnavailableError()
    }
    if (record === null) throw new InvalidApiKeyError()
    request.principal = { id: record.id, admin: false }
    if (config.admin === true) throw new ForbiddenError('This route needs the infrastructure key')
    const now = Date.now()
    if ((lastTouch.get(hex) ?? 0) + TOUCH_INTERVAL_MS < now) {
      lastTouch.set(hex, now)
      fastify.store.touchApiKey(hex, new Date(now).toISOString()).catch((err) => request.log.warn({ err }, 'could not record key use'))
    }
  })
}, { name: 'auth', dependencies: ['env', 'backends'] })
