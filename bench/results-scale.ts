// Results at scale: seed the results store with N hosts (5-15 open ports, about 20 findings each) through its
// own API, then measure every host and finding list and filter through the running service, the write rate
// (first scans and re-scans), the CSV export and the API's memory, each beside its target (issue 11).
//   npx tsx bench/results-scale.ts [--hosts 10000] [--backend memory|redis] [--requests 200] [--concurrency 4]
//                                  [--rescan 1000] [--out figures.json] [--node-flags '--optimize-for-size']
// The API runs in a child process (the real app, on the backend chosen); this process only sends requests.
// Latencies are measured by the client, body read included, over a bounded number of requests per case sent
// by a few concurrent clients; host list queries vary their page size and shift their offset (or cursor) a
// little so that the host page cache does not answer them: each request does the store's work. The hosts carry
// tags (20 sites, and `pci` on one in nine) and their writes belong to two scans the API knows (`scan-seed`, every
// host; `scan-rescan`, the re-scanned ones), for the `tag` and `scanId` filters.
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import Table from 'cli-table3'
import pino from 'pino'
import { loadConfig } from '../lib/config'
import { openBackends } from '../lib/backends'
import { random, resultsData } from './support/results-data'
import { forkServer, stopServer, type ChildServer } from './support/child-server'

const ROOT = join(__dirname, '..')
const SERVER = join(__dirname, 'support', 'results-server.ts')
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
// The results database of the redis backend: a schema of this run's own in it, dropped at the end.
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const PLAIN = { head: [], border: [] }

const TARGETS = { listP99Ms: 100, singleP99Ms: 10, hostsPerSec: 2000, findingsPerSec: 40_000, csvRowsPerSec: 50_000, rssMb: 300 }

const { values: args } = parseArgs({
  options: {
    hosts: { type: 'string', default: '10000' },
    backend: { type: 'string', default: 'memory' },
    requests: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '4' },
    rescan: { type: 'string', default: '1000' },
    batch: { type: 'string', default: '100' },
    out: { type: 'string' },
    'node-flags': { type: 'string', default: '' }
  }
})
/**
 * The children run with the Node options `npm run start:api` and `start:worker` give the API and the worker (the
 * options between `tsx` and the script in package.json), and with `--node-flags` after them, e.g.
 * --node-flags=--optimize-for-size, to see what the heap's sizing costs.
 */
const NODE_FLAGS = (args['node-flags'] ?? '').split(' ').filter(Boolean)

function startFlags (script: 'start:api' | 'start:worker'): string[] {
  const command = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts[script]
  const words = command.split(' ')
  const at = words.findIndex((w) => w.endsWith('.ts'))
  return words.slice(1, at).filter((w) => w.startsWith('--'))
}
const HOSTS = Number(args.hosts)
const REQUESTS = Number(args.requests)
const CONCURRENCY = Number(args.concurrency)
const RESCAN = Math.min(Number(args.rescan), HOSTS)
const BATCH = Number(args.batch)
const BACKEND = args.backend
if (BACKEND !== 'memory' && BACKEND !== 'redis') throw new Error(`--backend must be memory or redis, not '${BACKEND}'`)
if (!(HOSTS > 0) || !(REQUESTS > 0) || !(CONCURRENCY > 0)) throw new Error('--hosts, --requests and --concurrency must be positive')

const T0 = Date.parse('2026-11-20T08:00:00.000Z')

type Server = ChildServer

function startServer (env: Record<string, string>, role: 'api' | 'writer' = 'api'): Promise<Server> {
  const flags = [...startFlags(role === 'api' ? 'start:api' : 'start:worker'), ...NODE_FLAGS]
  return forkServer(SERVER, [BACKEND, role], { cwd: ROOT, execArgv: ['--require', 'tsx/cjs', '--expose-gc', ...flags], env: { ...process.env, ...env }, label: role === 'api' ? 'the API' : 'the writer' })
}

function ask<T> (server: Server, msg: object, key: string): Promise<T> {
  return new Promise((done, reject) => {
    server.child.once('message', (reply: Record<string, unknown>) => {
      if (key in reply) done(reply[key] as T)
      else reject(new Error(`the API answered ${JSON.stringify(reply).slice(0, 2000)}`))
    })
    server.child.send(msg)
  })
}

interface Memory { rss: number, maxRss: number, heapUsed: number, heapCommitted: number, external: number }

interface Written { storeMs: number, hosts: number, findings: number }

function writeHosts (server: Server, from: number, count: number, at: number, scanId: string, rescan: boolean): Promise<Written> {
  return ask<Written>(server, { cmd: 'write', from, count, batch: BATCH, at, scanId, rescan }, 'written')
}

interface Case {
  group: 'hosts' | 'findings' | 'single'
  name: string
  /** The path of request number n. */
  path: (n: number) => string
  method?: 'GET' | 'PATCH'
  body?: (n: number) => string
  targetMs: number
}

interface Measured { group: string, name: string, example: string, p50Ms: number, p99Ms: number, maxMs: number, targetMs: number, pass: boolean }

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]
}

async function measure (port: number, key: string, c: Case): Promise<Measured> {
  const times: number[] = []
  let next = 0
  let failure: string | null = null
  const send = async (n: number): Promise<number> => {
    const t0 = performance.now()
    const res = await fetch(`http://127.0.0.1:${port}${c.path(n)}`, {
      method: c.method ?? 'GET',
      headers: { 'x-api-key': key, ...(c.body ? { 'content-type': 'application/json' } : {}) },
      body: c.body?.(n)
    })
    const text = await res.text()
    const ms = performance.now() - t0
    if (res.status !== 200) failure ??= `${c.path(n)} answered ${res.status}: ${text.slice(0, 200)}`
    return ms
  }
  // A few requests first: connections opened, code compiled.
  for (let n = 0; n < Math.min(10, REQUESTS); n++) await send(REQUESTS + n)
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < REQUESTS) times.push(await send(next++))
  }))
  if (failure !== null) throw new Error(failure)
  times.sort((a, b) => a - b)
  const p99 = percentile(times, 0.99)
  return { group: c.group, name: c.name, example: c.path(0), p50Ms: percentile(times, 0.5), p99Ms: p99, maxMs: times[times.length - 1], targetMs: c.targetMs, pass: p99 < c.targetMs }
}

async function getJson (port: number, key: string, path: string): Promise<any> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'x-api-key': key } })
  if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`)
  return await res.json()
}

/** The cursors of 40 pages in a row of `path` from `offset` on. */
async function cursorsFrom (port: number, key: string, path: string, offset: number): Promise<string[]> {
  const out: string[] = []
  let page = await getJson(port, key, `${path}&offset=${offset}`)
  while (typeof page.nextCursor === 'string' && out.length < 40) {
    out.push(page.nextCursor)
    page = await getJson(port, key, `${path}&cursor=${page.nextCursor}`)
  }
  if (out.length === 0) throw new Error(`${path} gave no cursor at offset ${offset}`)
  return out
}

interface CsvMeasured { name: string, path: string, rows: number, expected: number, seconds: number, rowsPerSec: number, mb: number, pass: boolean }

/** Stream the CSV, count its rows (a row starts with a finding id) and time it. */
async function measureCsv (port: number, key: string, name: string, query: string): Promise<CsvMeasured> {
  const expected: number = (await getJson(port, key, `/vulnerability?limit=1${query ? '&' + query : ''}`)).total
  const path = `/vulnerability${query ? '?' + query : ''}`
  const t0 = performance.now()
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'x-api-key': key, accept: 'text/csv' } })
  if (res.status !== 200 || res.body === null) throw new Error(`${path} as CSV answered ${res.status}`)
  const decoder = new TextDecoder()
  let rows = 0
  let bytes = 0
  let tail = ''
  for await (const chunk of res.body) {
    bytes += chunk.byteLength
    const text = tail + decoder.decode(chunk, { stream: true })
    rows += text.match(/\r\n[0-9a-f]{24},/g)?.length ?? 0
    tail = text.slice(-27)
    // A row start split across chunks is counted in the next one; one counted already is not counted twice.
    if (/\r\n[0-9a-f]{24},$/.test(text)) tail = ''
  }
  const seconds = (performance.now() - t0) / 1000
  const rowsPerSec = Math.round(rows / seconds)
  return { name, path, rows, expected, seconds, rowsPerSec, mb: bytes / 1e6, pass: rows === expected && rowsPerSec >= TARGETS.csvRowsPerSec }
}

function cases (hosts: number, findings: number, someCve: string, findingIds: string[], middle: { hosts: string[], findings: string[] }): Case[] {
  const data = resultsData()
  const rnd = random(42)
  const pick = (): number => Math.floor(rnd() * hosts)
  // Host queries are each one the host page cache has not seen: page sizes 45-50 times a shift of 0-39 items
  // (or one of 40 cursors), 240 different queries per case for its 200 requests.
  const size = (n: number): number => 50 - (n % 6)
  const shift = (n: number): number => Math.floor(n / 6) % 40
  const first = (n: number): string => `limit=${size(n)}&offset=${shift(n)}`
  const last = (n: number): string => `limit=${size(n)}&offset=${Math.max(0, hosts - size(n) - shift(n))}`
  const lastFindings = (n: number): number => Math.max(0, findings - 50)
  const list = targetsFor('hosts')
  const flist = targetsFor('findings')
  return [
    list('first page (lastSeen desc)', (n) => `/host?${first(n)}`),
    list('last page', (n) => `/host?${last(n)}`),
    list('sort=address', (n) => `/host?sort=address&${first(n)}`),
    list('sort=address, last page', (n) => `/host?sort=address&order=desc&${last(n)}`),
    list('sort=findings', (n) => `/host?sort=findings&${first(n)}`),
    list('sort=severity asc', (n) => `/host?sort=severity&order=asc&${first(n)}`),
    list('q (a hostname)', (n) => `/host?q=${data.hostname(pick()).slice(0, 9)}&limit=${size(n)}`),
    list('q (an address prefix)', (n) => `/host?q=10.40.${(n * 7) % 40}.&${first(n)}`),
    list('port=22', (n) => `/host?port=22&${first(n)}`),
    list('service=http', (n) => `/host?service=http&${first(n)}`),
    list('product=openssh', (n) => `/host?product=openssh&${first(n)}`),
    list('minSeverity=critical&sort=severity', (n) => `/host?minSeverity=critical&sort=severity&${first(n)}`),
    list('hasFindings=false', (n) => `/host?hasFindings=false&${first(n)}`),
    list('port=443&minSeverity=high, last page', (n) => `/host?port=443&minSeverity=high&limit=${size(n)}&offset=${Math.floor(hosts / 3) + shift(n)}`),
    list('tag=site-3 (5% of hosts)', (n) => `/host?tag=site-3&${first(n)}`),
    list('tag=pci&port=22', (n) => `/host?tag=pci&port=22&${first(n)}`),
    list('scanId (the re-scan)', (n) => `/host?scanId=scan-rescan&${first(n)}`),
    list('scanId (the first scan: every host)', (n) => `/host?scanId=scan-seed&${first(n)}`),
    list('middle page by cursor (lastSeen desc)', (n) => `/host?limit=${size(n)}&cursor=${middle.hosts[shift(n) % middle.hosts.length]}`),

    flist('first page (cvss desc)', () => '/vulnerability'),
    flist('last page', (n) => `/vulnerability?offset=${lastFindings(n)}`),
    flist('sort=risk', () => '/vulnerability?sort=risk'),
    flist('sort=lastSeen', () => '/vulnerability?sort=lastSeen'),
    flist('sort=firstSeen asc, deep page', () => `/vulnerability?sort=firstSeen&order=asc&offset=${Math.floor(findings / 2)}`),
    flist('sort=firstSeen asc, middle page by cursor', (n) => `/vulnerability?sort=firstSeen&order=asc&cursor=${middle.findings[n % middle.findings.length]}`),
    flist('kev=true&minCvss=7', () => '/vulnerability?kev=true&minCvss=7'),
    flist('kev=true&minCvss=7&sort=risk, page 3', () => '/vulnerability?kev=true&minCvss=7&sort=risk&offset=100'),
    flist('severity=critical&status=open', () => '/vulnerability?severity=critical&status=open'),
    flist('severity=high&status=open, last page', () => `/vulnerability?severity=high&status=open&offset=${Math.floor(findings * 0.3)}`),
    flist('minEpss=0.5', () => '/vulnerability?minEpss=0.5'),
    flist('kev=false', () => '/vulnerability?kev=false'),
    flist('confidence=medium', () => '/vulnerability?confidence=medium'),
    flist('status=fixed', () => '/vulnerability?status=fixed'),
    flist('status=potential', () => '/vulnerability?status=potential'),
    flist('cveId', () => `/vulnerability?cveId=${someCve}`),
    flist('tag=site-3', () => '/vulnerability?tag=site-3'),
    flist('scanId (the re-scan)', () => '/vulnerability?scanId=scan-rescan'),
    flist('scanId (the first scan)', () => '/vulnerability?scanId=scan-seed'),
    flist('scanId (the first scan)&severity=critical', () => '/vulnerability?scanId=scan-seed&severity=critical'),
    flist('host', () => `/vulnerability?host=${data.address(pick())}`),

    { group: 'single', name: 'GET /host/{address}', path: () => `/host/${data.address(pick())}`, targetMs: TARGETS.singleP99Ms },
    { group: 'single', name: 'GET /host/{address}/vulnerability', path: () => `/host/${data.address(pick())}/vulnerability`, targetMs: TARGETS.singleP99Ms },
    {
      group: 'single',
      name: 'PATCH /vulnerability/finding/{id}',
      method: 'PATCH',
      path: (n) => `/vulnerability/finding/${findingIds[n % findingIds.length]}`,
      body: (n) => JSON.stringify({ status: n % 2 === 0 ? 'accepted' : 'open', comment: 'bench' }),
      targetMs: TARGETS.singleP99Ms
    }
  ]
}

function targetsFor (group: 'hosts' | 'findings'): (name: string, path: (n: number) => string) => Case {
  return (name, path) => ({ group, name, path, targetMs: TARGETS.listP99Ms })
}

/** The findings' ids, one of each host in turn: the first of every host, then the second of every host, and so on. */
function byHostInTurn (findings: { id: string, address: string }[]): string[] {
  const byHost = new Map<string, string[]>()
  for (const f of findings) byHost.set(f.address, [...byHost.get(f.address) ?? [], f.id])
  const lists = [...byHost.values()]
  const out: string[] = []
  for (let k = 0; out.length < findings.length; k++) for (const l of lists) if (k < l.length) out.push(l[k])
  return out
}

function rate (w: Written): { hostsPerSec: number, findingsPerSec: number, seconds: number } {
  const seconds = w.storeMs / 1000
  return { hostsPerSec: Math.round(w.hosts / seconds), findingsPerSec: Math.round(w.findings / seconds), seconds }
}

const passFail = (ok: boolean): string => ok ? 'PASS' : 'FAIL'

async function main (): Promise<void> {
  const serviceKey = `bench-${randomBytes(24).toString('base64url')}`
  const prefix = `vulnscan-bench-results.${randomBytes(4).toString('hex')}`
  const startLoad = loadavg()
  const apiFlags = [...startFlags('start:api'), ...NODE_FLAGS]
  console.log(`results at scale: ${HOSTS} hosts on ${BACKEND}${apiFlags.length > 0 ? ` (API with ${apiFlags.join(' ')})` : ''}, ${REQUESTS} requests per case from ${CONCURRENCY} clients, ${cpus().length} CPUs, load ${startLoad.map((l) => l.toFixed(2)).join(' ')}`)
  const schema = prefix.replace(/[^a-z0-9]/g, '_')
  const env = { BENCH_SERVICE_KEY: serviceKey, BENCH_REDIS_PREFIX: prefix, BENCH_REDIS_URL: REDIS_URL, BENCH_DATABASE_URL: DATABASE_URL, BENCH_DATABASE_SCHEMA: schema }
  const server = await startServer(env)
  // On the scaled backend a worker writes and the API serves: the writes come from a process of their own.
  const writer = BACKEND === 'redis' ? await startServer(env, 'writer') : server
  try {
    const seeded = await writeHosts(writer, 0, HOSTS, T0, 'scan-seed', false)
    const seedRate = rate(seeded)
    const afterSeed = await ask<Memory>(server, { cmd: 'memory' }, 'memory')
    console.log(`seeded ${seeded.hosts} hosts, ${seeded.findings} findings in ${seedRate.seconds.toFixed(1)} s of store time; API RSS ${Math.round(afterSeed.rss / 1e6)} MB, peak ${Math.round(afterSeed.maxRss / 1e6)} MB`)

    const findings: number = (await getJson(server.port, serviceKey, '/vulnerability?limit=1')).total
    const hosts: number = (await getJson(server.port, serviceKey, '/host?limit=1')).total
    if (hosts !== HOSTS) throw new Error(`GET /host counts ${hosts} hosts, ${HOSTS} were written`)
    // The first read of each order after a start (the embedded store builds it then, once).
    const firstReads: Record<string, number> = {}
    for (const path of ['/vulnerability?sort=risk', '/vulnerability?sort=lastSeen', '/vulnerability?sort=firstSeen', '/host?sort=address', '/host?sort=findings', '/host?sort=severity']) {
      const t0 = performance.now()
      await getJson(server.port, serviceKey, path)
      firstReads[path] = performance.now() - t0
    }
    // Findings to decide, taken host by host in turn: the four clients decide findings of different hosts, as several
    // users triaging do, rather than queue on one host's lock (a decision locks its host to re-tally it).
    const ids = byHostInTurn((await getJson(server.port, serviceKey, '/vulnerability?limit=500&sort=lastSeen')).items)

    // Re-scans of hosts already known, with every order in use: the merges a scan of a known network does.
    const rescanned = await writeHosts(writer, 0, RESCAN, T0 + 86_400_000, 'scan-rescan', true)
    const rescanRate = rate(rescanned)
    // Where the server's autovacuum is off (as on the machine this bench was written on), the writer vacuums the
    // results schema after the writes, untimed: what autovacuum does to freshly written tables in a deployment.
    const vacuum = writer === server ? null : await ask<{ autovacuum: boolean, seconds: number | null }>(writer, { cmd: 'vacuum' }, 'vacuum')
    if (vacuum?.seconds !== null && vacuum?.seconds !== undefined) {
      console.log(`autovacuum is off on this server: VACUUM (ANALYZE) of the results tables in ${vacuum.seconds.toFixed(1)} s, as autovacuum would have done`)
    }
    // The scans those writes belong to, as the API knows them: the scanId filters name a scan that exists.
    await ask(server, { cmd: 'scan', id: 'scan-seed', at: new Date(T0).toISOString(), hosts: HOSTS }, 'scan')
    await ask(server, { cmd: 'scan', id: 'scan-rescan', at: new Date(T0 + 86_400_000).toISOString(), hosts: RESCAN }, 'scan')
    const afterRescan = await ask<Memory>(server, { cmd: 'memory' }, 'memory')
    console.log(`re-scanned ${rescanned.hosts} hosts (${rescanned.findings} findings) in ${rescanRate.seconds.toFixed(1)} s of store time; API RSS ${Math.round(afterRescan.rss / 1e6)} MB, peak ${Math.round(afterRescan.maxRss / 1e6)} MB`)
    const total: number = (await getJson(server.port, serviceKey, '/vulnerability?limit=1')).total

    // Cursors from the middle of each list (a deep offset read once, untimed, then 40 pages by cursor): where a
    // client paging by cursor gets to.
    const middle = {
      hosts: await cursorsFrom(server.port, serviceKey, '/host?limit=50', Math.floor(hosts / 2)),
      findings: await cursorsFrom(server.port, serviceKey, '/vulnerability?sort=firstSeen&order=asc&limit=50', Math.floor(total / 2))
    }
    const measured: Measured[] = []
    for (const c of cases(hosts, total, resultsData().someCve(), ids, middle)) {
      const m = await measure(server.port, serviceKey, c)
      console.log(`  ${m.group.padEnd(8)} ${m.name.padEnd(42)} p50 ${m.p50Ms.toFixed(1).padStart(6)} ms  p99 ${m.p99Ms.toFixed(1).padStart(6)} ms  (< ${m.targetMs}) ${passFail(m.pass)}`)
      measured.push(m)
    }

    const csv: CsvMeasured[] = []
    for (const [name, query] of [['all findings', ''], ['status=open', 'status=open'], ['kev=true&minCvss=7', 'kev=true&minCvss=7']]) {
      const m = await measureCsv(server.port, serviceKey, name, query)
      console.log(`  csv      ${name.padEnd(42)} ${m.rows} rows in ${m.seconds.toFixed(2)} s, ${m.rowsPerSec} rows/s ${passFail(m.pass)}`)
      csv.push(m)
    }
    const memory = await ask<Memory>(server, { cmd: 'memory' }, 'memory')
    const writerMemory = writer === server ? null : await ask<Memory>(writer, { cmd: 'memory' }, 'memory')

    const table = new Table({ style: PLAIN, head: ['group', 'case', 'p50 ms', 'p99 ms', 'target p99', ''] })
    for (const m of measured) table.push([m.group, m.name, m.p50Ms.toFixed(1), m.p99Ms.toFixed(1), `< ${m.targetMs} ms`, passFail(m.pass)])
    console.log(table.toString())

    const mb = (b: number): number => Math.round(b / 1e6)
    const summary = new Table({ style: PLAIN, head: ['figure', 'value', 'target', ''] })
    summary.push(
      ['writes, first scans', `${seedRate.hostsPerSec} hosts/s, ${seedRate.findingsPerSec} findings/s`, `>= ${TARGETS.hostsPerSec} hosts/s, ${TARGETS.findingsPerSec} findings/s`,
        passFail(seedRate.hostsPerSec >= TARGETS.hostsPerSec && seedRate.findingsPerSec >= TARGETS.findingsPerSec)],
      [`writes, re-scan of ${RESCAN} hosts`, `${rescanRate.hostsPerSec} hosts/s, ${rescanRate.findingsPerSec} findings/s (${rescanRate.seconds.toFixed(2)} s)`,
        `>= ${TARGETS.hostsPerSec} hosts/s, ${TARGETS.findingsPerSec} findings/s`, passFail(rescanRate.hostsPerSec >= TARGETS.hostsPerSec && rescanRate.findingsPerSec >= TARGETS.findingsPerSec)],
      ...csv.map((c) => [`CSV export, ${c.name}`, `${c.rowsPerSec} rows/s (${c.rows} rows, ${c.mb.toFixed(0)} MB, ${c.seconds.toFixed(2)} s)${c.rows === c.expected ? '' : `, expected ${c.expected} rows`}`,
        `>= ${TARGETS.csvRowsPerSec} rows/s`, passFail(c.pass)]),
      ['API RSS (after GC) / peak', `${mb(memory.rss)} MB / ${mb(memory.maxRss)} MB`, `< ${TARGETS.rssMb} MB`, passFail(mb(memory.maxRss) < TARGETS.rssMb)],
      ['API RSS after the first scans / after the re-scan', `${mb(afterSeed.rss)} MB / ${mb(afterRescan.rss)} MB`, '(info)', ''],
      ...(writerMemory === null
        ? []
        : [['writer RSS (after GC) / peak (the worker\'s share: the store opened, batches written)', `${mb(writerMemory.rss)} MB / ${mb(writerMemory.maxRss)} MB`, `< ${TARGETS.rssMb} MB`,
            passFail(mb(writerMemory.maxRss) < TARGETS.rssMb)]]),
      ['API heap used / committed, external (after GC)', `${mb(memory.heapUsed)} MB / ${mb(memory.heapCommitted)} MB, ${mb(memory.external)} MB`, '(info)', ''],
      ...Object.entries(firstReads).map(([path, ms]) => [`first read after start: ${path}`, `${ms.toFixed(0)} ms`, '(info)', ''])
    )
    console.log(`${hosts} hosts, ${total} findings listed (${seeded.findings + rescanned.findings} written)`)
    console.log(summary.toString())
    const failed = measured.filter((m) => !m.pass).length
    console.log(`${measured.length - failed} of ${measured.length} routes within their p99 target`)

    if (args.out) {
      writeFileSync(resolve(args.out), JSON.stringify({
        date: new Date().toISOString(),
        node: process.version,
        cpus: cpus().length,
        loadavg: { start: startLoad, end: loadavg() },
        backend: BACKEND,
        hosts,
        findings: total,
        requests: REQUESTS,
        concurrency: CONCURRENCY,
        targets: TARGETS,
        writes: { seed: { ...seeded, ...seedRate }, rescan: { ...rescanned, ...rescanRate } },
        vacuum,
        firstReads,
        routes: measured,
        csv,
        memory: { ...memory, afterSeed, afterRescan },
        writerMemory
      }, null, 2) + '\n')
      console.log(`figures written to ${args.out}`)
    }
  } finally {
    await stopServer(server)
    if (writer !== server) await stopServer(writer)
    if (BACKEND === 'redis') {
      const backends = await openBackends(loadConfig({ REDIS_URL, REDIS_PREFIX: prefix, QUEUE_PREFIX: `${prefix}-bull`, NVD_INDEX_FILE: '', SOURCES_FILE: '', LOG_LEVEL: 'silent', DATABASE_URL, DATABASE_SCHEMA: schema }, {}), pino({ level: 'silent' }))
      try {
        await backends.purge()
      } finally {
        await backends.close()
      }
    }
  }
}

main().catch((err) => {
  console.error(`bench failed: ${(err as Error).stack ?? String(err)}`)
  process.exit(1)
})
