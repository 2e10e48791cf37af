// Port scan benchmark: our connect scan against nmap's (-sT), side by side in the same run.
//
//   npx tsx bench/portscan.ts [--runs 5] [--json] [--no-netns] [--only-discovery] [--load 2] [--host 127.x.y.z]
//
// 1. every TCP port of 127.0.0.1 (or of the loopback address --host names, so that a bench on a shared machine
//    can keep to an address of its own), against `nmap -n -Pn -sT -p- -T4 127.0.0.1`;
// 2. a host in a network namespace the bench creates (a veth pair in 198.18.0.0/15, the block
//    reserved for benchmarks; an nftables rule inside dropping a block of ports so they read
//    filtered; a few listening services), nmap's top 1000 ports, against nmap on the same ports;
// 3. service detection on the open ports of the namespace host and of part 1's address against `nmap -sV`;
// 4. host discovery: a namespace holding a /24 (10.250.x.0/24 inside it only) with 5 live addresses
//    listening on a few ports and the rest dropped by nftables, the top 100 ports: our whole pipeline
//    (discovery, then the port scan of the live hosts) against `nmap -sT --top-ports 100` with its
//    default host discovery, both run inside the namespace.
// Each part runs several times, alternating which scanner goes first; medians are reported with the
// open/closed/filtered agreement port by port. Parts 1 and 2 time ours twice: the scan call inside this process
// (the product is a long-running worker) and the one-shot CLI as a user runs it (`npm run scan -- <host> -t
// discovery -p <ports>`, a process of its own, start-up included), beside nmap's process. Each is given in wall
// time and in CPU time (user + system of the whole process tree, per 1,000 ports): CPU time is what stays
// comparable when other work shares the cores. `--load N` starts N busy-loop processes for the whole run (a fixed
// background load, as a shared production host has). The namespace is torn down at the end, also on failure or Ctrl-C. nmap serves here only as the yardstick: the product never
// calls it.

import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { scanPorts, type PortScanHost, type PortScanStats } from '../lib/scanner/portscan'
import path from 'node:path'
import { allPorts, TOP_1000 } from '../lib/scanner/ports'
import { printReport, runDetectionBench, type DetectionBenchResult } from './service-detect'
import { run, vethNamespace } from './support/veth-namespace'

type State = 'open' | 'closed' | 'filtered'

interface Side {
  ms: number
  /** User + system CPU time, ms: of this process for ours in process, of the whole process tree otherwise. */
  cpuMs: number
  states: Map<number, State>
}

interface PartResult {
  name: string
  host: string
  ports: number
  runs: { oursMs: number, nmapMs: number, cliMs?: number }[]
  oursMedianMs: number
  nmapMedianMs: number
  /** Median CPU ms per 1,000 ports. */
  oursCpuPer1000: number
  nmapCpuPer1000: number
  /** The CLI as a process (start-up included): median wall ms and CPU ms per 1,000 ports. */
  cliMedianMs?: number
  cliCpuPer1000?: number
  /** ours / nmap: below 1 means we are faster. */
  ratio: number
  agreement: { same: number, total: number, differences: { port: number, ours: State, nmap: State }[] }
  counts: { ours: Record<State, number>, nmap: Record<State, number> }
  oursOpen: number[]
  oursStats?: PortScanStats
}

const NS_NET = { host: '198.18.0.1', peer: '198.18.0.2', prefix: 30 }
const DROPPED = { from: 8000, to: 8999 }
// Inside the namespace: banners on the classic ports, an HTTP server, and one listener inside the
// dropped block (it must read filtered, as nmap sees it).
const NS_SERVICES = `
  const net = require('node:net')
  const http = require('node:http')
  const host = process.argv[1]
  const banner = (port, text) => net.createServer((s) => { s.on('error', () => {}); s.write(text) }).listen(port, host)
  banner(21, '220 ProFTPD 1.3.8 Server (Debian) [' + host + ']\\r\\n')
  banner(22, 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\\r\\n')
  banner(25, '220 bench.example ESMTP Exim 4.96 Ubuntu\\r\\n')
  banner(110, '+OK Dovecot (Debian) ready.\\r\\n')
  const web = (port) => http.createServer((req, res) => { res.setHeader('Server', 'nginx/1.22.1'); res.end('<html><title>bench</title></html>') }).listen(port, host)
  web(80)
  web(8080)
  setInterval(() => {}, 1 << 30)
`

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

function argValue (name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}

async function ours (host: string, ports: number[]): Promise<Side & { stats?: PortScanStats }> {
  let stats: PortScanStats | undefined
  const t0 = performance.now()
  // The scanner's threads are this process's: process.cpuUsage counts them all.
  const c0 = process.cpuUsage()
  const [r]: PortScanHost[] = await scanPorts({ hosts: [host], ports, onStats: (s) => { stats = s } })
  const ms = performance.now() - t0
  const c = process.cpuUsage(c0)
  const cpuMs = (c.user + c.system) / 1000
  const states = new Map<number, State>()
  for (const p of ports) states.set(p, 'closed')
  for (const p of r.open) states.set(p, 'open')
  for (const p of r.filtered) states.set(p, 'filtered')
  return { ms, cpuMs, states, stats }
}

/**
 * A command run as a process under bash, whose `times` then prints the CPU time of its finished children (the
 * command and everything it started): wall time and CPU time of the whole tree, and the command's stdout.
 */
function timedProcess (cmd: string, args: string[], opts: { cwd?: string } = {}): Promise<{ ms: number, cpuMs: number, stdout: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    execFile('bash', ['-c', '"$@"; status=$?; times >&2; exit $status', 'timed', cmd, ...args], { maxBuffer: 64 << 20, cwd: opts.cwd }, (err, stdout, stderr) => {
      const ms = performance.now() - t0
      if (err !== null) { reject(new Error(`${cmd} failed: ${err.message}`)); return }
      const lines = stderr.trim().split('\n')
      const seconds = (t: string): number => { const m = /^(\d+)m([\d.]+)s$/.exec(t); return m === null ? NaN : Number(m[1]) * 60 + Number(m[2]) }
      const [user, sys] = (lines[lines.length - 1] ?? '').trim().split(/\s+/).map(seconds)
      resolve({ ms, cpuMs: (user + sys) * 1000, stdout })
    })
  })
}

/** A port list as the CLI takes it: ranges where ports run on. */
function portSpec (ports: number[]): string {
  const s = [...new Set(ports)].sort((a, b) => a - b)
  const out: string[] = []
  for (let i = 0; i < s.length; i++) {
    let j = i
    while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++
    out.push(j > i ? `${s[i]}-${s[j]}` : String(s[i]))
    i = j
  }
  return out.join(',')
}

/** The one-shot CLI, as a user runs it: its own process, start-up and TypeScript loading included. */
async function oursCli (host: string, ports: number[]): Promise<{ ms: number, cpuMs: number }> {
  const r = await timedProcess(process.execPath, [TSX_CLI, 'scripts/scan.ts', host, '--template', 'discovery', '--ports', portSpec(ports), '--json'], { cwd: path.join(__dirname, '..') })
  return { ms: r.ms, cpuMs: r.cpuMs }
}

function expandPortAttr (spec: string): number[] {
  const out: number[] = []
  for (const part of spec.split(',')) {
    const [a, b] = part.split('-').map(Number)
    for (let p = a; p <= (b ?? a); p++) out.push(p)
  }
  return out
}

/** Port states from nmap's XML: listed ports, then the summarised ("extraports") ones. */
function parseNmap (xml: string, ports: number[]): Map<number, State> {
  const states = new Map<number, State>()
  const norm = (s: string): State => (s === 'open' ? 'open' : s === 'closed' ? 'closed' : 'filtered')
  for (const m of xml.matchAll(/<port protocol="tcp" portid="(\d+)"><state state="([a-z|]+)"/g)) {
    states.set(Number(m[1]), norm(m[2]))
  }
  let fallback: State | undefined
  for (const m of xml.matchAll(/<extraports state="([a-z|]+)" count="(\d+)">([\s\S]*?)<\/extraports>/g)) {
    const state = norm(m[1])
    const listed = [...m[3].matchAll(/ports="([\d,-]+)"/g)].flatMap((x) => expandPortAttr(x[1]))
    if (listed.length > 0) for (const p of listed) states.set(p, state)
    else fallback = state
  }
  for (const p of ports) if (!states.has(p)) states.set(p, fallback ?? 'closed')
  return states
}

async function nmapScan (args: string[], ports: number[]): Promise<Side> {
  const r = await timedProcess('nmap', [...args, '-oX', '-'])
  return { ms: r.ms, cpuMs: r.cpuMs, states: parseNmap(r.stdout, ports) }
}

function compare (name: string, host: string, ports: number[], runs: { o: Side & { stats?: PortScanStats }, n: Side, cli?: { ms: number, cpuMs: number } }[]): PartResult {
  const last = runs[runs.length - 1]
  const differences: { port: number, ours: State, nmap: State }[] = []
  const counts = { ours: { open: 0, closed: 0, filtered: 0 }, nmap: { open: 0, closed: 0, filtered: 0 } }
  for (const p of ports) {
    const a = last.o.states.get(p) as State
    const b = last.n.states.get(p) as State
    counts.ours[a]++
    counts.nmap[b]++
    if (a !== b) differences.push({ port: p, ours: a, nmap: b })
  }
  const oursMedianMs = median(runs.map((r) => r.o.ms))
  const nmapMedianMs = median(runs.map((r) => r.n.ms))
  const per1000 = (ms: number): number => Math.round(ms / ports.length * 1000 * 10) / 10
  const cli = runs.flatMap((r) => r.cli === undefined ? [] : [r.cli])
  return {
    name,
    host,
    ports: ports.length,
    runs: runs.map((r) => ({ oursMs: Math.round(r.o.ms), nmapMs: Math.round(r.n.ms), ...(r.cli !== undefined ? { cliMs: Math.round(r.cli.ms) } : {}) })),
    oursMedianMs: Math.round(oursMedianMs),
    nmapMedianMs: Math.round(nmapMedianMs),
    oursCpuPer1000: per1000(median(runs.map((r) => r.o.cpuMs))),
    nmapCpuPer1000: per1000(median(runs.map((r) => r.n.cpuMs))),
    ...(cli.length > 0 ? { cliMedianMs: Math.round(median(cli.map((c) => c.ms))), cliCpuPer1000: per1000(median(cli.map((c) => c.cpuMs))) } : {}),
    ratio: Math.round((oursMedianMs / nmapMedianMs) * 100) / 100,
    agreement: { same: ports.length - differences.length, total: ports.length, differences: differences.slice(0, 50) },
    counts,
    oursOpen: ports.filter((p) => last.o.states.get(p) === 'open'),
    oursStats: last.o.stats
  }
}

async function sideBySide (name: string, host: string, ports: number[], nmapArgs: string[], runs: number): Promise<PartResult> {
  const results: { o: Side & { stats?: PortScanStats }, n: Side, cli: { ms: number, cpuMs: number } }[] = []
  for (let i = 0; i < runs; i++) {
    // Alternate who goes first so neither always meets a warm (or a tired) kernel.
    let o: Side
    let n: Side
    let cli: { ms: number, cpuMs: number }
    if (i % 2 === 0) {
      o = await ours(host, ports)
      cli = await oursCli(host, ports)
      n = await nmapScan(nmapArgs, ports)
    } else {
      n = await nmapScan(nmapArgs, ports)
      cli = await oursCli(host, ports)
      o = await ours(host, ports)
    }
    results.push({ o, n, cli })
    process.stderr.write(`  ${name} run ${i + 1}/${runs}: ours ${Math.round(o.ms)} ms (${Math.round(o.cpuMs)} ms CPU), CLI ${Math.round(cli.ms)} ms (${Math.round(cli.cpuMs)} ms CPU), nmap ${Math.round(n.ms)} ms (${Math.round(n.cpuMs)} ms CPU)\n`)
  }
  return compare(name, host, ports, results)
}

/** A namespace with a veth link to this one; everything it creates is undone by the returned function. */
function createNamespace (): { name: string, teardown: () => void, services: ChildProcess[] } {
  const services: ChildProcess[] = []
  const ns = vethNamespace('bench', NS_NET, () => { for (const s of services) { try { s.kill('SIGKILL') } catch {} } })
  const { name, nft } = ns
  try {
    nft('add', 'table', 'inet', 'vsbench')
    nft('add', 'chain', 'inet', 'vsbench', 'input', '{ type filter hook input priority 0; }')
    nft('add', 'rule', 'inet', 'vsbench', 'input', 'tcp', 'dport', `${DROPPED.from}-${DROPPED.to}`, 'drop')
    services.push(spawn('ip', ['netns', 'exec', name, process.execPath, '-e', NS_SERVICES, NS_NET.peer], { stdio: 'ignore' }))
    try {
      execFileSync('redis-server', ['--version'], { stdio: 'ignore' })
      services.push(spawn('ip', ['netns', 'exec', name, 'redis-server', '--bind', NS_NET.peer, '--port', '6379',
        '--save', '', '--appendonly', 'no', '--protected-mode', 'no'], { stdio: 'ignore' }))
    } catch {}
  } catch (err) {
    ns.teardown()
    throw err
  }
  return { name, teardown: ns.teardown, services }
}

async function waitForListeners (host: string, ports: number[], ms: number): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const [r] = await scanPorts({ hosts: [host], ports, threads: 1 })
    if (r.open.length === ports.length) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`services in the namespace did not come up on ${host}`)
}

// Part 3: service detection vs `nmap -sV` on the open ports of the namespace host and of part 1's address,
// run while the namespace still exists.
async function part3ServiceDetection (ctx: { nsHost?: string, nsOpenPorts: number[], loopbackHost: string, loopbackOpenPorts: number[] }): Promise<unknown> {
  const results: DetectionBenchResult[] = []
  const targets = [
    ...(ctx.nsHost !== undefined && ctx.nsOpenPorts.length > 0 ? [{ host: ctx.nsHost, ports: ctx.nsOpenPorts }] : []),
    { host: ctx.loopbackHost, ports: ctx.loopbackOpenPorts }
  ]
  for (const t of targets) {
    process.stderr.write(`part 3: service detection on ${t.host} ports ${t.ports.join(',')} vs nmap -sV\n`)
    const r = await runDetectionBench({ host: t.host, ports: t.ports, level: 'full' })
    if (!process.argv.includes('--json')) printReport(r)
    results.push(r)
  }
  return results
}

function printPart (r: PartResult): void {
  const c = (x: Record<State, number>): string => `${x.open} open, ${x.closed} closed, ${x.filtered} filtered`
  const lines = [
    `${r.name}: ${r.host}, ${r.ports} ports, ${r.runs.length} runs`,
    `  median wall time: ours ${(r.oursMedianMs / 1000).toFixed(3)} s, nmap ${(r.nmapMedianMs / 1000).toFixed(3)} s, ours/nmap ${r.ratio.toFixed(2)}`,
    `  runs (ours/nmap ms): ${r.runs.map((x) => `${x.oursMs}/${x.nmapMs}`).join('  ')}`,
    `  CPU per 1,000 ports (user + system): ours ${r.oursCpuPer1000} ms, nmap ${r.nmapCpuPer1000} ms, ours/nmap ${(r.oursCpuPer1000 / r.nmapCpuPer1000).toFixed(2)}`,
    r.cliMedianMs !== undefined ? `  as processes (npm run scan -- ${r.host} -t discovery vs nmap): wall ${(r.cliMedianMs / 1000).toFixed(3)} s vs ${(r.nmapMedianMs / 1000).toFixed(3)} s (${(r.cliMedianMs / r.nmapMedianMs).toFixed(2)}), CPU per 1,000 ports ${r.cliCpuPer1000 ?? 0} ms vs ${r.nmapCpuPer1000} ms` : '',
    `  ours: ${c(r.counts.ours)}; nmap: ${c(r.counts.nmap)}`,
    `  port states agree on ${r.agreement.same}/${r.agreement.total}` +
      (r.agreement.differences.length > 0 ? `; differ: ${r.agreement.differences.map((d) => `${d.port} ours=${d.ours} nmap=${d.nmap}`).join(', ')}` : ''),
    r.oursStats !== undefined ? `  ours: ${r.oursStats.threads} thread(s), concurrency ${r.oursStats.concurrency}, ${r.oursStats.attempts} connects, ${r.oursStats.timeouts} timeouts, ${r.oursStats.selfConnects} self-connects discarded` : ''
  ]
  process.stdout.write(lines.filter((l) => l !== '').join('\n') + '\n\n')
}

// Part 4: the /24 of live and dead addresses.
const NET24 = '10.250.77'
const LIVE24 = [10, 33, 100, 150, 201].map((i) => `${NET24}.${i}`)
const LIVE24_PORTS = [22, 80, 443, 3306, 8080]
const TSX = path.join(__dirname, '..', 'node_modules', '.bin', 'tsx')
const TSX_CLI = path.join(__dirname, '..', 'node_modules', 'tsx', 'dist', 'cli.mjs')
const ENGINE = path.join(__dirname, '..', 'lib', 'scanner', 'engine.ts')

interface Sweep { ms: number, up: string[], open: string[] }

function createNamespace24 (): { name: string, teardown: () => void } {
  const name = `vsb24-${randomBytes(3).toString('hex')}`
  let torn = false
  const teardown = (): void => {
    if (torn) return
    torn = true
    try { run('ip', ['netns', 'del', name]) } catch {}
  }
  try {
    run('ip', ['netns', 'add', name])
    const ip = (...a: string[]): void => { run('ip', ['-n', name, ...a]) }
    ip('link', 'set', 'lo', 'up')
    // Both ends of a veth pair inside the namespace: the link the /24 lives on.
    ip('link', 'add', 'n0', 'type', 'veth', 'peer', 'name', 'n1')
    ip('link', 'set', 'n0', 'up')
    ip('link', 'set', 'n1', 'up')
    for (const a of LIVE24) ip('addr', 'add', `${a}/24`, 'dev', 'n0')
    const nft = (...a: string[]): void => { run('ip', ['netns', 'exec', name, 'nft', ...a]) }
    nft('add', 'table', 'inet', 'vsb24')
    nft('add', 'chain', 'inet', 'vsb24', 'output', '{ type filter hook output priority 0; }')
    nft('add', 'rule', 'inet', 'vsb24', 'output', 'ip', 'daddr', `${NET24}.0/24`, 'ip', 'daddr', '!=', `{ ${LIVE24.join(', ')} }`, 'drop')
  } catch (err) {
    teardown()
    throw err
  }
  return { name, teardown }
}

/** Our pipeline inside the namespace (listeners in the same process), timed around scanHosts. */
function ours24 (ns: string, ports: number[]): Promise<Sweep> {
  const code = `
    const net = require('node:net')
    const { scanHosts } = require(${JSON.stringify(ENGINE)})
    const servers = ${JSON.stringify(LIVE24)}.flatMap((a) => ${JSON.stringify(LIVE24_PORTS)}.map((p) => net.createServer((s) => s.destroy()).listen(p, a)))
    setTimeout(async () => {
      const hosts = Array.from({ length: 254 }, (_, i) => ({ address: '${NET24}.' + (i + 1), hostnames: [] }))
      const template = { name: 'discovery', ports: ${JSON.stringify(ports)}, udpPorts: [], udp: false, detection: 'none', nvd: false }
      const t0 = performance.now()
      const r = await scanHosts(hosts, { template })
      const ms = performance.now() - t0
      const up = r.filter((h) => h.up).map((h) => h.address)
      const open = r.flatMap((h) => h.ports.filter((p) => p.state === 'open').map((p) => h.address + ':' + p.port))
      console.log(JSON.stringify({ ms, up, open }))
      for (const s of servers) s.close()
    }, 300)`
  return new Promise((resolve, reject) => {
    execFile('ip', ['netns', 'exec', ns, TSX, '-e', code], { maxBuffer: 16 << 20 }, (err, stdout) => {
      if (err !== null) return reject(new Error(`our scan in the namespace failed: ${err.message}`))
      resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Sweep)
    })
  })
}

/** nmap -sT with its default host discovery inside the namespace, with listeners of the same shape. */
async function nmap24 (ns: string, ports: number): Promise<Sweep> {
  const listeners = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e',
    `const net = require('node:net'); for (const a of ${JSON.stringify(LIVE24)}) for (const p of ${JSON.stringify(LIVE24_PORTS)}) net.createServer((s) => s.destroy()).listen(p, a)`], { stdio: 'ignore' })
  try {
    await new Promise((resolve) => setTimeout(resolve, 500))
    const t0 = performance.now()
    const xml = await new Promise<string>((resolve, reject) => {
      execFile('ip', ['netns', 'exec', ns, 'nmap', '-n', '-sT', '-T4', '--top-ports', String(ports), `${NET24}.0/24`, '-oX', '-'], { maxBuffer: 64 << 20 }, (err, stdout) => {
        if (err !== null) reject(new Error(`nmap failed: ${err.message}`))
        else resolve(stdout)
      })
    })
    const ms = performance.now() - t0
    const up: string[] = []
    const open: string[] = []
    for (const h of xml.matchAll(/<host\b[\s\S]*?<\/host>/g)) {
      const addr = /<address addr="([^"]+)" addrtype="ipv4"/.exec(h[0])?.[1]
      if (addr === undefined || !/<status state="up"/.test(h[0])) continue
      up.push(addr)
      for (const m of h[0].matchAll(/<port protocol="tcp" portid="(\d+)"><state state="open"/g)) open.push(`${addr}:${m[1]}`)
    }
    const key = (a: string): number => Number(a.split(':')[0].split('.')[3]) * 65536 + Number(a.split(':')[1] ?? 0)
    return { ms, up: up.sort((a, b) => key(a) - key(b)), open: open.sort((a, b) => key(a) - key(b)) }
  } finally {
    listeners.kill('SIGKILL')
  }
}

async function part4Discovery (runs: number, json: boolean): Promise<unknown> {
  const ports = TOP_1000.slice(0, 100)
  const ns = createNamespace24()
  const cleanup = (): void => { ns.teardown() }
  process.once('exit', cleanup)
  try {
    process.stderr.write(`part 4: ${NET24}.0/24 in namespace ${ns.name}, ${LIVE24.length} live, top ${ports.length} ports, with host discovery\n`)
    const rs: { o: Sweep, n: Sweep }[] = []
    for (let i = 0; i < runs; i++) {
      let o: Sweep
      let n: Sweep
      if (i % 2 === 0) { o = await ours24(ns.name, ports); n = await nmap24(ns.name, ports.length) } else { n = await nmap24(ns.name, ports.length); o = await ours24(ns.name, ports) }
      rs.push({ o, n })
      process.stderr.write(`  part 4 run ${i + 1}/${runs}: ours ${Math.round(o.ms)} ms, nmap ${Math.round(n.ms)} ms\n`)
    }
    const last = rs[rs.length - 1]
    const oursMs = median(rs.map((r) => r.o.ms))
    const nmapMs = median(rs.map((r) => r.n.ms))
    const sameHosts = JSON.stringify(last.o.up) === JSON.stringify(last.n.up)
    const sameOpen = JSON.stringify(last.o.open) === JSON.stringify(last.n.open)
    const result = {
      name: '4. /24 with host discovery, top 100', runs: rs.map((r) => ({ oursMs: Math.round(r.o.ms), nmapMs: Math.round(r.n.ms) })),
      oursMedianMs: Math.round(oursMs), nmapMedianMs: Math.round(nmapMs), ratio: oursMs / nmapMs,
      hostsUp: { ours: last.o.up, nmap: last.n.up, same: sameHosts }, openPorts: { ours: last.o.open.length, nmap: last.n.open.length, same: sameOpen }
    }
    if (!json) {
      process.stdout.write([
        `${result.name}: ${NET24}.0/24, ${LIVE24.length} live hosts, ${runs} runs`,
        `  median wall time: ours ${(oursMs / 1000).toFixed(3)} s, nmap ${(nmapMs / 1000).toFixed(3)} s, ours/nmap ${result.ratio.toFixed(2)}`,
        `  runs (ours/nmap ms): ${result.runs.map((x) => `${x.oursMs}/${x.nmapMs}`).join('  ')}`,
        `  hosts up: ours ${last.o.up.length}, nmap ${last.n.up.length}, ${sameHosts ? 'the same' : `DIFFER: ours ${last.o.up.join(' ')} / nmap ${last.n.up.join(' ')}`}`,
        `  open ports: ours ${last.o.open.length}, nmap ${last.n.open.length}, ${sameOpen ? 'the same' : `DIFFER: ours ${last.o.open.join(' ')} / nmap ${last.n.open.join(' ')}`}`
      ].join('\n') + '\n\n')
    }
    return result
  } finally {
    cleanup()
    process.off('exit', cleanup)
  }
}

async function main (): Promise<void> {
  const runs = Math.max(1, Number(argValue('--runs') ?? 5))
  const json = process.argv.includes('--json')
  const nmapVersion = /Nmap version (\S+)/.exec(execFileSync('nmap', ['--version']).toString())?.[1] ?? '?'
  const parts: PartResult[] = []
  const load = startLoad(Math.max(0, Number(argValue('--load') ?? 0)))
  process.once('exit', load.stop)
  if (load.count > 0) process.stderr.write(`background load: ${load.count} busy-loop process(es) at nice 0 for the whole run\n`)

  if (process.argv.includes('--only-discovery')) {
    const d = await part4Discovery(runs, json)
    if (json) process.stdout.write(JSON.stringify({ nmapVersion, discovery: d }, null, 2) + '\n')
    return
  }
  const all = allPorts()
  const loopback = argValue('--host') ?? '127.0.0.1'
  if (!loopback.startsWith('127.')) throw new Error(`--host ${loopback}: part 1 scans a loopback address only`)
  process.stderr.write(`part 1: all ${all.length} ports of ${loopback}\n`)
  const p1 = await sideBySide('1. loopback, all ports', loopback, all, ['-n', '-Pn', '-sT', '-p-', '-T4', loopback], runs)
  parts.push(p1)
  if (!json) printPart(p1)

  let detection: unknown
  const loopbackOpen = p1.oursOpen
  if (!process.argv.includes('--no-netns')) {
    const ns = createNamespace()
    const cleanup = (): void => { ns.teardown() }
    const onSignal = (): void => { cleanup(); process.exit(130) }
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
    process.once('exit', cleanup)
    try {
      await waitForListeners(NS_NET.peer, [21, 22, 25, 80, 110], 10_000)
      const ports = [...TOP_1000]
      process.stderr.write(`part 2: top ${ports.length} ports of ${NS_NET.peer} in namespace ${ns.name}, ${DROPPED.from}-${DROPPED.to} dropped\n`)
      const p2 = await sideBySide('2. namespace host, top 1000', NS_NET.peer, ports,
        ['-n', '-Pn', '-sT', '-T4', '--top-ports', String(ports.length), NS_NET.peer], runs)
      parts.push(p2)
      if (!json) printPart(p2)
      const [nsNow] = await scanPorts({ hosts: [NS_NET.peer], ports: [21, 22, 25, 80, 110, 6379] })
      detection = await part3ServiceDetection({ nsHost: NS_NET.peer, nsOpenPorts: nsNow.open, loopbackHost: loopback, loopbackOpenPorts: loopbackOpen })
    } finally {
      cleanup()
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      process.off('exit', cleanup)
    }
  }
  let discovery: unknown
  if (!process.argv.includes('--no-netns')) discovery = await part4Discovery(runs, json)
  load.stop()
  if (json) process.stdout.write(JSON.stringify({ nmapVersion, load: load.count, parts, detection, discovery }, null, 2) + '\n')
  else process.stdout.write(`nmap ${nmapVersion}; background load ${load.count} busy loop(s); ours/nmap below 1 means we are faster\n`)
}

/** A fixed background load: `count` processes that spin until stopped (as other work sharing the cores would). */
function startLoad (count: number): { count: number, stop: () => void } {
  const spinners = Array.from({ length: count }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }))
  return { count, stop: () => { for (const p of spinners) if (p.exitCode === null) p.kill('SIGKILL') } }
}

main().catch((err: Error) => {
  process.stderr.write(`portscan bench failed: ${err.message}\n`)
  process.exitCode = 1
})
