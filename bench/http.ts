// HTTP throughput of GET /host against a bare Fastify hello-world, on both backends, in one run.
//   npx tsx bench/http.ts [--out figures.json] [--duration 10] [--warmup 3] [--connections 100]
//                         [--rounds 2] [--backends memory,redis] [--only hello,empty-service,…] [--cpu-prof <dir>]
// --rounds splits each case's time into that many rounds, the order of the cases reversed every round; the
// dynamic/infrastructure key ratio is the median of the rounds' ratios, which other load on the machine moves least.
// --only and --cpu-prof are for finding where the time goes: the targets are only judged on a full run.
// Each server runs in a child process; this process only generates load (autocannon) and reports.
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import Table from 'cli-table3'
import pino from 'pino'
import { loadConfig } from '../lib/config'
import { openBackends, type Backends } from '../lib/backends'
import { loopbackAddress } from './support/loopback'
import { forkServer, stopServer, type ChildServer } from './support/child-server'

const ROOT = join(__dirname, '..')
const SERVER = join(__dirname, 'support', 'http-server.ts')
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
// The results database of the `redis` server: a schema of this run's own in it, dropped at the end.
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const schemaOf = (prefix: string): string => prefix.toLowerCase().replace(/[^a-z0-9]/g, '_')
const HOSTS = 50
// The servers of this run listen here: a loopback address of their own, not the machine's 127.0.0.1.
const HOST = loopbackAddress()

// No colours: the tables end up in logs and notes.
const PLAIN = { head: [], border: [] }

const TARGETS = { emptyVsHello: 0.5, pageVsHello: 0.3, dynamicVsService: 0.1 }

const { values: args } = parseArgs({
  options: {
    out: { type: 'string' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '2' },
    backends: { type: 'string', default: 'memory,redis' },
    only: { type: 'string' },
    'cpu-prof': { type: 'string' }
  }
})
const DURATION = Number(args.duration)
const WARMUP = Number(args.warmup)
const CONNECTIONS = Number(args.connections)
const ROUNDS = Math.max(1, Math.floor(Number(args.rounds)))
const ONLY = args.only ? new Set(args.only.split(',')) : null

type Backend = 'memory' | 'redis'
type CaseName = 'hello' | 'hello-page50' | 'empty-service' | 'empty-dynamic' | 'page50-service' | 'page50-dynamic' | 'varied-service'

interface Measurement {
  backend: Backend
  case: CaseName
  path: string
  reqPerSec: number
  p50Ms: number
  p99Ms: number
  kbPerSec: number
  /** Bytes per response, headers included: the 50-host page is far heavier than the hello-world. */
  bytesPerResponse: number
  requests: number
  /** req/s in each round, in round order: rounds of different cases at the same index ran side by side. */
  roundReqPerSec: number[]
  non2xx: number
  errors: number
  timeouts: number
}

type Server = ChildServer

function startServer (kind: 'hello' | Backend, env: Record<string, string>): Promise<Server> {
  // --require (not --import) so that @fastify/autoload sees tsx among the preloaded modules and loads .ts plugins.
  const execArgv = ['--require', 'tsx/cjs']
  if (args['cpu-prof']) execArgv.push('--cpu-prof', `--cpu-prof-dir=${resolve(args['cpu-prof'])}`, `--cpu-prof-name=${kind}-${Date.now()}.cpuprofile`)
  return forkServer(SERVER, [kind], { cwd: ROOT, execArgv, env: { ...process.env, BENCH_HOST: HOST, ...env }, label: `${kind} server` })
}

function seed (server: Server, count: number): Promise<void> {
  return new Promise((done, reject) => {
    server.child.once('message', (msg: { seeded?: number, error?: string }) => {
      if (msg.seeded === count) done()
      else reject(new Error(`seeding failed: ${msg.error ?? JSON.stringify(msg)}`))
    })
    server.child.send({ cmd: 'seed', count })
  })
}

async function request (port: number, path: string, init: RequestInit = {}): Promise<{ status: number, body: any }> {
  const res = await fetch(`http://${HOST}:${port}${path}`, init)
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

/** Check the answer once before loading the server with it: a benchmark of 401s or 429s measures nothing. */
async function expectHosts (port: number, key: string, total: number): Promise<void> {
  const { status, body } = await request(port, `/host?limit=${HOSTS}`, { headers: { 'x-api-key': key } })
  if (status !== 200) throw new Error(`GET /host answered ${status}: ${JSON.stringify(body)}`)
  if (body.total !== total || body.items.length !== Math.min(total, HOSTS)) throw new Error(`GET /host gave total ${body.total}, ${body.items.length} items; expected ${total}`)
  if (total > 0 && !(body.items[0].ports.length >= 3 && body.items[0].ports[0].product)) throw new Error('GET /host items lack ports or their products')
}

interface Case {
  name: CaseName
  port: number
  path: string
  /** Requests cycle through these paths instead of repeating `path` (queries that differ: no page cache hit). */
  paths?: string[]
  headers: Record<string, string>
}

/**
 * 328 host list queries that differ (limit × sort × order), asked in turn: more pages than the host page cache
 * keeps (2,000 hosts' worth), so each answer is built, where one repeated URL measures the cache.
 */
function variedHostQueries (): string[] {
  const out: string[] = []
  for (let limit = 10; limit <= 50; limit++) {
    for (const sort of ['lastSeen', 'address', 'findings', 'severity']) for (const order of ['asc', 'desc']) out.push(`/host?limit=${limit}&sort=${sort}&order=${order}`)
  }
  return out
}

/**
 * Measure the cases of one phase: each is warmed up, then measured in ROUNDS rounds of DURATION / ROUNDS, the
 * order given and its reverse by turns. Other work on the machine drifts over a run; interleaving puts every
 * case under the same drift, so the ratios between cases hold better than their absolute figures.
 */
async function measurePhase (backend: Backend, all: Case[]): Promise<Measurement[]> {
  const cases = all.filter((c) => ONLY === null || ONLY.has(c.name))
  const url = (c: Case): string => `http://${HOST}:${c.port}${c.path}`
  const requests = (c: Case): { requests?: Array<{ method: 'GET', path: string }> } => c.paths === undefined ? {} : { requests: c.paths.map((path) => ({ method: 'GET' as const, path })) }
  for (const c of cases) await autocannon({ url: url(c), connections: CONNECTIONS, duration: WARMUP, headers: c.headers, ...requests(c) })
  const halves = new Map<CaseName, autocannon.Result[]>(cases.map((c) => [c.name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of round % 2 === 0 ? cases : [...cases].reverse()) {
      halves.get(c.name)?.push(await autocannon({ url: url(c), connections: CONNECTIONS, duration: DURATION / ROUNDS, headers: c.headers, ...requests(c) }))
    }
  }
  return cases.map((c) => {
    const rs = halves.get(c.name) ?? []
    const sum = (f: (r: autocannon.Result) => number): number => rs.reduce((acc, r) => acc + f(r), 0)
    const seconds = sum((r) => r.duration)
    const requests = sum((r) => r.requests.total)
    const bytes = sum((r) => r.throughput.total)
    const m: Measurement = {
      backend,
      case: c.name,
      path: c.path,
      reqPerSec: Math.round(requests / seconds),
      p50Ms: Math.max(...rs.map((r) => r.latency.p50)),
      // The worst round: a percentile of several histograms cannot be had from their percentiles.
      p99Ms: Math.max(...rs.map((r) => r.latency.p99)),
      kbPerSec: Math.round(bytes / seconds / 1024),
      bytesPerResponse: requests > 0 ? Math.round(bytes / requests) : 0,
      requests,
      roundReqPerSec: rs.map((r) => r.requests.total / r.duration),
      non2xx: sum((r) => r.non2xx),
      errors: sum((r) => r.errors),
      timeouts: sum((r) => r.timeouts)
    }
    const failed = m.non2xx + m.errors + m.timeouts > 0 ? `  (!) ${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts` : ''
    console.log(`  ${backend.padEnd(6)} ${c.name.padEnd(15)} ${m.reqPerSec} req/s, p99 ${m.p99Ms} ms${failed}`)
    return m
  })
}

/** The backends the `redis` server child opens (same URL and prefixes): to probe Redis and to clean up after. */
async function redisBackends (prefix: string): Promise<Backends> {
  const config = loadConfig({ REDIS_URL, REDIS_PREFIX: prefix, QUEUE_PREFIX: `${prefix}-bull`, NVD_INDEX_FILE: '', SOURCES_FILE: '', LOG_LEVEL: 'silent', DATABASE_URL, DATABASE_SCHEMA: schemaOf(prefix) }, {})
  return await openBackends(config, pino({ level: 'silent' }))
}

async function redisAnswers (): Promise<boolean> {
  try {
    // The probe migrates a results schema of its own: dropped again, so that no run leaves it behind.
    const probe = await redisBackends(`vulnscan-bench-probe.${randomBytes(4).toString('hex')}`)
    try {
      await probe.purge()
    } finally {
      await probe.close()
    }
    return true
  } catch {
    return false
  }
}

async function runBackend (backend: Backend): Promise<Measurement[]> {
  const out: Measurement[] = []
  const serviceKey = `bench-${randomBytes(24).toString('base64url')}`
  const prefix = `vulnscan-bench-http.${randomBytes(4).toString('hex')}`
  const env: Record<string, string> = { BENCH_SERVICE_KEY: serviceKey, BENCH_REDIS_PREFIX: prefix, BENCH_REDIS_URL: REDIS_URL, BENCH_DATABASE_URL: DATABASE_URL, BENCH_DATABASE_SCHEMA: schemaOf(prefix) }
  // Both servers stay up for the whole backend so that their measurements can be interleaved; the one not
  // under load is idle.
  const [hello, server] = await Promise.all([startServer('hello', {}), startServer(backend, env)])
  try {
    const created = await request(server.port, '/admin/keys', {
      method: 'POST',
      headers: { 'x-api-key': serviceKey, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'bench' })
    })
    if (created.status !== 201 || typeof created.body?.key !== 'string') throw new Error(`POST /admin/keys answered ${created.status}`)
    const dynamicKey: string = created.body.key
    const keys = { service: { 'x-api-key': serviceKey }, dynamic: { 'x-api-key': dynamicKey } }

    await expectHosts(server.port, serviceKey, 0)
    await expectHosts(server.port, dynamicKey, 0)
    out.push(...await measurePhase(backend, [
      { name: 'hello', port: hello.port, path: '/', headers: {} },
      { name: 'empty-service', port: server.port, path: '/host', headers: keys.service },
      { name: 'empty-dynamic', port: server.port, path: '/host', headers: keys.dynamic }
    ]))

    await seed(server, HOSTS)
    await expectHosts(server.port, serviceKey, HOSTS)
    await expectHosts(server.port, dynamicKey, HOSTS)
    const served = await (await fetch(`http://${HOST}:${server.port}/host?limit=${HOSTS}`, { headers: keys.service })).text()
    await new Promise<void>((resolve) => { hello.child.once('message', () => resolve()); hello.child.send({ cmd: 'page', body: served }) })
    const reference = await (await fetch(`http://${HOST}:${hello.port}/page50`)).text()
    if (served !== reference) throw new Error(`the hello-page50 reference (${reference.length} chars) differs from GET /host?limit=${HOSTS} (${served.length})`)
    out.push(...await measurePhase(backend, [
      { name: 'hello-page50', port: hello.port, path: '/page50', headers: {} },
      { name: 'page50-service', port: server.port, path: `/host?limit=${HOSTS}`, headers: keys.service },
      { name: 'page50-dynamic', port: server.port, path: `/host?limit=${HOSTS}`, headers: keys.dynamic },
      { name: 'varied-service', port: server.port, path: '/host', paths: variedHostQueries(), headers: keys.service }
    ]))
  } finally {
    await Promise.all([stopServer(hello), stopServer(server)])
    if (backend === 'redis') {
      const backends = await redisBackends(prefix)
      try {
        await backends.purge()
      } finally {
        await backends.close()
      }
    }
  }
  return out
}

interface Ratio {
  backend: Backend
  name: string
  value: number
  target: string
  met: boolean
}

function ratios (results: Measurement[], backend: Backend): Ratio[] {
  const rps = (c: CaseName): number => results.find((r) => r.backend === backend && r.case === c)?.reqPerSec ?? NaN
  const vsHello = (c: CaseName, min: number): Ratio => {
    const value = rps(c) / rps('hello')
    return { backend, name: `${c} / hello`, value, target: `>= ${min * 100}%`, met: value >= min }
  }
  const measured = (c: CaseName): Measurement | undefined => results.find((r) => r.backend === backend && r.case === c)
  // Round by round, so that both keys of a ratio were measured next to each other; the median of the rounds.
  const keys = (a: CaseName, b: CaseName): Ratio => {
    const ra = measured(a)?.roundReqPerSec ?? []
    const rb = measured(b)?.roundReqPerSec ?? []
    const value = median(ra.map((x, i) => x / rb[i]))
    return { backend, name: `${a} / ${b}`, value, target: `within ${TARGETS.dynamicVsService * 100}%`, met: Math.abs(1 - value) <= TARGETS.dynamicVsService }
  }
  const page = rps('page50-service') / rps('hello-page50')
  return [
    vsHello('empty-service', TARGETS.emptyVsHello),
    vsHello('empty-dynamic', TARGETS.emptyVsHello),
    vsHello('page50-service', TARGETS.pageVsHello),
    vsHello('page50-dynamic', TARGETS.pageVsHello),
    keys('empty-dynamic', 'empty-service'),
    keys('page50-dynamic', 'page50-service'),
    // No target: how close the route comes to bare Fastify sending the same bytes.
    { backend, name: 'page50-service / hello-page50', value: page, target: '(info)', met: true },
    // No target: pages built for each request (queries that differ) against one page served from the cache.
    { backend, name: 'varied-service / page50-service', value: rps('varied-service') / rps('page50-service'), target: '(info)', met: true }
  ]
}

function median (xs: number[]): number {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((x, y) => x - y)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

async function main (): Promise<void> {
  const wanted = args.backends.split(',').map((b) => b.trim()).filter(Boolean)
  for (const b of wanted) if (b !== 'memory' && b !== 'redis') throw new Error(`unknown backend '${b}'`)
  const backends = wanted as Backend[]
  if (backends.includes('redis') && !await redisAnswers()) throw new Error(`no Redis answers at ${REDIS_URL}; run with --backends memory to skip it`)

  const startLoad = loadavg()
  console.log(`GET /host vs hello-world: ${CONNECTIONS} connections, ${WARMUP} s warm-up + ${DURATION} s per case (${ROUNDS} interleaved rounds), ${cpus().length} CPUs, load ${startLoad.map((l) => l.toFixed(2)).join(' ')}`)
  const results: Measurement[] = []
  for (const backend of backends) results.push(...await runBackend(backend))
  const endLoad = loadavg()

  const table = new Table({ style: PLAIN, head: ['backend', 'case', 'req/s', 'p50 ms', 'p99 ms', 'bytes/resp', 'KiB/s', 'non-2xx/errors'] })
  for (const r of results) table.push([r.backend, r.case, r.reqPerSec, r.p50Ms, r.p99Ms, r.bytesPerResponse, r.kbPerSec, `${r.non2xx}/${r.errors + r.timeouts}`])
  console.log(table.toString())

  const allRatios = backends.flatMap((b) => ratios(results, b))
  const rt = new Table({ style: PLAIN, head: ['backend', 'ratio (req/s)', 'value', 'target', 'met'] })
  for (const r of allRatios) rt.push([r.backend, r.name, `${(r.value * 100).toFixed(1)}%`, r.target, r.target === '(info)' ? '' : r.met ? 'yes' : 'NO'])
  console.log(rt.toString())
  const bad = results.filter((r) => r.non2xx + r.errors + r.timeouts > 0)
  if (bad.length > 0) console.log(`WARNING: ${bad.map((r) => `${r.backend}/${r.case}`).join(', ')} had failed requests; those figures are not valid.`)

  if (args.out) {
    const figures = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      loadavg: { start: startLoad, end: endLoad },
      connections: CONNECTIONS,
      warmupSeconds: WARMUP,
      durationSeconds: DURATION,
      rounds: ROUNDS,
      hosts: HOSTS,
      targets: TARGETS,
      results,
      ratios: allRatios
    }
    writeFileSync(resolve(args.out), JSON.stringify(figures, null, 2) + '\n')
    console.log(`figures written to ${args.out}`)
  }
}

main().catch((err) => {
  console.error(`bench failed: ${(err as Error).stack ?? String(err)}`)
  process.exit(1)
})
