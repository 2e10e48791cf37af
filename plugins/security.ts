// Security headers (helmet) and the per-key rate limit; decorates nothing.
import Fastify from 'fastify'
import fp from 'fastify-plugin'
import helmet, { type FastifyHelmetOptions } from '@fastify/helmet'
import rateLimit from '@fastify/rate-limit'
import createError from '@fastify/error'

const RateLimitedError = createError('VULNSCAN_RATE_LIMITED', 'Rate limit exceeded: at most %s requests per window; retry in %s', 429)

/**
 * Helmet's options. HSTS and `upgrade-insecure-requests` only when the service is reached over TLS: sent over plain
 * HTTP to a browser on another machine, they make it fetch every /docs asset over https, which fails (a blank page).
 */
export function helmetOptions ({ behindTls }: { behindTls: boolean }): FastifyHelmetOptions {
  return {
    // Swagger UI needs its own inline styles and data: images; everything else stays locked down.
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:', 'validator.swagger.io'],
        scriptSrc: ["'self'"],
        upgradeInsecureRequests: behindTls ? [] : null
      }
    },
    strictTransportSecurity: behindTls
  }
}

/** The options of the default, plain-HTTP service. */
export const HELMET_OPTIONS: FastifyHelmetOptions = helmetOptions({ behindTls: false })

/**
 * The headers @fastify/helmet sets with these options, read once from a throwaway instance. Without CSP
 * nonces they are the same on every response, while the plugin rebuilds helmet's middleware (re-parsing
 * the CSP directives) on every request: a tenth of the time of a small authenticated GET.
 */
export async function helmetHeaders (options: FastifyHelmetOptions): Promise<Record<string, string>> {
  const probe = Fastify({ logger: false })
  try {
    await probe.register(helmet, options)
    probe.get('/with', async () => 'x')
    probe.get('/without', { helmet: false }, async () => 'x')
    const [withHelmet, without] = await Promise.all([probe.inject('/with'), probe.inject('/without')])
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(withHelmet.headers)) {
      if (typeof value === 'string' && without.headers[name] === undefined) headers[name] = value
    }
    if (Object.keys(headers).length === 0) throw new Error('@fastify/helmet set no headers')
    return headers
  } finally {
    await probe.close()
  }
}

export default fp(async function securityPlugin (fastify) {
  const headers = await helmetHeaders(helmetOptions({ behindTls: fastify.config.BEHIND_TLS }))
  fastify.addHook('onRequest', function securityHeaders (_request, reply, done) {
    reply.headers(headers)
    done()
  })
  // Shared by every instance where there are several; otherwise the plugin's own in-process count.
  const store = fastify.backends.shared?.requests
  await fastify.register(rateLimit, {
    global: true,
    // After auth (onRequest), so that the limit follows the key rather than the client address.
    hook: 'preHandler',
    // Fail closed: while the shared count cannot be reached, requests get a 503 rather than no limit at all.
    skipOnError: false,
    max: fastify.config.RATE_LIMIT_MAX,
    timeWindow: fastify.config.RATE_LIMIT_WINDOW,
    // The plugin calls `new store(options)`; a constructor that returns an object yields that object.
    ...(store ? { store: function sharedStore () { return store } as never } : {}),
    keyGenerator: (request) => request.principal ? `key:${request.principal.id}` : `ip:${request.ip}`,
    errorResponseBuilder: (_request, context) => new RateLimitedError(context.max, context.after)
  })
}, { name: 'security', dependencies: ['env', 'backends', 'auth'] })
