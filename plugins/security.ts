// Security headers (helmet) and the per-key rate limit; decorates nothing.
import fp from 'fastify-plugin'
import helmet from '@fastify/helmet'
import rateLimit from '@fastify/rate-limit'
import createError from '@fastify/error'

const RateLimitedError = createError('VULNSCAN_RATE_LIMITED', 'Rate limit exceeded: at most %s requests per window; retry in %s', 429)

export default fp(async function securityPlugin (fastify) {
  await fastify.register(helmet, {
    // Swagger UI needs its own inline styles and data: images; everything else stays locked down.
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:', 'validator.swagger.io'],
        scriptSrc: ["'self'"]
      }
    }
  })
  await fastify.register(rateLimit, {
    global: true,
    // After auth (onRequest), so that the limit follows the key rather than the client address.
    hook: 'preHandler',
    // A Redis outage must not turn every request into an error; auth already fails closed.
    skipOnError: true,
    max: fastify.config.RATE_LIMIT_MAX,
    timeWindow: fastify.config.RATE_LIMIT_WINDOW,
    ...(fastify.config.REDIS_URL ? { redis: fastify.redis, nameSpace: `${fastify.config.REDIS_PREFIX}:ratelimit:` } : {}),
    keyGenerator: (request) => request.principal ? `key:${request.principal.id}` : `ip:${request.ip}`,
    errorResponseBuilder: (_request, context) => new RateLimitedError(context.max, context.after)
  })
}, { name: 'security', dependencies: ['env', 'redis', 'auth'] })
