// A server child for bench/http.ts, so that the load generator never shares the server's event loop.
// `hello` is the bare Fastify reference; `memory` and `redis` build the real app from app.ts. The parent
// talks over IPC: the child sends {port} once listening, and seeds hosts when asked.
import Fastify, { type FastifyInstance } from 'fastify'
import app, { serverOptions } from '../../app'
import { loadConfig } from '../../lib/config'
import { realisticHosts, seedHosts } from './hosts'
import { announce } from './child-server'

type Message = { cmd: 'seed', count: number } | { cmd: 'page', body: string }

let page50 = ''

async function helloWorld (): Promise<FastifyInstance> {
  const fastify = Fastify({ logger: false })
  fastify.get('/', async () => ({ hello: 'world' }))
  // The exact bytes the app served for GET /host?limit=50, handed over by the bench: what bare Fastify
  // does with a page that size, to tell the cost of the payload from the cost of the route.
  fastify.get('/page50', async (_request, reply) => reply.type('application/json; charset=utf-8').send(page50))
  return fastify
}

async function vulnscan (backend: 'memory' | 'redis'): Promise<FastifyInstance> {
  const env = process.env
  const config = loadConfig({
    SERVICE_API_KEY: env.BENCH_SERVICE_KEY,
    LOG_LEVEL: 'silent',
    // The bench measures the cost of the limiter, not its refusals.
    RATE_LIMIT_MAX: 1_000_000_000,
    REDIS_PREFIX: env.BENCH_REDIS_PREFIX ?? 'vulnscan-bench',
    QUEUE_PREFIX: `${env.BENCH_REDIS_PREFIX ?? 'vulnscan-bench'}-bull`,
    ...(backend === 'redis'
      ? { CREDENTIALS_KEY: env.BENCH_CREDENTIALS_KEY ?? 'be7c4ed0'.repeat(8), REDIS_URL: env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', DATABASE_URL: env.BENCH_DATABASE_URL, DATABASE_SCHEMA: env.BENCH_DATABASE_SCHEMA }
      : {})
  }, {})
  const fastify = Fastify(serverOptions(config))
  await fastify.register(app, { config })
  return fastify
}

async function main (): Promise<void> {
  const kind = process.argv[2]
  if (kind !== 'hello' && kind !== 'memory' && kind !== 'redis') throw new Error(`unknown server kind '${kind}'`)
  const fastify = kind === 'hello' ? await helloWorld() : await vulnscan(kind)
  await fastify.listen({ port: 0, host: process.env.BENCH_HOST ?? '127.0.0.1' })
  const address = fastify.server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')

  process.on('message', (msg: Message) => {
    if (msg.cmd === 'page') {
      page50 = msg.body
      process.send?.({ page: page50.length })
    } else if (msg.cmd === 'seed') {
      seedHosts(fastify, realisticHosts(msg.count))
        .then(() => process.send?.({ seeded: msg.count }))
        .catch((err: Error) => process.send?.({ error: err.message }))
    }
  })
  announce(fastify, address.port)
}

main().catch((err) => {
  process.stderr.write(`bench server failed: ${(err as Error).stack ?? String(err)}\n`)
  process.exit(1)
})
