// A large network end to end (not a test): a /16 that lives in a network namespace this bench builds, scanned
// through the scaled deployment (an API process and 1, 2 and 4 worker processes on Redis and PostgreSQL), with host
// discovery and the `quick` template (its top ports, light detection, CVE matching), beside `nmap -n -sT -T4
// --top-ports 100` over the same /16 in the same run.
//
//   npx tsx bench/network.ts [--workers 1,2,4] [--live 300] [--refusing 1000] [--batch 1024] [--no-nmap] [--out f.json]
//
// The network: 198.19.0.0/16 (half of 198.18.0.0/15, the block RFC 2544 sets aside for benchmarks), routed from this
// namespace over a veth pair into a namespace where every address of it is local (an AnyIP route), so that:
// - `--live` addresses have real listeners (an FTP, an SSH and an HTTP banner of versions with known CVEs: findings);
// - `--refusing` addresses are up with nothing listening (every connect refused, as a host with its firewall off);
// - the rest (about 64,000) drop everything, as most of a real /16 does.
// Needs root, `ip` and `nft`; nmap only for its column. Everything it creates is removed at the end, also on failure.
// Redis: 127.0.0.1:6379 (REDIS_URL overrides); PostgreSQL: the local server (DATABASE_URL overrides); every key and
// the results schema belong to this run and are removed at the end. NVD records come from the tests' fake NVD API.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import net from 'node:net'
import { parseArgs } from 'node:util'
import pino from 'pino'
import { openBackends } from '../lib/backends'
import { loadConfig } from '../lib/config'
import { startFakeNvd } from '../test/support/fake-nvd'
import { spawnApi, spawnWorker, type WorkerProcess } from '../test/support/worker-process'
import { freePort, loopbackAddress } from './support/loopback'
import { run, vethNamespace } from './support/veth-namespace'

const { values: args } = parseArgs({
  options: {
    workers: { type: 'string', default: '1,2,4' },
    live: { type: 'string', default: '300' },
    refusing: { type: 'string', default: '1000' },
    batch: { type: 'string', default: '1024' },
    'no-nmap': { type: 'boolean', default: false },
    out: { type: 'string' }
  }
})
const WORKER_COUNTS = args.workers.split(',').map(Number)
const LIVE = Number(args.live)
const REFUSING = Number(args.refusing)
const BATCH = Number(args.batch)

const NET = '198.19'
const CIDR = `${NET}.0.0/16`
const LINK = { host: '198.18.254.1', peer: '198.18.254.2', prefix: 30 }
const REDIS_URL = loadConfig().REDIS_URL ?? 'redis://127.0.0.1:6379'
const DATABASE_URL = loadConfig().DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const KEY = `bench-network-key-${randomBytes(8).toString('hex')}`
const RUN = randomBytes(4).toString('hex')
const auth = { 'x-api-key': KEY, 'content-type': 'application/json' }

// What the live hosts answer: versions the fake NVD's records name (CVE-2015-3306, CVE-2016-6210, CVE-2018-15473,
// CVE-2021-41773 among them).
const LISTENERS = `
  const net = require('node:net')
  const http = require('node:http')
  const addresses = JSON.parse(process.argv[1])
  const banner = (port, text) => (a) => net.createServer((s) => { s.on('error', () => {}); s.end(text) }).listen(port, a)
  const ftp = banner(21, '220 ProFTPD 1.3.5 Server (bench) [::ffff:0.0.0.0]\\r\\n')
  const ssh = banner(22, 'SSH-2.0-OpenSSH_7.2\\r\\n')
  const web = (a) => http.createServer((req, res) => { res.setHeader('Server', 'Apache/2.4.49 (Unix)'); res.end('<html><title>bench</title></html>') }).listen(80, a)
  for (const a of addresses) { ftp(a); ssh(a); web(a) }
  setInterval(() => {}, 1 << 30)
`

/** `count` distinct addresses of the /16 (not .0 or .255), picked by a fixed sequence so that runs compare. */
function pick (count: number, taken: Set<string>, seed: number): string[] {
  const out: string[] = []
  let x = seed
  while (out.length < count) {
    x = (x * 1103515245 + 12345) % 2147483648
    const a = `${NET}.${(x >> 8) & 255}.${1 + (x >> 16) % 254}`
    if (taken.has(a)) continue
    taken.add(a)
    out.push(a)
  }
  return out
}

interface Network { name: string, live: string[], refusing: string[], teardown: () => void }

function buildNetwork (): Network {
  const taken = new Set<string>()
  const live = pick(LIVE, taken, 7)
  const refusing = pick(REFUSING, taken, 11)
  let listeners: ChildProcess | null = null
  const ns = vethNamespace('net', LINK, () => {
    listeners?.kill('SIGKILL')
    try { run('ip', ['route', 'del', CIDR]) } catch {}
  })
  const { name, nft } = ns
  try {
    // Every address of the /16 is local inside the namespace, and this side reaches it over the veth pair.
    run('ip', ['-n', name, 'route', 'add', 'local', CIDR, 'dev', 'lo'])
    run('ip', ['route', 'add', CIDR, 'via', LINK.peer, 'dev', ns.outer])
    nft('add', 'table', 'inet', 'vsnet')
    nft('add', 'set', 'inet', 'vsnet', 'up', '{ type ipv4_addr; }')
    const up = [...live, ...refusing]
    for (let i = 0; i < up.length; i += 500) nft('add', 'element', 'inet', 'vsnet', 'up', `{ ${up.slice(i, i + 500).join(', ')} }`)
    nft('add', 'chain', 'inet', 'vsnet', 'input', '{ type filter hook input priority 0; }')
    nft('add', 'rule', 'inet', 'vsnet', 'input', 'ip', 'daddr', CIDR, 'ip', 'daddr', '!=', '@up', 'drop')
    listeners = spawn('ip', ['netns', 'exec', name, process.execPath, '-e', LISTENERS, JSON.stringify(live)], { stdio: 'ignore' })
  } catch (err) {
    ns.teardown()
    throw err
  }
  return { name, live, refusing, teardown: ns.teardown }
}

async function answers (host: string, port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 500 }, () => { s.destroy(); resolve(true) })
    s.on('error', () => resolve(false))
    s.on('timeout', () => { s.destroy(); resolve(false) })
  })
}

async function waitListeners (live: string[]): Promise<void> {
  const deadline = Date.now() + 30_000
  for (const a of [live[0], live[live.length - 1]]) {
    while (!(await answers(a, 80))) {
      if (Date.now() > deadline) throw new Error(`the listeners in the namespace did not come up (${a}:80)`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
}

/** User + system CPU seconds and peak RSS (MB) of a process, from /proc, while it runs. */
function processFigures (pid: number): { cpuS: number, peakMb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const ticks = Number(fields[11]) + Number(fields[12])
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return { cpuS: ticks / 100, peakMb: hwm === null ? 0 : Number(hwm[1]) / 1024 }
}

interface Stages { discoveryMs: number, portScanMs: number, detectionMs: number, matchMs: number, writeMs: number, tailMs: number }

interface OursRun {
  workers: number
  status: string
  seconds: number
  hostsPerSecond: number
  firstFindingSeconds: number | null
  hostsUp: number
  openPorts: number
  findings: number
  batches: number
  /** Sums over the batches of each stage's wall time, seconds (batches run side by side, so these add up past the wall time). */
  stages: Stages
  workerCpuS: number
  apiCpuS: number
  workerPeakMb: number
  apiPeakMb: number
  load: number[]
}

async function get (base: string, path: string): Promise<Record<string, any>> {
  return await (await fetch(`${base}${path}`, { headers: auth })).json() as Record<string, any>
}

async function oursRun (workers: number, nvdUrl: string): Promise<OursRun> {
  const prefix = `vulnscan-bench-network-${RUN}-w${workers}`
  const env: Record<string, string> = {
    REDIS_URL, REDIS_PREFIX: prefix, QUEUE_PREFIX: `${prefix}-bull`, DATABASE_URL, DATABASE_SCHEMA: prefix.replace(/[^a-z0-9]/g, '_'),
    NVD_API_URL: nvdUrl, NVD_INDEX_FILE: '', SOURCES_FILE: '', SERVICE_API_KEY: KEY, RATE_LIMIT_MAX: '100000000',
    MAX_HOSTS: '65536', SCAN_BATCH_HOSTS: String(BATCH), LOG_LEVEL: 'info', CREDENTIALS_KEY: randomBytes(32).toString('hex')
  }
  const host = loopbackAddress()
  const port = await freePort(host)
  const api = spawnApi({ ...env, HOST: host, PORT: String(port) })
  const base = `http://${host}:${port}`
  const procs: WorkerProcess[] = []
  const backends = await openBackends(loadConfig({}, env), pino({ level: 'warn' }, pino.destination(2)))
  try {
    await api.ready(90_000)
    for (let i = 0; i < workers; i++) procs.push(spawnWorker(env))
    await Promise.all(procs.map(async (w) => await w.ready(90_000)))
    const before = [api, ...procs].map((p) => processFigures(p.pid).cpuS)
    const load0 = loadavg()[0]
    const id = `network-${workers}-${RUN}`
    const at = performance.now()
    const posted = await fetch(`${base}/app/scan`, { method: 'POST', headers: auth, body: JSON.stringify({ id, targets: [{ value: CIDR, type: 'cidr' }], options: { template: 'quick' } }) })
    if (posted.status !== 200) throw new Error(`POST /app/scan answered ${posted.status}: ${await posted.text()}`)
    let firstFinding: number | null = null
    let scan: Record<string, any>
    for (;;) {
      scan = await get(base, `/app/scan/${id}`)
      if (firstFinding === null && (await get(base, '/vulnerability?limit=1')).total > 0) firstFinding = (performance.now() - at) / 1000
      if (['completed', 'failed', 'cancelled'].includes(scan.status)) break
      if (performance.now() - at > 3_600_000) throw new Error(`scan ${id} did not end within an hour`)
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    const seconds = (performance.now() - at) / 1000
    const after = [api, ...procs].map((p) => processFigures(p.pid))
    const stages: Stages = { discoveryMs: 0, portScanMs: 0, detectionMs: 0, matchMs: 0, writeMs: 0, tailMs: 0 }
    const timings = procs.flatMap((w) => w.lines).filter((l) => l.msg === 'batch timings' && l.scanId === id)
    for (const l of timings) for (const k of Object.keys(stages) as (keyof Stages)[]) stages[k] += Number(l[k] ?? 0)
    const findings = Object.values((scan.summary?.findings ?? {}) as Record<string, number>).reduce((a, b) => a + b, 0)
    return {
      workers,
      status: String(scan.status),
      seconds,
      hostsPerSecond: 65536 / seconds,
      firstFindingSeconds: firstFinding,
      hostsUp: scan.summary?.hostsUp ?? 0,
      openPorts: scan.summary?.openPorts ?? 0,
      findings,
      batches: timings.length,
      stages: Object.fromEntries(Object.entries(stages).map(([k, v]) => [k, v / 1000])) as unknown as Stages,
      apiCpuS: after[0].cpuS - before[0],
      workerCpuS: after.slice(1).reduce((s, f, i) => s + f.cpuS - before[i + 1], 0),
      apiPeakMb: after[0].peakMb,
      workerPeakMb: Math.max(...after.slice(1).map((f) => f.peakMb)),
      load: [load0, loadavg()[0]]
    }
  } finally {
    await Promise.all(procs.map(async (w) => await w.stop()))
    await api.stop()
    await backends.purge().catch(() => {})
    await backends.close().catch(() => {})
  }
}

interface NmapRun { seconds: number, cpuS: number, hostsUp: number, openPorts: number, load: number[] }

async function nmapRun (): Promise<NmapRun> {
  const load0 = loadavg()[0]
  const cpu0 = childCpuSeconds()
  const at = performance.now()
  const xml = await new Promise<string>((resolve, reject) => {
    execFile('nmap', ['-n', '-sT', '-T4', '--top-ports', '100', CIDR, '-oX', '-'], { maxBuffer: 256 << 20 }, (err, stdout) => {
      if (err !== null) reject(new Error(`nmap failed: ${err.message}`))
      else resolve(stdout)
    })
  })
  const seconds = (performance.now() - at) / 1000
  // nmap is the only child waited for during its run.
  const cpuS = childCpuSeconds() - cpu0
  let hostsUp = 0
  let openPorts = 0
  for (const h of xml.matchAll(/<host\b[\s\S]*?<\/host>/g)) {
    if (!/<status state="up"/.test(h[0])) continue
    hostsUp++
    openPorts += [...h[0].matchAll(/<state state="open"/g)].length
  }
  return { seconds, cpuS, hostsUp, openPorts, load: [load0, loadavg()[0]] }
}

/** User + system CPU seconds of this process's children that have been waited for (/proc/self/stat cutime, cstime). */
function childCpuSeconds (): number {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(f[13]) + Number(f[14])) / 100
}

function table (rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  return rows.map((r, j) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |${j === 0 ? `\n|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|` : ''}`).join('\n')
}

async function main (): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench/network.ts needs root (a network namespace and a route)')
  const network = buildNetwork()
  const cleanup = (): void => { network.teardown() }
  process.once('exit', cleanup)
  process.once('SIGINT', () => { cleanup(); process.exit(130) })
  const nvd = await startFakeNvd({ rateLimit: null })
  try {
    await waitListeners(network.live)
    process.stderr.write(`${CIDR} in namespace ${network.name}: ${network.live.length} live (3 listeners each), ${network.refusing.length} refusing, the rest dropped\n`)
    const ours: OursRun[] = []
    for (const w of WORKER_COUNTS) {
      process.stderr.write(`ours, ${w} worker process(es)...\n`)
      const r = await oursRun(w, nvd.baseUrl)
      process.stderr.write(`  ${r.status} in ${r.seconds.toFixed(1)} s, ${r.hostsUp} up, ${r.openPorts} open, ${r.findings} findings\n`)
      ours.push(r)
    }
    let nmap: NmapRun | null = null
    if (!args['no-nmap']) {
      process.stderr.write('nmap -n -sT -T4 --top-ports 100...\n')
      nmap = await nmapRun()
    }
    const rows = [['run', 'wall s', 'hosts/s', 'first finding s', 'up', 'open', 'findings', 'CPU s (workers + API)', 'peak RSS MB (worker / API)', 'load']]
    for (const r of ours) {
      rows.push([`vulnscan, ${r.workers} worker${r.workers > 1 ? 's' : ''}`, r.seconds.toFixed(1), Math.round(r.hostsPerSecond).toString(), r.firstFindingSeconds?.toFixed(1) ?? '-',
        String(r.hostsUp), String(r.openPorts), String(r.findings), `${r.workerCpuS.toFixed(1)} + ${r.apiCpuS.toFixed(1)}`, `${Math.round(r.workerPeakMb)} / ${Math.round(r.apiPeakMb)}`, r.load.map((l) => l.toFixed(1)).join('–')])
    }
    if (nmap !== null) {
      rows.push(['nmap -sT -T4 --top-ports 100', nmap.seconds.toFixed(1), Math.round(65536 / nmap.seconds).toString(), '-', String(nmap.hostsUp), String(nmap.openPorts), '-', nmap.cpuS.toFixed(1), '-', nmap.load.map((l) => l.toFixed(1)).join('–')])
    }
    const stages = [['run', 'batches', 'discovery s', 'port scan s', 'detection s', 'matching s', 'writes s', 'writes after the scan s']]
    for (const r of ours) {
      const s = r.stages
      stages.push([`${r.workers} worker${r.workers > 1 ? 's' : ''}`, String(r.batches), s.discoveryMs.toFixed(1), s.portScanMs.toFixed(1), s.detectionMs.toFixed(1), s.matchMs.toFixed(1), s.writeMs.toFixed(1), s.tailMs.toFixed(1)])
    }
    process.stdout.write(`${table(rows)}\n\nStages, summed over the batches (SCAN_BATCH_HOSTS=${BATCH}; batches run side by side):\n\n${table(stages)}\n`)
    if (args.out !== undefined) writeFileSync(args.out, JSON.stringify({ date: new Date().toISOString(), cidr: CIDR, live: LIVE, refusing: REFUSING, batch: BATCH, ours, nmap }, null, 2) + '\n')
  } finally {
    await nvd.close()
    cleanup()
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`)
  process.exit(1)
})
