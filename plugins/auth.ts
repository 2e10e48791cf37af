// Decorates each request with `principal`: who holds the X-API-Key. Routes opt out with config.public.
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { randomBytes } from 'node:crypto'
import { hashKey, sameKey } from '../lib/api-keys'
import { ForbiddenError, InvalidApiKeyError, StoreUnavailableError, TooManyAuthFailuresError } from '../lib/errors'
import { countAsync, LocalFailureCounter } from '../lib/auth-failures'

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

  // Failed logins per client address, checked before the key so that guessing stops paying off. Reading the
  // count costs no round trip; counting a failure does, and fails closed (503) when Redis cannot count it.
  const failures = fastify.backends.shared?.authFailures ?? new LocalFailureCounter()
  const failureWindowMs = fastify.config.AUTH_FAILURE_WINDOW * 1000
  const failureMax = fastify.config.AUTH_FAILURE_MAX
  const refuse = async (request: FastifyRequest, reply: FastifyReply): Promise<never> => {
    let count
    try {
      count = await countAsync(failures, 'incr', `ip:${request.ip}`, failureWindowMs, failureMax)
    } catch (err) {
      request.log.error({ err }, 'could not count a failed login')
      throw new StoreUnavailableError()
    }
    if (count.current > failureMax) {
      const seconds = Math.max(1, Math.ceil(count.ttl / 1000))
      reply.header('retry-after', seconds)
      throw new TooManyAuthFailuresError(seconds)
    }
    throw new InvalidApiKeyError()
  }

  fastify.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config
    if (config.public === true) return
    const seen = await countAsync(failures, 'read', `ip:${request.ip}`, failureWindowMs, failureMax)
    if (seen.current >= failureMax) {
      const seconds = Math.max(1, Math.ceil(seen.ttl / 1000))
      reply.header('retry-after', seconds)
      throw new TooManyAuthFailuresError(seconds)
    }
    const header = request.headers['x-api-key']
    if (typeof header !== 'string' || header.length === 0 || header.length > 512) return await refuse(request, reply)
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
    if (record === null) return await refuse(request, reply)
    request.principal = { id: record.id, admin: false }
    if (config.admin === true) throw new ForbiddenError('This route needs the infrastructure key')
    const now = Date.now()
    if ((lastTouch.get(hex) ?? 0) + TOUCH_INTERVAL_MS < now) {
      lastTouch.set(hex, now)
      fastify.store.touchApiKey(hex, new Date(now).toISOString()).catch((err) => request.log.warn({ err }, 'could not record key use'))
    }
  })
}, { name: 'auth', dependencies: ['env', 'backends'] })
