// NVD index benchmark (not a test): import a synthetic 300,000-record feed into both backends
// and time matches.
//
// The feed is SYNTHETIC: the real fixture records of test/fixtures/nvd/cves repeated under fresh
// ids (CVE-9xxx-NNNNNN), so every product has thousands of CVEs sharing a few distinct criteria.
//
//   npx tsx --expose-gc --max-old-space-size=512 bench/nvd.ts    300,000 records, 100,000 matches per backend
//   BENCH_RECORDS=20000 BENCH_MATCHES=10000 npx tsx bench/nvd.ts    a quicker run
//
// Redis: 127.0.0.1:6379 (REDIS_URL overrides); the benchmark writes under its own prefix and
// deletes it afterwards. The figure of Redis's own memory is left to `redis-cli info memory`.

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { createGzip } from 'node:zlib'
import { randomBytes } from 'node:crypto'
import pino from 'pino'
import { importFeed } from '../lib/nvd/feed-import'
import type { LocalCveIndex } from '../lib/nvd/cve-index'
import { loadConfig } from '../lib/config'
import { openBackends, type Backends } from '../lib/backends'

const RECORDS = Number(process.env.BENCH_RECORDS ?? 300_000)
const MATCHES = Number(process.env.BENCH_MATCHES ?? 100_000)
const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures', 'nvd', 'cves')

/** A realistic mix of what a scan of a Debian 12 network reports, plus the two edge cases. */
const CPES = [
  'cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*',
  'cpe:2.3:a:redis:redis:7.0.15:*:*:*:*:*:*:*',
  'cpe:2.3:a:f5:nginx:1.22.1:*:*:*:*:*:*:*',
  'cpe:2.3:a:postgresql:postgresql:15.3:*:*:*:*:*:*:*',
  'cpe:2.3:a:postgresql:postgresql:15.8:*:*:*:*:*:*:*',
  'cpe:2.3:a:mariadb:mariadb:10.11.2:*:*:*:*:*:*:*',
  'cpe:2.3:a:mariadb:mariadb:10.11.6:*:*:*:*:*:*:*',
  'cpe:2.3:a:apache:http_server:2.4.57:*:*:*:*:*:*:*',
  'cpe:2.3:a:redis:redis:*:*:*:*:*:*:*:*',
  'cpe:2.3:a:nobody:unknown_product:1.0:*:*:*:*:*:*:*'
]

let peakRss = 0
let overallPeak = 0
function sampleRss (): void {
  const rss = process.memoryUsage().rss
  if (rss > peakRss) peakRss = rss
  if (rss > overallPeak) overallPeak = rss
}
const sampler = setInterval(sampleRss, 20)
sampler.unref()

/** Live memory after a full collection (when run with --expose-gc), which RSS alone does not show. */
function live (): string {
  if (typeof global.gc === 'function') global.gc()
  const u = process.memoryUsage()
  return `heap ${mb(u.heapUsed)} + buffers ${mb(u.external)}, RSS ${mb(u.rss)}${typeof global.gc === 'function' ? ' after GC' : ''}`
}

/** This process's CPU time over a phase: on a shared machine wall time says more about the neighbours. */
function cpuNote (start: NodeJS.CpuUsage, wallSecs: number): string {
  const u = process.cpuUsage(start)
  const cpu = (u.user + u.system) / 1e6
  return `process CPU ${cpu.toFixed(1)} s (${Math.round(100 * cpu / wallSecs)}% of the wall time; the load average was ${os.loadavg()[0].toFixed(1)})`
}

const mb = (n: number): string => `${(n / 1024 / 1024).toFixed(0)} MB`
const fmt = (n: number): string => Math.round(n).toLocaleString('en')

async function writeFeed (file: string): Promise<void> {
  const names = fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.json')).sort()
  // Each fixture is serialized once around an id placeholder; records are then spliced together.
  const templates = names.map((f) => {
    const cve = JSON.parse(fs.readFileSync(path.join(FIXTURES, f), 'utf8')) as Record<string, unknown>
    return JSON.stringify({ cve: { ...cve, id: '\u0000ID\u0000' } }).split('"\\u0000ID\\u0000"')
  })
  const gz = createGzip({ level: 1 })
  const out = fs.createWriteStream(file)
  gz.pipe(out)
  const write = async (s: string): Promise<void> => { if (!gz.write(s)) await once(gz, 'drain') }
  await write(`{"resultsPerPage":${RECORDS},"startIndex":0,"totalResults":${RECORDS},"format":"NVD_CVE",` +
    `"version":"2.0","timestamp":"${new Date().toISOString().slice(0, 23)}","vulnerabilities":[`)
  let chunk = ''
  for (let i = 0; i < RECORDS; i++) {
    const t = templates[i % templates.length]
    const id = `CVE-9${String(i % templates.length).padStart(3, '0')}-${String(i).padStart(6, '0')}`
    chunk += (i === 0 ? '' : ',') + t[0] + `"${id}"` + t[1]
    if (chunk.length > 1 << 20) {
      await write(chunk)
      chunk = ''
    }
  }
  await write(chunk + ']}')
  gz.end()
  await once(out, 'close')
}

function percentile (sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]
}

interface Timing { p50: number, p99: number, max: number, n: number }

async function time (n: number, fn: (i: number) => Promise<unknown>): Promise<Timing> {
  const ts = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint()
    await fn(i)
    ts[i] = Number(process.hrtime.bigint() - s) / 1e6
    if ((i & 1023) === 0) sampleRss()
  }
  const sorted = Array.from(ts).sort((a, b) => a - b)
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted[sorted.length - 1], n }
}

const ms = (t: Timing): string => `p50 ${t.p50.toFixed(3)} ms, p99 ${t.p99.toFixed(3)} ms, max ${t.max.toFixed(2)} ms (n=${fmt(t.n)})`

async function benchMatches (name: string, idx: LocalCveIndex): Promise<void> {
  console.log(`  matched CVEs per CPE (synthetic data: each real CVE repeated ${fmt(RECORDS / 37)} times):`)
  for (const cpe of CPES) {
    const hits = await idx.matchHits(cpe)
    console.log(`    ${cpe.padEnd(55)} ${fmt(hits.length)}`)
  }
  const groups = await time(MATCHES, async (i) => await idx.matchGroups(CPES[i % CPES.length]))
  console.log(`  ${name} match (distinct criteria evaluated, matching CVE ids):  ${ms(groups)}`)
  const hits = await time(Math.min(MATCHES, 2_000), async (i) => await idx.matchHits(CPES[i % CPES.length]))
  console.log(`  ${name} match expanded to one hit per CVE (thousands per CPE):   ${ms(hits)}`)
  // Loading the records is separate: with synthetic data one CPE matches thousands of CVEs.
  const few = CPES.filter((c) => c.includes('nginx') || c.includes('nobody') || c.includes('15.8'))
  const full = await time(Math.min(MATCHES, 10_000), async (i) => await idx.match(few[i % few.length]))
  console.log(`  ${name} full match() with records, CPEs with 0 hits:          ${ms(full)}`)
  const heavyCpe = CPES[0]
  const heavyHits = (await idx.matchHits(heavyCpe)).length
  const heavy = await time(3, async () => await idx.match(heavyCpe))
  console.log(`  ${name} full match() loading ${fmt(heavyHits)} records (openssh 9.2p1): ${ms(heavy)}` +
    ` = ${(heavy.p50 * 1000 / Math.max(1, heavyHits)).toFixed(1)} µs per record`)
}

async function main (): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-bench-nvd-'))
  const feed = path.join(dir, 'nvdcve-2.0-synthetic.json.gz')
  console.log(`NVD index benchmark — SYNTHETIC feed: ${fmt(RECORDS)} records built from the 37 real fixture records under fresh ids`)
  console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}`)
  let t0 = Date.now()
  await writeFeed(feed)
  console.log(`feed written: ${mb(fs.statSync(feed).size)} gzip in ${((Date.now() - t0) / 1000).toFixed(1)} s`)

  const log = pino({ level: 'warn' }, pino.destination(2))
  const prefix = `vulnscan-bench.${randomBytes(4).toString('hex')}`
  const onRedis = await openBackends(loadConfig({
    REDIS_URL: loadConfig().REDIS_URL ?? 'redis://127.0.0.1:6379', REDIS_PREFIX: prefix, QUEUE_PREFIX: `${prefix}-bull`, NVD_INDEX_FILE: '', SOURCES_FILE: ''
  }), log, { results: false })
  const ridx = onRedis.indexes.cve
  // An interrupted run still removes its keys and files.
  const onSignal = (): void => {
    onRedis.purge().catch(() => {}).finally(() => {
      fs.rmSync(dir, { recursive: true, force: true })
      process.exit(130)
    })
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    console.log('\n[redis backend]')
    peakRss = 0
    sampleRss()
    t0 = Date.now()
    let cpu0 = process.cpuUsage()
    const r = await importFeed(feed, ridx, { batchSize: 1000 })
    let secs = (Date.now() - t0) / 1000
    console.log(`  import: ${fmt(r.records)} records in ${secs.toFixed(1)} s = ${fmt(r.records / secs)} records/s, ` +
      `skipped ${r.skipped}, peak RSS ${mb(peakRss)}; ${cpuNote(cpu0, secs)}`)
    await benchMatches('redis', ridx)

    console.log('\n[memory backend persisted to a file]')
    const file = path.join(dir, 'index.ndjson.gz')
    const inMemory = async (): Promise<Backends> => await openBackends(loadConfig({ NVD_INDEX_FILE: file }, {}), log)
    let mem: Backends | null = await inMemory()
    const midx = mem.indexes.cve
    if (typeof global.gc === 'function') global.gc()
    peakRss = 0
    sampleRss()
    t0 = Date.now()
    cpu0 = process.cpuUsage()
    const m = await importFeed(feed, midx, { batchSize: 1000 })
    secs = (Date.now() - t0) / 1000
    const memCpu = cpuNote(cpu0, secs)
    const t1 = Date.now()
    await midx.flush()
    const saveSecs = (Date.now() - t1) / 1000
    console.log(`  import: ${fmt(m.records)} records in ${secs.toFixed(1)} s = ${fmt(m.records / secs)} records/s, ` +
      `save ${saveSecs.toFixed(1)} s (${mb(fs.statSync(file).size)}), peak RSS ${mb(peakRss)}; ${memCpu}`)
    console.log(`  held in memory: ${live()}`)
    await benchMatches('memory', midx)
    await mem.close()
    // Let the imported copy go before loading the file into a second one.
    mem = null
    if (typeof global.gc === 'function') global.gc()
    t0 = Date.now()
    const reopened = await inMemory()
    console.log(`  load at open: ${((Date.now() - t0) / 1000).toFixed(1)} s, ${fmt((await reopened.indexes.cve.stats()).cves)} CVEs`)
    await reopened.close()
    sampleRss()
    console.log(`\npeak RSS over the whole run: ${mb(overallPeak)}`)
  } finally {
    await onRedis.purge()
    await onRedis.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err: Error) => {
  console.error(err)
  process.exitCode = 1
})
