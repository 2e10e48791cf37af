// The children of bench/results-scale.ts, talked to over IPC.
// - `api`: the real app (app.ts) on the backend the bench names. On the embedded backend it also writes the scan
//   results when asked, through the results store the app opened with openBackends, so that the store is filled
//   in the process that serves it.
// - `writer` (the scaled backend only): what a worker holds, the backends opened with openBackends and nothing
//   else, writing the results when asked; the API process then only serves, as it does in that deployment.
// With BENCH_TRACE_MEMORY set, each child prints its RSS, V8 heap and external memory to stderr every second (to
// see which phase of the bench a peak RSS comes from).
import { getHeapSpaceStatistics, getHeapStatistics } from 'node:v8'
import Fastify from 'fastify'
import pino from 'pino'
import app, { serverOptions } from '../../app'
import { openBackends } from '../../lib/backends'
import { loadConfig, type Config } from '../../lib/config'
import type { ResultsStore } from '../../lib/store/results-types'
import { PostgresResultsStore } from '../../lib/store/postgres/results'
import type { ScanRecord, Store } from '../../lib/store/types'
import { resultsData } from './results-data'
import { announce } from './child-server'

type Message =
  | { cmd: 'write', from: number, count: number, batch: number, at: number, scanId: string, rescan: boolean }
  | { cmd: 'memory' }
  | { cmd: 'scan', id: string, at: string, hosts: number }
  | { cmd: 'vacuum' }

// Only the store's own time is counted: building the writes is the scanner's work, not the store's.
async function write (results: ResultsStore, m: Extract<Message, { cmd: 'write' }>): Promise<{ storeMs: number, hosts: number, findings: number }> {
  const data = resultsData()
  let storeMs = 0
  let findings = 0
  for (let i = m.from; i < m.from + m.count; i += m.batch) {
    const writes = []
    for (let k = i; k < Math.min(i + m.batch, m.from + m.count); k++) {
      writes.push(data.write(k, new Date(m.at + k).toISOString(), m.scanId, m.rescan))
    }
    findings += writes.reduce((n, w) => n + w.findings.length, 0)
    const t0 = performance.now()
    await results.recordHosts(writes)
    storeMs += performance.now() - t0
  }
  return { storeMs, hosts: m.count, findings }
}

/**
 * VACUUM (ANALYZE) of the results tables where the server's autovacuum is off: no page of freshly written tables is
 * otherwise marked all-visible (a count through an index reads every row's page too), and the GIN indexes keep every
 * new entry in a pending list that each query through them scans.
 */
async function vacuum (results: ResultsStore): Promise<{ autovacuum: boolean, seconds: number | null }> {
  if (!(results instanceof PostgresResultsStore)) throw new Error('no results database to vacuum')
  if (await results.autovacuumOn()) return { autovacuum: true, seconds: null }
  const t0 = performance.now()
  await results.vacuum()
  return { autovacuum: false, seconds: (performance.now() - t0) / 1000 }
}

function memory (): object {
  global.gc?.()
  const heap = getHeapStatistics()
  return {
    rss: process.memoryUsage().rss,
    maxRss: process.resourceUsage().maxRSS * 1024,
    heapUsed: heap.used_heap_size,
    heapCommitted: heap.total_heap_size,
    external: heap.external_memory,
    spaces: Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { used: s.space_used_size, committed: s.space_size }]))
  }
}

/** The finished scan whose writes the bench makes, so that `scanId` filters name a scan the API knows. */
function scanRecord (id: string, at: string, hosts: number): ScanRecord {
  return {
    id,
    status: 'completed',
    targets: [{ value: '10.40.0.0/14', type: 'cidr' }],
    template: 'quick',
    priority: 5,
    requestHash: id,
    createdAt: at,
    startedAt: at,
    finishedAt: at,
    progress: { hostsTotal: hosts, hostsDone: hosts, portsTotal: 0, portsDone: 0, percent: 100 },
    createdBy: 'service'
  }
}

function serve (results: ResultsStore, store?: Store): void {
  process.on('message', (msg: Message) => {
    if (msg.cmd === 'scan' && store !== undefined) {
      store.createScan(scanRecord(msg.id, msg.at, msg.hosts)).then(() => process.send?.({ scan: msg.id }), (err: Error) => process.send?.({ error: err.stack ?? err.message }))
    } else if (msg.cmd === 'vacuum') {
      vacuum(results).then((r) => process.send?.({ vacuum: r }), (err: Error) => process.send?.({ error: err.stack ?? err.message }))
    } else if (msg.cmd === 'write') {
      write(results, msg).then((r) => process.send?.({ written: r }), (err: Error) => process.send?.({ error: err.stack ?? err.message }))
    } else if (msg.cmd === 'memory') {
      process.send?.({ memory: memory() })
    }
  })
}

async function writer (config: Config): Promise<void> {
  const backends = await openBackends(config, pino({ level: 'silent' }))
  serve(backends.results)
  process.on('disconnect', () => { backends.close().finally(() => process.exit(0)) })
  process.send?.({ port: 0 })
}

async function main (): Promise<void> {
  const env = process.env
  if (env.BENCH_TRACE_MEMORY !== undefined) setInterval(() => { const m = process.memoryUsage(); process.stderr.write(`MEM ${process.argv[3] ?? 'api'} ${new Date().toISOString().slice(11, 19)} rss ${Math.round(m.rss / 1e6)} heapTotal ${Math.round(m.heapTotal / 1e6)} heapUsed ${Math.round(m.heapUsed / 1e6)} external ${Math.round(m.external / 1e6)} ab ${Math.round(m.arrayBuffers / 1e6)}\n`) }, 1000).unref()
  const backend = process.argv[2]
  const role = process.argv[3] ?? 'api'
  if (backend !== 'memory' && backend !== 'redis') throw new Error(`unknown backend '${backend}'`)
  if (role !== 'api' && !(role === 'writer' && backend === 'redis')) throw new Error(`no role '${role}' on the ${backend} backend`)
  const config = loadConfig({
    SERVICE_API_KEY: env.BENCH_SERVICE_KEY,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: 1_000_000_000,
    REDIS_PREFIX: env.BENCH_REDIS_PREFIX,
    QUEUE_PREFIX: `${env.BENCH_REDIS_PREFIX ?? 'vulnscan-bench'}-bull`,
    ...(backend === 'redis' ? { CREDENTIALS_KEY: env.BENCH_CREDENTIALS_KEY ?? 'be7c4ed0'.repeat(8), REDIS_URL: env.BENCH_REDIS_URL, DATABASE_URL: env.BENCH_DATABASE_URL, DATABASE_SCHEMA: env.BENCH_DATABASE_SCHEMA } : {})
  }, {})
  if (role === 'writer') return await writer(config)
  const fastify = Fastify(serverOptions(config))
  await fastify.register(app, { config })
  await fastify.listen({ port: 0, host: '127.0.0.1' })
  const address = fastify.server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  serve(fastify.results, fastify.store)
  announce(fastify, address.port)
}

main().catch((err) => {
  process.stderr.write(`bench server failed: ${(err as Error).stack ?? String(err)}\n`)
  process.exit(1)
})
