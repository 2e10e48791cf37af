// Decorates each request with `principal`: who holds the X-API-Key, with which role and scan scope. Routes opt
// out with config.public and state the role they need with config.role; this one hook enforces both.
import fp from 'fastify-plugin'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { randomBytes } from 'node:crypto'
import { hashKey, sameKey } from '../lib/api-keys'
import { LEGACY_ROLE, roleAllows, SERVICE_PRINCIPAL_ID, type Role } from '../lib/access'
import { ApiKeyCache } from '../lib/key-cache'
import { errors } from '../schemas/common'
import { ForbiddenError, InvalidApiKeyError, StoreUnavailableError, TooManyAuthFailuresError } from '../lib/errors'
import { outageReason } from '../lib/outage'
import { countAsync, LocalFailureCounter } from '../lib/auth-failures'

export interface Principal {
  /** 'service' for the infrastructure key, else the dynamic key's id. */
  id: string
  /** The dynamic key's label; null for the infrastructure key. */
  label: string | null
  role: Role
  /** Whether the role is admin (the infrastructure key always is). */
  admin: boolean
  /** CIDRs the key may scan within the global lists; empty: the global lists alone. */
  scope: readonly string[]
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null
  }
  interface FastifyContextConfig {
    /** No key needed (health, docs). */
    public?: boolean
    /** The least role a key needs. Unset: 'reader' for GET and HEAD, 'operator' for any other method. */
    role?: Role
  }
}

const ROLE_SENTENCE: Record<Role, string> = {
  reader: 'Needs the `reader` role or higher (any key).',
  operator: 'Needs the `operator` role or higher (the infrastructure key, `admin` or `operator` keys).',
  admin: 'Needs the `admin` role (the infrastructure key or an `admin` key).'
}

function defaultRole (method: string | string[]): Role {
  const methods = Array.isArray(method) ? method : [method]
  return methods.every((m) => m === 'GET' || m === 'HEAD') ? 'reader' : 'operator'
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
  const servicePrincipal: Principal = Object.freeze({ id: SERVICE_PRINCIPAL_ID, label: null, role: 'admin', admin: true, scope: [] })
  const lastTouch = new Map<string, number>()
  const keys = new ApiKeyCache(fastify.store, fastify.backends.invalidation)
  fastify.addHook('onClose', async () => { keys.close() })

  fastify.decorateRequest('principal', null)

  // Every route states its role in its config, and the OpenAPI document says the same.
  fastify.addHook('onRoute', (route) => {
    if (route.config?.public === true) return
    const role: Role = route.config?.role ?? defaultRole(route.method)
    route.config = { ...(route.config ?? {}), role }
    if (route.schema !== undefined && (route.schema as Record<string, unknown>).hide !== true) {
      const schema = route.schema as Record<string, unknown>
      const description = typeof schema.description === 'string' ? schema.description : ''
      // Any key below the role gets a 403, so every operation documents one.
      const response = schema.response as Record<string, unknown> | undefined
      if (response !== undefined && response['403'] === undefined && role !== 'reader') schema.response = { ...response, ...errors(403) }
      route.schema = { ...schema, 'x-required-role': role, description: description.includes(ROLE_SENTENCE[role]) ? description : `${description}${description ? ' ' : ''}${ROLE_SENTENCE[role]}` } as typeof route.schema
    }
  })

  // Failed logins per client address. A valid key always passes: keys are 192 random bits, so the lock is there to
  // slow guessing down (a locked address has its guesses refused unread until the window ends), never to shut out
  // the clients that share the address (a NAT, a reverse proxy without TRUST_PROXY). Reading the count costs no
  // round trip; counting a failure does, and fails closed (503) when Redis cannot count it.
  const failures = fastify.backends.shared?.authFailures ?? new LocalFailureCounter()
  const failureWindowMs = fastify.config.AUTH_FAILURE_WINDOW * 1000
  const failureMax = fastify.config.AUTH_FAILURE_MAX
  const refuse = async (request: FastifyRequest, reply: FastifyReply): Promise<never> => {
    let count
    try {
      count = await countAsync(failures, 'incr', `ip:${request.ip}`, failureWindowMs, failureMax)
    } catch {
      // Fails closed; the outage is logged once per process (lib/outage.ts).
      throw new StoreUnavailableError()
    }
    if (count.current > failureMax) {
      const seconds = Math.max(1, Math.ceil(count.ttl / 1000))
      reply.header('retry-after', seconds)
      throw new TooManyAuthFailuresError(seconds)
    }
    throw new InvalidApiKeyError()
  }

  /** A 429 while the address is locked: its guess is not even looked up. */
  const locked = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const seen = await countAsync(failures, 'read', `ip:${request.ip}`, failureWindowMs, failureMax)
    if (seen.current >= failureMax) {
      const seconds = Math.max(1, Math.ceil(seen.ttl / 1000))
      reply.header('retry-after', seconds)
      throw new TooManyAuthFailuresError(seconds)
    }
  }

  fastify.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config
    if (config.public === true) return
    const header = request.headers['x-api-key']
    if (typeof header !== 'string' || header.length === 0 || header.length > 512) {
      await locked(request, reply)
      return await refuse(request, reply)
    }
    const digest = hashKey(header)
    if (sameKey(digest, serviceHash)) {
      request.principal = servicePrincipal
      return
    }
    const hex = digest.toString('hex')
    let record
    try {
      record = await keys.find(hex)
    } catch {
      throw new StoreUnavailableError()
    }
    if (record === null) {
      await locked(request, reply)
      return await refuse(request, reply)
    }
    const role = record.role ?? LEGACY_ROLE
    request.principal = { id: record.id, label: record.label, role, admin: role === 'admin', scope: record.scope ?? [] }
    // Only the not-found handler has no role of its own; it reads like any route of its method.
    const needed = config.role ?? defaultRole(request.method)
    if (!roleAllows(role, needed)) throw new ForbiddenError(`This operation needs the '${needed}' role; this key has '${role}'`)
    const now = Date.now()
    if ((lastTouch.get(hex) ?? 0) + TOUCH_INTERVAL_MS < now) {
      lastTouch.set(hex, now)
      fastify.store.touchApiKey(hex, new Date(now).toISOString()).catch((err) => request.log.debug({ reason: outageReason(err) }, 'could not record key use'))
    }
  })
}, { name: 'auth', dependencies: ['env', 'backends'] })
