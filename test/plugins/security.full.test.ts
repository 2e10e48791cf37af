import { test } from 'tap'
import Fastify from 'fastify'
import helmet from '@fastify/helmet'
import { HELMET_OPTIONS, helmetHeaders, helmetOptions } from '../../plugins/security'
import { build, redisAnswers, SERVICE_KEY, uniquePrefix } from '../helper'

/** What @fastify/helmet itself sets, registered the usual way (per request) with the same options. */
async function reference (): Promise<Record<string, string | string[] | number | undefined>> {
  const f = Fastify({ logger: false })
  await f.register(helmet, HELMET_OPTIONS)
  f.get('/', async () => ({ ok: true }))
  const res = await f.inject('/')
  await f.close()
  return res.headers
}

test('the headers worked out once are the ones @fastify/helmet sets per request', async (t) => {
  const ref = await reference()
  const once = await helmetHeaders(HELMET_OPTIONS)
  t.ok(Object.keys(once).length >= 10, 'the full helmet set')
  for (const [name, value] of Object.entries(once)) t.equal(value, ref[name], name)
  t.match(once['content-security-policy'], /img-src 'self' data: validator\.swagger\.io/)
  t.notOk('content-type' in once || 'content-length' in once, 'only helmet\'s own headers')
})

test('public, authenticated and docs responses carry every helmet header', async (t) => {
  const ref = await reference()
  const once = await helmetHeaders(HELMET_OPTIONS)
  const { app } = await build(t)
  const responses = {
    health: await app.inject({ url: '/health' }),
    host: await app.inject({ url: '/host', headers: { 'x-api-key': SERVICE_KEY } }),
    docs: await app.inject({ url: '/docs/' })
  }
  for (const [what, res] of Object.entries(responses)) {
    t.equal(res.statusCode, 200, `${what} answers`)
    for (const name of Object.keys(once)) {
      // Swagger UI answers with its own static CSP, which wins over helmet's on its pages.
      if (what === 'docs' && name === 'content-security-policy') t.match(res.headers[name], /default-src 'self'/, 'docs: its own CSP')
      else t.equal(res.headers[name], ref[name], `${what}: ${name}`)
    }
  }
})

test('HSTS and upgrade-insecure-requests only behind TLS', async (t) => {
  const { app: plain } = await build(t)
  const { app: tls } = await build(t, 'memory', { BEHIND_TLS: true })
  for (const url of ['/health', '/docs/']) {
    const a = await plain.inject({ url })
    t.notOk(a.headers['strict-transport-security'], `${url}: no HSTS over plain HTTP`)
    t.notMatch(String(a.headers['content-security-policy']), /upgrade-insecure-requests/, `${url}: no upgrade over plain HTTP`)
    const b = await tls.inject({ url })
    t.match(b.headers['strict-transport-security'], /max-age=\d+/, `${url}: HSTS behind TLS`)
    t.match(String(b.headers['content-security-policy']), /upgrade-insecure-requests/, `${url}: upgrade behind TLS`)
  }
  t.notOk('strict-transport-security' in await helmetHeaders(helmetOptions({ behindTls: false })))
})

test('Redis rate limit: exact at the limit, shared by instances, synced without a round trip per request', async (t) => {
  if (!await redisAnswers()) {
    t.comment('no Redis answers: skipped')
    return
  }
  const prefix = uniquePrefix('security').replace(/:/g, '.')
  const shared = { REDIS_PREFIX: prefix, QUEUE_PREFIX: `${prefix}-bull` }
  const auth = { 'x-api-key': SERVICE_KEY }

  const { app: one } = await build(t, 'redis', { ...shared, RATE_LIMIT_MAX: 3 })
  const statuses: number[] = []
  for (let i = 0; i < 4; i++) statuses.push((await one.inject({ url: '/host', headers: auth })).statusCode)
  t.same(statuses, [200, 200, 200, 429], 'one instance: the fourth request is refused')

  // A second instance on the same Redis sees the first one's count.
  const { app: two } = await build(t, 'redis', { ...shared, RATE_LIMIT_MAX: 3 })
  const other = await two.inject({ url: '/host', headers: auth })
  t.equal(other.statusCode, 429, 'another instance refuses the same key')
  t.equal(other.json().code, 'VULNSCAN_RATE_LIMITED')

  // Far below the limit, requests are counted locally and reach Redis in batches: the shared counter ends
  // up with every request, and the remaining count seen by a client goes down one by one.
  const { app: three, redis, config } = await build(t, 'redis', { RATE_LIMIT_MAX: 100_000 })
  // The counter's own connection, reached past its privacy: what each call to Redis costs is the point here.
  const client = (three.backends.shared?.requests as unknown as { redis: Record<string, (...args: unknown[]) => Promise<unknown>> }).redis
  const add = client.vulnscanRateAdd
  let roundTrips = 0
  let inside = false
  // Auto-pipelining calls the command again from inside the first call: count the outer calls only.
  client.vulnscanRateAdd = function (...args: unknown[]) {
    if (!inside) roundTrips++
    inside = true
    try {
      return add.apply(this, args)
    } finally {
      inside = false
    }
  }
  const remaining: number[] = []
  const burst = await Promise.all(Array.from({ length: 200 }, () => three.inject({ url: '/host', headers: auth })))
  for (const res of burst) {
    t.equal(res.statusCode, 200)
    remaining.push(Number(res.headers['x-ratelimit-remaining']))
  }
  t.equal(new Set(remaining).size, remaining.length, 'every request got its own count')
  t.equal(Math.min(...remaining), 100_000 - 200)
  const key = await redis!.keys(`${config.REDIS_PREFIX}:ratelimit:*`)
  t.equal(key.length, 1, 'one shared counter for the key')
  let count = 0
  for (let i = 0; i < 50 && count < 200; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    count = Number(await redis!.get(key[0]))
  }
  t.equal(count, 200, 'the shared counter has every request')
  t.ok(roundTrips >= 2 && roundTrips <= 20, `a few syncs for 200 requests (${roundTrips})`)
  t.ok(Number(await redis!.pttl(key[0])) > 0, 'the window expires')
})
