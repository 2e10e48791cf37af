// Scan pipeline benchmark (not a test), on Redis:
// 1. POST /app/scan accepted per second: autocannon, 100 connections, a unique scan id per request,
//    against the API alone (no worker, so the queue only grows).
// 2. Time from POST to `completed` for a `quick` scan of 127.0.0.1 and of 127.0.0.0/24, with one
//    worker process and with two (worker.ts, as `npm run start:worker` runs it). SCAN_BATCH_HOSTS
//    splits the /24 into several batches so both workers share it.
//
//   npx tsx bench/pipeline.ts [--out result.json]
//   BENCH_POST_SECONDS=10 BENCH_BATCH_HOSTS=32 BENCH_REPEATS=1 (the defaults)
//
// The API and the workers each run in their own process; this one only generates load and reports.
// NVD matching uses the local fake NVD API of the tests (fixture records), fetched on demand as a real
// deployment would, at the client's default rate limit (5 requests per 30 s without a key). Each
// worker count starts from empty keys: its first scan pays those fetches ('cold NVD'), the next ones
// find the index warm.
// Redis: 127.0.0.1:6379 (REDIS_URL overrides); every key lives under a prefix of this run, deleted
// at the end.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { loadConfig } from '../lib/config'
import { openBackends, type Backends } from '../lib/backends'
import { startFakeNvd } from '../test/support/fake-nvd'
import { spawnWorker, type WorkerProcess } from '../test/support/worker-process'
import { freePort, loopbackAddress } from './support/loopback'

interface AutocannonResult {
  duration: number
  requests: { average: number, total: number, sent: number }
  latency: { p50: number, p99: number, average: number }
  '2xx': number
  non2xx: number
  errors: number
  timeouts: number
}
interface AutocannonRequest {
  method?: string
  path?: string
  headers?: Record<string, string>
  body?: string
  setupRequest?: (req: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest
}
type Autocannon = (opts: Record<string, unknown> & { requests?: AutocannonRequest[] }) => Promise<AutocannonResult>
// autocannon ships no types; only the part used here is described above.
const autocannon = require('autocannon') as Autocannon

const ROOT = path.join(__dirname, '..')
const REDIS_URL = loadConfig().REDIS_URL ?? 'redis://127.0.0.1:6379'
// The results database: DATABASE_URL, else the local PostgreSQL; a schema of this run's own, dropped at the end.
const DATABASE_URL = loadConfig().DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const KEY = `bench-service-key-${randomBytes(8).toString('hex')}`
const POST_SECONDS = Number(process.env.BENCH_POST_SECONDS ?? 10)
const BATCH_HOSTS = Number(process.env.BENCH_BATCH_HOSTS ?? 32)
const REPEATS = Number(process.env.BENCH_REPEATS ?? 1)
const CONNECTIONS = 100
const RUN = randomBytes(4).toString('hex')
const auth = { 'x-api-key': KEY, 'content-type': 'application/json' }



interface Api {
  base: string
  child: ChildProcess
  stop: () => Promise<void>
}

/** The API alone (`npm run start:api`), in its own process. */
async function startApi (env: Record<string, string>): Promise<Api> {
  const host = loopbackAddress()
  const port = await freePort(host)
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(ROOT, 'server.ts'), '--no-worker'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, PORT: String(port), HOST: host, LOG_LEVEL: 'warn', SERVICE_API_KEY: KEY, RATE_LIMIT_MAX: '100000000', ...env },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const base = `http://${host}:${port}`
  const deadline = Date.now() + 30_000
  for (;;) {
    try {
      if ((await fetch(`${base}/health`)).ok) break
    } catch {}
    if (child.exitCode !== null) throw new Error('the API process exited while starting')
    if (Date.now() > deadline) throw new Error('the API did not answer within 30 s')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    base,
    child,
    stop: async () => {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
      await exited
      clearTimeout(timer)
    }
  }
}

// The scaled deployment starts only with a CREDENTIALS_KEY; this run's own.
const BENCH_CREDENTIALS_KEY = randomBytes(32).toString('hex')

function envFor (prefix: string, nvdUrl: string): Record<string, string> {
  return {
    REDIS_URL, REDIS_PREFIX: prefix, QUEUE_PREFIX: `${prefix}-bull`, NVD_API_URL: nvdUrl, NVD_INDEX_FILE: '', SOURCES_FILE: '',
    DATABASE_URL, DATABASE_SCHEMA: prefix.toLowerCase().replace(/[^a-z0-9]/g, '_'), CREDENTIALS_KEY: BENCH_CREDENTIALS_KEY
  }
}

/** This process's view of what the API and workers under `env` store: to watch the queue and to clean up. */
async function backendsFor (env: Record<string, string>): Promise<Backends> {
  return await openBackends(loadConfig({}, env), pino({ level: 'warn' }, pino.destination(2)))
}

async function cleanUp (backends: Backends): Promise<void> {
  await backends.purge()
  await backends.close()
}

async function postRate (nvdUrl: string): Promise<{ accepted: number, perSecond: number, non2xx: number, errors: number, p50: number, p99: number }> {
  const prefix = `vulnscan-bench-pipeline-${RUN}-post`
  const backends = await backendsFor(envFor(prefix, nvdUrl))
  const api = await startApi(envFor(prefix, nvdUrl))
  try {
    let n = 0
    const body = (id: string): string => JSON.stringify({ id, priority: 1 + (n % 5), targets: [{ value: '127.0.0.1', type: 'single_ip' }], options: { template: 'quick' } })
    // A short warm-up, so the JIT and the connection pools are not part of the figure.
    await autocannon({ url: api.base, connections: CONNECTIONS, duration: 2, method: 'POST', headers: auth, requests: [{ method: 'POST', path: '/app/scan', setupRequest: (req) => ({ ...req, body: body(`warm-${n++}`) }) }] })
    const r = await autocannon({
      url: api.base,
      connections: CONNECTIONS,
      duration: POST_SECONDS,
      method: 'POST',
      headers: auth,
      requests: [{ method: 'POST', path: '/app/scan', setupRequest: (req) => ({ ...req, body: body(`post-${n++}`) }) }]
    })
    // Requests autocannon gave up on at the end are still being answered: let them land before the API stops.
    await new Promise((resolve) => setTimeout(resolve, 2000))
    return { accepted: r['2xx'], perSecond: r['2xx'] / POST_SECONDS, non2xx: r.non2xx, errors: r.errors + r.timeouts, p50: r.latency.p50, p99: r.latency.p99 }
  } finally {
    await api.stop()
    await cleanUp(backends)
  }
}

interface ScanTiming {
  workers: number
  target: string
  ms: number
  status: string
  hosts: number
  hostsUp: number
  openPorts: number
  findings: number
  batches: number
}

async function waitEnd (base: string, id: string, ms: number): Promise<Record<string, any>> {
  const deadline = Date.now() + ms
  for (;;) {
    const scan = await (await fetch(`${base}/app/scan/${encodeURIComponent(id)}`, { headers: auth })).json() as Record<string, any>
    if (['completed', 'failed', 'cancelled'].includes(scan.status)) return scan
    if (Date.now() > deadline) throw new Error(`scan ${id} did not end within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

async function scanTimes (workers: number, repeat: number, nvdUrl: string): Promise<ScanTiming[]> {
  const prefix = `vulnscan-bench-pipeline-${RUN}-w${workers}-r${repeat}`
  const env = envFor(prefix, nvdUrl)
  const backends = await backendsFor(env)
  const api = await startApi(env)
  const procs: WorkerProcess[] = []
  try {
    for (let i = 0; i < workers; i++) procs.push(spawnWorker({ ...env, SCAN_BATCH_HOSTS: String(BATCH_HOSTS) }))
    await Promise.all(procs.map((w) => w.ready()))
    await waitWorkers(backends, workers)
    const out: ScanTiming[] = []
    // The first scan fills the NVD index on demand (at the NVD client's rate limit); the others find it warm.
    const cases = [
      { label: '127.0.0.1 (cold NVD)', target: { value: '127.0.0.1', type: 'single_ip' } },
      { label: '127.0.0.1', target: { value: '127.0.0.1', type: 'single_ip' } },
      { label: '127.0.0.0/24', target: { value: '127.0.0.0/24', type: 'cidr' } }
    ]
    for (const c of cases) {
      const id = `bench-${c.target.type}-${randomBytes(3).toString('hex')}`
      const at = performance.now()
      const res = await fetch(`${api.base}/app/scan`, { method: 'POST', headers: auth, body: JSON.stringify({ id, targets: [c.target], options: { template: 'quick' } }) })
      if (res.status !== 200) throw new Error(`POST answered ${res.status}: ${await res.text()}`)
      const scan = await waitEnd(api.base, id, 600_000)
      const ms = performance.now() - at
      const f = scan.summary?.findings ?? {}
      const planned = procs.flatMap((w) => w.lines).find((l) => l.msg === 'scan planned' && l.scanId === id)
      out.push({
        workers,
        target: c.label,
        ms,
        status: scan.status,
        hosts: scan.progress.hostsTotal,
        hostsUp: scan.summary?.hostsUp ?? 0,
        openPorts: scan.summary?.openPorts ?? 0,
        findings: Object.values(f as Record<string, number>).reduce((a, b) => a + b, 0),
        batches: typeof planned?.batches === 'number' ? planned.batches : 0
      })
    }
    return out
  } finally {
    await Promise.all(procs.map((w) => w.stop()))
    await api.stop()
    await cleanUp(backends)
  }
}

/** Wait until `count` BullMQ workers are connected to the queue, so no timing includes a start-up. */
async function waitWorkers (backends: Backends, count: number): Promise<void> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const n = await backends.queue.workers()
    if (n >= count) return
    if (Date.now() > deadline) throw new Error(`only ${n} of ${count} workers connected within 60 s`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function main (): Promise<void> {
  const outIdx = process.argv.indexOf('--out')
  const outFile = outIdx >= 0 ? process.argv[outIdx + 1] : undefined
  const nvd = await startFakeNvd({ rateLimit: null })
  try {
    process.stderr.write(`POST /app/scan for ${POST_SECONDS} s, ${CONNECTIONS} connections...\n`)
    const post = await postRate(nvd.baseUrl)
    const scans: ScanTiming[] = []
    for (let r = 0; r < REPEATS; r++) {
      for (const workers of [1, 2]) {
        process.stderr.write(`quick scans with ${workers} worker(s), round ${r + 1} of ${REPEATS}...\n`)
        scans.push(...await scanTimes(workers, r, nvd.baseUrl))
      }
    }
    const machine = { cpus: os.cpus().length, node: process.version }

    const lines = [
      `POST /app/scan (Redis, API alone, ${CONNECTIONS} connections, ${POST_SECONDS} s): ${Math.round(post.perSecond).toLocaleString('en')} accepted/s ` +
        `(${post.accepted.toLocaleString('en')} accepted, ${post.non2xx} non-2xx, ${post.errors} errors; latency p50 ${post.p50} ms, p99 ${post.p99} ms)`,
      '',
      `quick scan, POST to completed (SCAN_BATCH_HOSTS=${BATCH_HOSTS}, WORKER_CONCURRENCY default per worker process)`,
      `${'target'.padEnd(22)} ${'workers'.padStart(7)} ${'time'.padStart(9)} ${'status'.padStart(10)} ${'hosts'.padStart(6)} ${'up'.padStart(4)} ${'open'.padStart(5)} ${'findings'.padStart(8)} ${'batches'.padStart(7)}`
    ]
    for (const s of scans) {
      lines.push(`${s.target.padEnd(22)} ${String(s.workers).padStart(7)} ${`${(s.ms / 1000).toFixed(2)} s`.padStart(9)} ${s.status.padStart(10)} ${String(s.hosts).padStart(6)} ${String(s.hostsUp).padStart(4)} ${String(s.openPorts).padStart(5)} ${String(s.findings).padStart(8)} ${String(s.batches).padStart(7)}`)
    }
    process.stdout.write(lines.join('\n') + '\n')
    if (outFile) writeFileSync(outFile, JSON.stringify({ machine, post, scans, batchHosts: BATCH_HOSTS }, null, 2) + '\n')
  } finally {
    await nvd.close()
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`)
  process.exit(1)
})
