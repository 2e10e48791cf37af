// Vulnerability data benchmark (not a test): the full Debian security tracker import and an NVD
// import of comparable size, each in its own process so its peak RSS is its own, then the cost of
// matching one detected service against every source at once (NVD, CVE JSON 5, tracker, KEV, EPSS).
// The cvelistV5 archive import is bench/cve5.ts's.
//
// All data is SYNTHETIC, built from the real records of test/fixtures:
// - tracker: about 30,000 source packages and 1,000,000 package/CVE/release verdicts in the
//   tracker's JSON format, with its mix of statuses, urgencies and no-DSA notes; the real fixture
//   packages (openssh, redis, postgresql-15, …) are in it with their real entries;
// - NVD: the fixture records repeated under fresh ids (CVE-9xxx-NNNNNN); most copies name one of
//   50,000 made-up vendors, so a real product matches a realistic few dozen CVEs, not thousands;
// - CVE JSON 5: the fixture records' summaries repeated the same way (CVE-8xxx-NNNNNN);
// - KEV: the fixture catalog's entries repeated to 1,300; EPSS: 300,000 rows.
//
//   npx tsx bench/sources.ts                                    both backends, 300,000 records each
//   npx tsx bench/sources.ts --backend memory --cves 20000 --tracker-packages 3000 --matches 1000
//   npx tsx bench/sources.ts --no-cache                         matching on the bare stores, without the worker's read cache
//
// Options: --backend memory|redis|both, --cves N (NVD records, CVE JSON 5 summaries and EPSS rows),
// --tracker-packages N, --matches N (per service), --heap-mb N (V8 heap cap of the import processes).
// Redis: REDIS_URL (default redis://127.0.0.1:6379), under a prefix of its own that is deleted afterwards.

import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { createGzip } from 'node:zlib'
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import pino from 'pino'
import { loadConfig, type Config } from '../lib/config'
import { openBackends, type Backends } from '../lib/backends'
import { importDebianTracker } from '../lib/distro/debian-tracker'
import { importFeed } from '../lib/nvd/feed-import'
import { parseCve5Record, type Cve5Summary } from '../lib/cve5/record'
import { finishImport, writeSummaries } from '../lib/cve5/source'
import { importKev } from '../lib/exploit/kev'
import { importEpss } from '../lib/exploit/epss'
import { withReadCache } from '../lib/sources/read-cache'
import { matchService, type ServiceMatch } from '../lib/match/service'
import { cpesFor } from '../lib/cpe/aliases'
import { parse as parseSsh } from '../lib/scanner/probes/ssh'
import { parseServerVersion as parsePostgresVersion } from '../lib/scanner/probes/postgresql'
import { parseServerVersion as parseMysqlVersion } from '../lib/scanner/probes/mysql'
import type { ServiceInfo } from '../lib/domain/services'

const FIXTURES = path.join(__dirname, '..', 'test', 'fixtures')
const TARGET_IMPORT_S = 120
const TARGET_PEAK_MB = 1024
const TARGET_P99_MS = 2
/** One copy in this many keeps its real product name (per fixture record). */
const REAL_EVERY = 1500
const SYNTHETIC_PRODUCTS = 50_000

type BackendName = 'memory' | 'redis'

const mb = (n: number): string => `${(n / 1024 / 1024).toFixed(0)} MB`
const fmt = (n: number): string => Math.round(n).toLocaleString('en')
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

/** Deterministic numbers, so two runs build the same data. */
function prng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

async function writer (file: string, gzip: boolean): Promise<{ write: (s: string) => Promise<void>, end: () => Promise<void> }> {
  const out = fs.createWriteStream(file)
  const sink: NodeJS.WritableStream = gzip ? createGzip({ level: 1 }) : out
  if (gzip) (sink as unknown as NodeJS.ReadableStream).pipe(out)
  let pending = ''
  const write = async (s: string): Promise<void> => {
    pending += s
    if (pending.length >= 1 << 20) {
      const chunk = pending
      pending = ''
      if (!sink.write(chunk)) await once(sink, 'drain')
    }
  }
  const end = async (): Promise<void> => {
    sink.end(pending)
    await once(out, 'close')
  }
  return { write, end }
}

// ---------------------------------------------------------------- NVD feed

/** Debian source package of a fixture's product, so the tracker can hold entries for its copies. */
const PACKAGE_OF_PRODUCT: Array<[RegExp, string]> = [
  [/:openbsd:openssh:/, 'openssh'], [/:redis:redis:/, 'redis'], [/:postgresql:postgresql:/, 'postgresql-15'],
  [/:mariadb:mariadb:/, 'mariadb'], [/:(f5|nginx):nginx:/, 'nginx'], [/:(vmware|pivotal_software|broadcom):rabbitmq/, 'rabbitmq-server'],
  [/:eclipse:mosquitto:/, 'mosquitto'], [/:proftpd:proftpd:/, 'proftpd-dfsg'], [/:exim:exim:/, 'exim4'],
  [/:apache:http_server:/, 'apache2'], [/:isc:bind:/, 'bind9'], [/:samba:samba:/, 'samba'], [/:openssl:openssl:/, 'openssl']
]

interface NvdTemplate {
  /** The record's JSON cut at its id; each piece cut again where a vendor prefix goes. */
  pieces: string[][]
  realId: string
  debianPackage: string | null
}

function nvdTemplates (): NvdTemplate[] {
  const files = [
    ...fs.readdirSync(path.join(FIXTURES, 'nvd', 'cves')).map((f) => path.join(FIXTURES, 'nvd', 'cves', f)),
    ...['CVE-2023-46118.json', 'CVE-2025-61985.json'].map((f) => path.join(FIXTURES, 'cve5', 'nvd', f))
  ].filter((f) => f.endsWith('.json')).sort()
  const seen = new Set<string>()
  const out: NvdTemplate[] = []
  for (const f of files) {
    const cve = JSON.parse(fs.readFileSync(f, 'utf8')) as { id: string }
    if (seen.has(cve.id)) continue
    seen.add(cve.id)
    const text = JSON.stringify({ cve: { ...cve, id: '\u0000ID\u0000' } }).replaceAll('cpe:2.3:a:', 'cpe:2.3:a:\u0000V\u0000')
    const app = /cpe:2\.3:a:\u0000V\u0000([^:]+:[^:]+):/.exec(text)
    const pkg = app === null ? null : PACKAGE_OF_PRODUCT.find(([re]) => re.test(`:${app[1]}:`))?.[1] ?? null
    out.push({ pieces: text.split('"\\u0000ID\\u0000"').map((p) => p.split('\u0000V\u0000')), realId: cve.id, debianPackage: pkg })
  }
  return out
}

function nvdId (i: number, n: number): string {
  return `CVE-9${String(i % n).padStart(3, '0')}-${String(i).padStart(6, '0')}`
}

/** Copies that keep the real product name: a few per fixture record. */
function keepsRealName (i: number, n: number): boolean {
  return Math.floor(i / n) % REAL_EVERY === 0
}

/** The real records under their ids, then `records` copies: an NVD 2.0 feed file. */
async function writeNvdFeed (file: string, records: number, templates: NvdTemplate[]): Promise<void> {
  const w = await writer(file, true)
  const n = templates.length
  const total = records + n
  await w.write(`{"resultsPerPage":${total},"startIndex":0,"totalResults":${total},"format":"NVD_CVE","version":"2.0",` +
    `"timestamp":"${new Date().toISOString().slice(0, 23)}","vulnerabilities":[`)
  const render = (t: NvdTemplate, id: string, prefix: string): string =>
    t.pieces.map((p) => p.join(prefix)).join(`"${id}"`)
  for (let j = 0; j < n; j++) await w.write((j === 0 ? '' : ',') + render(templates[j], templates[j].realId, ''))
  for (let i = 0; i < records; i++) {
    const prefix = keepsRealName(i, n) ? '' : `v${i % SYNTHETIC_PRODUCTS}_`
    await w.write(',' + render(templates[i % n], nvdId(i, n), prefix))
  }
  await w.write(']}')
  await w.end()
}

// ---------------------------------------------------------------- Debian tracker

const RELEASES: Array<{ name: string, share: number, tag: string }> = [
  { name: 'buster', share: 0.45, tag: '+deb10u' },
  { name: 'bullseye', share: 0.7, tag: '+deb11u' },
  { name: 'bookworm', share: 0.85, tag: '+deb12u' },
  { name: 'trixie', share: 0.95, tag: '+deb13u' },
  { name: 'sid', share: 1, tag: '' }
]

/** Package versions as Debian writes them in bookworm, for the entries of the real packages' copies. */
const BOOKWORM_VERSION: Record<string, (u: number) => string> = {
  openssh: (u) => `1:9.2p1-2+deb12u${u}`,
  redis: (u) => `5:7.0.15-1~deb12u${u}`,
  'postgresql-15': (u) => `15.${u + 4}-0+deb12u1`,
  mariadb: (u) => `1:10.11.${u + 6}-0+deb12u1`,
  nginx: (u) => `1.22.1-9+deb12u${u}`,
  'rabbitmq-server': (u) => `3.10.8-1.1+deb12u${u}`,
  mosquitto: (u) => `2.0.11-1.2+deb12u${u}`
}

/** How many CVEs the real packages list, roughly as the tracker has them. */
const REAL_PACKAGE_SIZES: Record<string, number> = {
  openssh: 150, redis: 90, 'postgresql-15': 60, mariadb: 250, nginx: 40, 'rabbitmq-server': 20, mosquitto: 25,
  bind9: 120, apache2: 150, 'proftpd-dfsg': 40, exim4: 60, samba: 200, openssl: 180
}

/** The heaviest packages: the largest one bounds what the streaming import holds at once. */
const BIG_PACKAGES: Record<string, number> = {
  linux: 12_000, chromium: 4_000, 'firefox-esr': 3_500, thunderbird: 2_500, imagemagick: 1_000, 'php8.2': 700, tcpdf: 150
}

const URGENCIES = ['not yet assigned', 'not yet assigned', 'not yet assigned', 'low', 'medium', 'high', 'unimportant']

interface TrackerStats { packages: number, pairs: number, entries: number, bytes: number }

async function writeTracker (file: string, packages: number, templates: NvdTemplate[], nvdRecords: number): Promise<TrackerStats> {
  const rnd = prng(9)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]
  const real = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'distro', 'debian-tracker.json'), 'utf8')) as Record<string, Record<string, unknown>>
  const descriptions = templates.map((t) => (JSON.parse(t.pieces[0].join('') + '"x"' + t.pieces[1].join('')) as { cve: { descriptions: Array<{ value: string }> } }).cve.descriptions[0].value)
  // The NVD copies that keep a real product, by Debian package: the tracker speaks about them too.
  const copies = new Map<string, string[]>()
  const n = templates.length
  for (let i = 0; i < nvdRecords; i++) {
    if (!keepsRealName(i, n)) continue
    const pkg = templates[i % n].debianPackage
    if (pkg !== null) copies.set(pkg, [...copies.get(pkg) ?? [], nvdId(i, n)])
  }

  const stats: TrackerStats = { packages: 0, pairs: 0, entries: 0, bytes: 0 }
  const w = await writer(file, false)
  let first = true
  let serial = 0

  const release = (pkg: string, r: typeof RELEASES[number], old: boolean): string => {
    const current = BOOKWORM_VERSION[pkg] !== undefined && r.name === 'bookworm'
      ? BOOKWORM_VERSION[pkg](10)
      : `${1 + Math.floor(rnd() * 9)}.${Math.floor(rnd() * 20)}.${Math.floor(rnd() * 30)}-${1 + Math.floor(rnd() * 4)}${r.tag ? r.tag + (1 + Math.floor(rnd() * 6)) : ''}`
    const fields: Record<string, unknown> = { status: 'resolved', repositories: { [r.name]: current } }
    const x = rnd()
    // Older releases leave more open (no DSA for minor issues); sid has most fixed.
    const open = r.name === 'sid' ? 0.12 : r.name === 'trixie' ? 0.18 : old ? 0.35 : 0.28
    if (x < open) {
      fields.status = 'open'
      fields.urgency = rnd() < 0.5 ? 'unimportant' : pick(URGENCIES)
      if (r.name !== 'sid' && rnd() < 0.5) {
        fields.nodsa = 'Minor issue'
        if (rnd() < 0.5) fields.nodsa_reason = pick(['postponed', 'ignored'])
      }
    } else if (x < open + 0.07) {
      fields.fixed_version = '0'
      fields.urgency = 'unimportant'
    } else if (x < open + 0.09) {
      fields.status = 'undetermined'
      fields.urgency = 'not yet assigned'
    } else {
      fields.fixed_version = BOOKWORM_VERSION[pkg] !== undefined && r.name === 'bookworm'
        ? BOOKWORM_VERSION[pkg](1 + Math.floor(rnd() * 12))
        : current
      fields.urgency = pick(URGENCIES)
    }
    stats.entries++
    return `${JSON.stringify(r.name)}:${JSON.stringify(fields)}`
  }

  const cve = (pkg: string, id: string): string => {
    const parts: string[] = []
    const old = !id.startsWith('CVE-9') && rnd() < 0.5
    for (const r of RELEASES) if (rnd() < r.share) parts.push(release(pkg, r, old))
    const d = pick(descriptions)
    const info: string[] = [`"description":${JSON.stringify(d.slice(0, 40 + Math.floor(rnd() * 100)))}`]
    if (rnd() < 0.8) info.push(`"scope":"${rnd() < 0.6 ? 'remote' : 'local'}"`)
    if (rnd() < 0.3) info.push(`"debianbug":${1_000_000 + Math.floor(rnd() * 100_000)}`)
    stats.pairs++
    return `${JSON.stringify(id)}:{${info.join(',')},"releases":{${parts.join(',')}}}`
  }

  const emit = async (pkg: string, body: string): Promise<void> => {
    const text = `${first ? '{' : ','}${JSON.stringify(pkg)}:{${body}}`
    first = false
    stats.packages++
    stats.bytes += Buffer.byteLength(text)
    await w.write(text)
  }

  const syntheticCves = async (pkg: string, count: number, realBody: string): Promise<void> => {
    const items: string[] = realBody === '' ? [] : [realBody]
    for (const id of copies.get(pkg) ?? []) items.push(cve(pkg, id))
    for (let k = items.length; k < count; k++) {
      // A tracker-internal TEMP- id now and then: the importer skips those.
      const id = rnd() < 0.02 ? `TEMP-${String(serial).padStart(7, '0')}-${(serial * 2654435761 >>> 0).toString(16).slice(0, 6).toUpperCase()}` : `CVE-${1999 + Math.floor(rnd() * 28)}-${String(10_000 + serial).padStart(5, '0')}`
      serial++
      items.push(cve(pkg, id))
    }
    await emit(pkg, items.join(','))
  }

  for (const [pkg, entries] of Object.entries(real)) {
    const body = JSON.stringify(entries).slice(1, -1)
    for (const e of Object.values(entries)) stats.entries += Object.keys((e as { releases: object }).releases).length
    stats.pairs += Object.keys(entries).length
    await syntheticCves(pkg, REAL_PACKAGE_SIZES[pkg] ?? Object.keys(entries).length, body)
  }
  for (const [pkg, size] of Object.entries(REAL_PACKAGE_SIZES)) if (real[pkg] === undefined) await syntheticCves(pkg, size, '')
  for (const [pkg, size] of Object.entries(BIG_PACKAGES)) await syntheticCves(pkg, Math.round(size * packages / 30_000), '')
  const rest = packages - stats.packages
  for (let p = 0; p < rest; p++) {
    // Log-normal sizes: most packages list a handful of CVEs, a few list hundreds.
    const g = Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd())
    const size = Math.min(2000, Math.max(1, Math.round(Math.exp(1.27 + 1.3 * g))))
    await syntheticCves(`pkg-${p.toString(36)}`, size, '')
  }
  await w.write('}')
  await w.end()
  stats.bytes = fs.statSync(file).size
  return stats
}

// ---------------------------------------------------------------- CVE JSON 5, KEV, EPSS

function cve5Fixtures (): Cve5Summary[] {
  const out: Cve5Summary[] = []
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith('.json')) {
        const s = parseCve5Record(JSON.parse(fs.readFileSync(p, 'utf8')))
        if (s !== null) out.push(s)
      }
    }
  }
  walk(path.join(FIXTURES, 'cve5', 'cves'))
  return out.sort((a, b) => a.id < b.id ? -1 : 1)
}

/** The real summaries, then `count` copies under fresh ids; most copies name a made-up product. */
function * cve5Summaries (count: number): Generator<Cve5Summary> {
  const base = cve5Fixtures()
  yield * base
  const texts = base.map((s) => JSON.stringify(s))
  const n = base.length
  for (let i = 0; i < count; i++) {
    const s = JSON.parse(texts[i % n]) as Cve5Summary
    s.id = `CVE-8${String(i % n).padStart(3, '0')}-${String(i).padStart(6, '0')}`
    if (!keepsRealName(i, n)) {
      for (const a of s.affected) {
        a.vendor = `synthetic-vendor-${i % SYNTHETIC_PRODUCTS}`
        a.product = `synthetic-product-${i % SYNTHETIC_PRODUCTS}`
        delete a.cpes
        delete a.packageName
      }
    }
    yield s
  }
}

async function writeKev (file: string, entries: number, nvdRecords: number, n: number): Promise<void> {
  const catalog = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'exploit', 'kev-catalog.json'), 'utf8')) as { vulnerabilities: Array<Record<string, unknown>> }
  const real = catalog.vulnerabilities
  const out = [...real]
  for (let i = 0; out.length < entries; i++) {
    // Copies that keep a real product first, so matched CVEs carry KEV data as real ones do.
    const j = i < 200 ? i * n * REAL_EVERY : i * 211
    out.push({ ...real[i % real.length], cveID: nvdId(j % Math.max(1, nvdRecords), n) })
  }
  fs.writeFileSync(file, JSON.stringify({ ...catalog, count: out.length, vulnerabilities: out }))
}

async function writeEpss (file: string, rows: number, n: number, realIds: string[]): Promise<void> {
  const w = await writer(file, true)
  const rnd = prng(7)
  await w.write('#model_version:v2025.03.14,score_date:2026-11-23T12:55:00Z\ncve,epss,percentile\n')
  const row = async (id: string): Promise<void> => {
    const score = Math.min(0.99, rnd() ** 6)
    await w.write(`${id},${score.toFixed(5)},${Math.min(1, score * 3).toFixed(5)}\n`)
  }
  for (const id of realIds) await row(id)
  for (let i = 0; i < rows - realIds.length; i++) await row(nvdId(i, n))
  await w.end()
}

// ---------------------------------------------------------------- imports in their own process

interface ChildSpec { kind: 'tracker' | 'nvd', backend: BackendName, input: string, dir: string, prefix: string }
interface ChildResult { ms: number, flushMs: number, peakMb: number, detail: string }

function configFor (backend: BackendName, dir: string, prefix: string): Config {
  if (backend === 'memory') {
    return loadConfig({ NVD_INDEX_FILE: path.join(dir, 'nvd-index.json.gz'), SOURCES_FILE: path.join(dir, 'sources.ndjson.gz') }, {})
  }
  return loadConfig({
    REDIS_URL: loadConfig().REDIS_URL ?? 'redis://127.0.0.1:6379', REDIS_PREFIX: prefix, QUEUE_PREFIX: `${prefix}-bull`, NVD_INDEX_FILE: '', SOURCES_FILE: ''
  })
}

const log = pino({ level: 'warn' }, pino.destination(2))

async function runChild (spec: ChildSpec): Promise<void> {
  const backends = await openBackends(configFor(spec.backend, spec.dir, spec.prefix), log, { results: false })
  const t0 = performance.now()
  let detail: string
  let flushMs = 0
  if (spec.kind === 'tracker') {
    // importDebianTracker flushes the store itself: its time includes writing the file.
    const r = await importDebianTracker(spec.input, backends.indexes.sources)
    detail = `${fmt(r.packages)} package/release entries, ${fmt(r.cves)} verdicts, ${fmt(r.skipped)} skipped`
  } else {
    const r = await importFeed(spec.input, backends.indexes.cve, { batchSize: 1000 })
    const t1 = performance.now()
    await backends.indexes.cve.flush()
    flushMs = performance.now() - t1
    detail = `${fmt(r.records)} records, ${fmt(r.skipped)} skipped`
  }
  const ms = performance.now() - t0
  await backends.close()
  // VmHWM, not getrusage's maxRSS, which carries the parent's peak over exec.
  const hwm = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))
  const peakMb = hwm !== null ? Number(hwm[1]) / 1024 : process.resourceUsage().maxRSS / 1024
  const result: ChildResult = { ms, flushMs, peakMb, detail }
  process.stdout.write(JSON.stringify(result) + '\n')
}

async function inChild (spec: ChildSpec, heapMb: number | undefined): Promise<ChildResult> {
  const flags = heapMb !== undefined ? [`--max-old-space-size=${heapMb}`] : []
  const out = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [...flags, '--import', 'tsx', __filename, '--child', JSON.stringify(spec)],
      { encoding: 'utf8', maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
        if (err !== null) reject(new Error(`${spec.kind} import on ${spec.backend} failed: ${err.message}\n${stderr}`))
        else resolve(stdout)
      })
  })
  return JSON.parse(out.trim().split('\n').pop() as string) as ChildResult
}

// ---------------------------------------------------------------- matching

function svc (product: string, version: string | undefined, extra: Partial<ServiceInfo> = {}): ServiceInfo {
  return { service: product.toLowerCase(), product, ...(version !== undefined ? { version } : {}), cpe: cpesFor(product, version), ...extra }
}

/** What detection reports for a Debian 12 host, plus a product without a version and an unknown one. */
function services (): Array<{ name: string, service: ServiceInfo }> {
  const ident = 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u10'
  const ssh = parseSsh(Buffer.from(ident + '\r\n'))
  if (ssh === null) throw new Error('the SSH probe did not parse its own example')
  const pg = '15.20 (Debian 15.20-0+deb12u1)'
  const pgInfo = parsePostgresVersion(pg)
  const maria = '5.5.5-10.11.19-MariaDB-0+deb12u1'
  const mariaInfo = parseMysqlVersion(maria)
  return [
    { name: 'OpenSSH 9.2p1 Debian-2+deb12u10', service: { ...ssh, banner: ident, cpe: cpesFor(ssh.product as string, ssh.version) } },
    { name: 'Redis 7.0.15', service: svc('Redis', '7.0.15') },
    { name: 'RabbitMQ 3.10.8', service: svc('RabbitMQ', '3.10.8') },
    { name: 'nginx 1.22.1', service: svc('nginx', '1.22.1') },
    { name: 'PostgreSQL 15.20 (Debian 15.20-0+deb12u1)', service: { service: 'postgresql', product: 'PostgreSQL', ...pgInfo, banner: pg, cpe: cpesFor('PostgreSQL', pgInfo.version) } },
    { name: 'MariaDB 10.11.19-0+deb12u1', service: { ...mariaInfo, banner: maria, cpe: cpesFor(mariaInfo.product as string, mariaInfo.version) } },
    { name: 'Mosquitto 2.0.11', service: svc('Mosquitto', '2.0.11') },
    { name: 'ProFTPD, no version', service: svc('ProFTPD', undefined) },
    { name: 'unknown product', service: { service: 'http', product: 'Acme Widget Server', version: '1.0', cpe: ['cpe:2.3:a:nobody:unknown_product:1.0:*:*:*:*:*:*:*'] } }
  ]
}

interface Timing { p50: number, p99: number, max: number, n: number }

function summarize (ts: number[]): Timing {
  const s = [...ts].sort((a, b) => a - b)
  const at = (p: number): number => s[Math.min(s.length - 1, Math.floor(s.length * p))]
  return { p50: at(0.5), p99: at(0.99), max: s[s.length - 1], n: s.length }
}

function describe (m: ServiceMatch): string {
  const by = new Map<string, number>()
  for (const v of m.verdicts) by.set(`${v.observed}/${v.source}`, (by.get(`${v.observed}/${v.source}`) ?? 0) + 1)
  const kev = m.verdicts.filter((v) => v.kev !== null).length
  const epss = m.verdicts.filter((v) => v.epss !== null).length
  return `${m.verdicts.length} verdicts (${[...by].map(([k, n]) => `${n} ${k}`).join(', ') || 'none'}; ${kev} KEV, ${epss} EPSS)`
}

async function benchMatches (backends: Backends, matches: number, cached: boolean): Promise<{ all: Timing, per: Array<{ name: string, t: Timing, what: string }>, note: string }> {
  // The worker reads the sources through a read cache kept until an import (lib/worker/runner.ts): measure that, or the bare store.
  const deps = { nvd: backends.indexes.cve, sources: cached ? withReadCache(backends.indexes.sources) : backends.indexes.sources }
  const list = services()
  const what = new Map<string, string>()
  for (const { name, service } of list) what.set(name, describe(await matchService(service, deps)))
  // Warm-up: the JIT and the stores' caches, as a running worker has them.
  for (let i = 0; i < 200 * list.length; i++) await matchService(list[i % list.length].service, deps)
  const times = list.map(() => [] as number[])
  // CPU time beside wall time: on a shared machine the tail is mostly time spent waiting for a core.
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < matches * list.length; i++) {
    const k = i % list.length
    const s = performance.now()
    await matchService(list[k].service, deps)
    times[k].push(performance.now() - s)
  }
  const wallMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const calls = matches * list.length
  const note = `${fmt(calls)} calls in ${secs(wallMs)}: ${(wallMs / calls).toFixed(3)} ms of wall time and ` +
    `${((cpu.user + cpu.system) / 1000 / calls).toFixed(3)} ms of process CPU per call on average (load average ${os.loadavg()[0].toFixed(1)})`
  return { all: summarize(times.flat()), per: list.map(({ name }, k) => ({ name, t: summarize(times[k]), what: what.get(name) as string })), note }
}

// ---------------------------------------------------------------- main

interface Figures {
  tracker: ChildResult
  nvd: ChildResult
  cve5Ms: number
  kevMs: number
  epssMs: number
  loadMs: number
  match: Awaited<ReturnType<typeof benchMatches>>
}

async function benchBackend (backend: BackendName, files: { tracker: string, feed: string, kev: string, epss: string }, dir: string, opts: { cves: number, matches: number, heapMb?: number, cached: boolean }): Promise<Figures> {
  const prefix = `vulnscan-bench.${randomBytes(4).toString('hex')}`
  const sub = fs.mkdtempSync(path.join(dir, `${backend}-`))
  const spec = { backend, dir: sub, prefix }
  let backends: Backends | null = null
  const purge = async (): Promise<void> => {
    if (backend !== 'redis') return
    const b = backends ?? await openBackends(configFor(backend, sub, prefix), log, { results: false })
    await b.purge()
    if (backends === null) await b.close()
  }
  try {
    console.log(`\n[${backend}] Debian tracker import (own process) …`)
    const tracker = await inChild({ ...spec, kind: 'tracker', input: files.tracker }, opts.heapMb)
    console.log(`  ${secs(tracker.ms)}, peak RSS ${tracker.peakMb.toFixed(0)} MB: ${tracker.detail}`)
    console.log(`[${backend}] NVD feed import (own process) …`)
    const nvd = await inChild({ ...spec, kind: 'nvd', input: files.feed }, opts.heapMb)
    console.log(`  ${secs(nvd.ms)} (of which ${secs(nvd.flushMs)} writing the index file), peak RSS ${nvd.peakMb.toFixed(0)} MB: ${nvd.detail}`)

    let t = performance.now()
    backends = await openBackends(configFor(backend, sub, prefix), log, { results: false })
    const loadMs = performance.now() - t
    if (backend === 'memory') console.log(`[${backend}] index and source files loaded in ${secs(loadMs)}`)
    const sources = backends.indexes.sources

    console.log(`[${backend}] CVE JSON 5: ${fmt(opts.cves)} synthetic summaries and the real ones via writeSummaries …`)
    t = performance.now()
    let batch: Cve5Summary[] = []
    for (const s of cve5Summaries(opts.cves)) {
      batch.push(s)
      if (batch.length >= 2000) {
        await writeSummaries(sources, batch)
        batch = []
      }
    }
    await writeSummaries(sources, batch)
    await finishImport(sources)
    const cve5Ms = performance.now() - t
    console.log(`  ${secs(cve5Ms)}`)
    t = performance.now()
    await importKev(files.kev, sources)
    const kevMs = performance.now() - t
    t = performance.now()
    const epss = await importEpss(files.epss, sources)
    const epssMs = performance.now() - t
    console.log(`[${backend}] KEV ${secs(kevMs)}, EPSS ${secs(epssMs)} (${epss.status === 'imported' ? fmt(epss.meta.count) : '?'} rows)`)

    console.log(`[${backend}] matching, every source loaded${opts.cached ? ', read cache as the worker has it' : ', no read cache'} …`)
    const match = await benchMatches(backends, opts.matches, opts.cached)
    for (const p of match.per) {
      console.log(`  ${p.name.padEnd(42)} p50 ${p.t.p50.toFixed(3)} ms, p99 ${p.t.p99.toFixed(3)} ms, max ${p.t.max.toFixed(2)} ms: ${p.what}`)
    }
    console.log(`  ${'all services'.padEnd(42)} p50 ${match.all.p50.toFixed(3)} ms, p99 ${match.all.p99.toFixed(3)} ms, max ${match.all.max.toFixed(2)} ms (n=${fmt(match.all.n)})`)
    console.log(`  ${match.note}`)
    return { tracker, nvd, cve5Ms, kevMs, epssMs, loadMs, match }
  } finally {
    await purge()
    if (backends !== null) {
      // The memory store's file is throwaway: nothing to gain from writing it again at close.
      await backends.close()
    }
  }
}

function table (results: Map<BackendName, Figures>, trackerStats: TrackerStats, nvdRecords: number): void {
  const names = [...results.keys()]
  const rows: Array<[string, string, (f: Figures) => string, (f: Figures) => boolean]> = [
    [`Debian tracker import (${mb(trackerStats.bytes)}, ${fmt(trackerStats.entries)} verdicts)`, `< ${TARGET_IMPORT_S} s`, (f) => secs(f.tracker.ms), (f) => f.tracker.ms < TARGET_IMPORT_S * 1000],
    ['  peak RSS of that process', `< ${TARGET_PEAK_MB} MB`, (f) => `${f.tracker.peakMb.toFixed(0)} MB`, (f) => f.tracker.peakMb < TARGET_PEAK_MB],
    [`NVD feed import (${fmt(nvdRecords)} records)`, `< ${TARGET_IMPORT_S} s`, (f) => secs(f.nvd.ms), (f) => f.nvd.ms < TARGET_IMPORT_S * 1000],
    ['  peak RSS of that process', `< ${TARGET_PEAK_MB} MB`, (f) => `${f.nvd.peakMb.toFixed(0)} MB`, (f) => f.nvd.peakMb < TARGET_PEAK_MB],
    ['match per port, every source: p50', '', (f) => `${f.match.all.p50.toFixed(3)} ms`, () => true],
    ['match per port, every source: p99', `< ${TARGET_P99_MS} ms`, (f) => `${f.match.all.p99.toFixed(3)} ms`, (f) => f.match.all.p99 < TARGET_P99_MS],
    ['match per port, every source: max', '', (f) => `${f.match.all.max.toFixed(2)} ms`, () => true]
  ]
  const header = ['figure', 'target', ...names]
  const body = rows.map(([label, target, get, ok]) => [label, target, ...names.map((n) => {
    const f = results.get(n) as Figures
    return `${get(f)}${target !== '' ? (ok(f) ? ' ok' : ' MISSED') : ''}`
  })])
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)))
  const line = (r: string[]): string => r.map((c, i) => c.padEnd(widths[i])).join(' | ')
  console.log('\n' + line(header))
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'))
  for (const r of body) console.log(line(r))
}

async function main (): Promise<void> {
  const { values } = parseArgs({
    options: {
      child: { type: 'string' },
      backend: { type: 'string', default: 'both' },
      cves: { type: 'string', default: '300000' },
      'tracker-packages': { type: 'string', default: '30000' },
      matches: { type: 'string', default: '1000' },
      'heap-mb': { type: 'string' },
      'no-cache': { type: 'boolean', default: false }
    }
  })
  if (values.child !== undefined) {
    await runChild(JSON.parse(values.child) as ChildSpec)
    return
  }
  const backend = values.backend as string
  if (!['memory', 'redis', 'both'].includes(backend)) throw new Error('--backend is memory, redis or both')
  const cves = Number(values.cves)
  const packages = Number(values['tracker-packages'])
  const matches = Number(values.matches)
  const heapMb = values['heap-mb'] !== undefined ? Number(values['heap-mb']) : undefined
  const backends: BackendName[] = backend === 'both' ? ['memory', 'redis'] : [backend as BackendName]

  console.log('Vulnerability data benchmark — SYNTHETIC data built from the real fixture records')
  console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, load average ${os.loadavg()[0].toFixed(1)}`)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-bench-sources-'))
  const onSignal = (): void => {
    fs.rmSync(dir, { recursive: true, force: true })
    process.exit(130)
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    const templates = nvdTemplates()
    const files = {
      tracker: path.join(dir, 'debian-tracker.json'),
      feed: path.join(dir, 'nvdcve-2.0-synthetic.json.gz'),
      kev: path.join(dir, 'kev.json'),
      epss: path.join(dir, 'epss_scores-2026-11-23.csv.gz')
    }
    let t = performance.now()
    const trackerStats = await writeTracker(files.tracker, packages, templates, cves)
    console.log(`tracker written: ${mb(trackerStats.bytes)} JSON, ${fmt(trackerStats.packages)} source packages, ` +
      `${fmt(trackerStats.pairs)} package/CVE pairs, ${fmt(trackerStats.entries)} package/CVE/release entries, in ${secs(performance.now() - t)}`)
    t = performance.now()
    await writeNvdFeed(files.feed, cves, templates)
    console.log(`NVD feed written: ${fmt(cves + templates.length)} records, ${mb(fs.statSync(files.feed).size)} gzip, in ${secs(performance.now() - t)}`)
    await writeKev(files.kev, 1300, cves, templates.length)
    const realIds = [...templates.map((x) => x.realId), ...cve5Fixtures().map((s) => s.id)]
    await writeEpss(files.epss, cves, templates.length, [...new Set(realIds)])

    const results = new Map<BackendName, Figures>()
    for (const b of backends) results.set(b, await benchBackend(b, files, dir, { cves, matches, heapMb, cached: values['no-cache'] !== true }))
    table(results, trackerStats, cves + templates.length)
    console.log(`\nload average at the end: ${os.loadavg()[0].toFixed(1)} (2 shared cores: wall times vary ±20%)`)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err: Error) => {
  console.error(err)
  process.exitCode = 1
})
