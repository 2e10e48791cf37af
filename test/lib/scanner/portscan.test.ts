import { execFileSync, spawn } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import * as net from 'node:net'
import * as path from 'node:path'
import { test } from 'tap'
import { concurrencyCap, scanPorts, type ConnectFn, type PortScanProgress, type PortScanStats } from '../../../lib/scanner/portscan'

const PORTSCAN = path.join(__dirname, '..', '..', '..', 'lib', 'scanner', 'portscan.ts')
const TSX = path.join(__dirname, '..', '..', '..', 'node_modules', '.bin', 'tsx')

/** A random address in 127/8 away from 127.0.0.0/24, where the machine's own daemons listen. */
function randomLoopback (): string {
  return `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`
}

/** Ports something on this machine listens on for every address (0.0.0.0 or ::): open on any 127.x. */
const WILDCARD = new Set(execFileSync('ss', ['-Htln']).toString().split('\n')
  .map((l) => /^\S+\s+\d+\s+\d+\s+(?:0\.0\.0\.0|\*|\[::\]):(\d+)\s/.exec(l)?.[1])
  .filter((p): p is string => p !== undefined).map(Number))
const notWildcard = (p: number): boolean => !WILDCARD.has(p)

type Behaviour = 'banner' | 'silent' | 'garbage' | 'slow'

/** Listen on host:port and speak the given way; resolves to a close function. */
async function serve (host: string, port: number, how: Behaviour): Promise<() => Promise<void>> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
    s.on('error', () => {})
    if (how === 'banner') s.write('SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n')
    if (how === 'garbage') s.write(randomBytes(64))
    if (how === 'slow') setTimeout(() => { if (!s.destroyed) s.write('220 slow ESMTP\r\n') }, 1500).unref()
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ host, port }, resolve)
  })
  return async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Free ports on `host`, found by binding port 0. */
async function freePorts (host: string, n: number): Promise<number[]> {
  const out: number[] = []
  while (out.length < n) {
    const s = net.createServer()
    await new Promise<void>((resolve) => s.listen({ host, port: 0 }, resolve))
    const p = (s.address() as net.AddressInfo).port
    await new Promise<void>((resolve) => s.close(() => resolve()))
    if (!out.includes(p)) out.push(p)
  }
  return out
}

test('finds exactly the open ports of a loopback host, whatever the service says or does not say', async (t) => {
  const host = randomLoopback()
  const ports = [21, 22, 25, 80, 110, 443, 3306, 5432, 6379, 8080]
  const listening: Record<number, Behaviour> = { 22: 'banner', 80: 'silent', 6379: 'garbage', 25: 'slow' }
  const closers = await Promise.all(Object.entries(listening).map(([p, how]) => serve(host, Number(p), how)))
  t.teardown(async () => { await Promise.all(closers.map((c) => c())) })

  const seen: string[] = []
  const [r] = await scanPorts({ hosts: [host], ports, onHost: (h) => seen.push(h.address) })
  t.equal(r.address, host)
  t.equal(r.up, true)
  t.same(r.open, [22, 25, 80, 6379])
  t.same(r.filtered, [])
  t.equal(r.closedCount, ports.length - 4)
  t.type(r.rttMs, 'number')
  t.same(seen, [host], 'onHost once for the host')
})

test('scans IPv6 loopback and reports the address in canonical form', async (t) => {
  const close = await serve('::1', 0, 'banner').catch(() => null)
  if (close === null) {
    t.comment('no IPv6 loopback here')
    return
  }
  t.teardown(close)
  const [port] = await freePorts('::1', 1)
  const opened = await serve('::1', port, 'silent')
  t.teardown(opened)
  const [r] = await scanPorts({ hosts: ['0:0:0:0:0:0:0:1'], ports: [port, port + 1 > 65535 ? port - 1 : port + 1] })
  t.equal(r.address, '::1')
  t.same(r.open, [port])
  t.equal(r.up, true)
})

test('scans several hosts with bounded concurrency, reporting each host once, in input order', async (t) => {
  const hosts = [randomLoopback(), randomLoopback(), randomLoopback()]
  const closers = [await serve(hosts[0], 8443, 'silent'), await serve(hosts[2], 8443, 'banner'), await serve(hosts[2], 9000, 'silent')]
  t.teardown(async () => { await Promise.all(closers.map((c) => c())) })
  const ports = Array.from({ length: 400 }, (_, i) => 8400 + i).concat([9000])
  const done: string[] = []
  const res = await scanPorts({ hosts, ports, concurrency: 64, perHostConcurrency: 16, onHost: (h) => done.push(h.address) })
  t.same(res.map((h) => h.address), hosts)
  t.same(res.map((h) => h.open), [[8443], [], [8443, 9000]])
  t.same(res.map((h) => h.closedCount), [400, 401, 399])
  t.same([...done].sort(), [...hosts].sort())
})

test('worker threads give the same answer as one thread on a big scan', async (t) => {
  const host = randomLoopback()
  const open = [7, 1023, 4000, 5001, 6000, 8191]
  const closers = await Promise.all(open.map((p, i) => serve(host, p, i % 2 === 0 ? 'silent' : 'banner')))
  t.teardown(async () => { await Promise.all(closers.map((c) => c())) })
  const ports = Array.from({ length: 8192 }, (_, i) => i + 1).filter(notWildcard)
  let stats2: PortScanStats | undefined
  const [one] = await scanPorts({ hosts: [host], ports, threads: 1 })
  const [two] = await scanPorts({ hosts: [host], ports, threads: 3, onStats: (s) => { stats2 = s } })
  t.same(one.open, open)
  t.same(two.open, open)
  t.equal(two.closedCount, ports.length - open.length)
  t.equal(stats2?.threads, 3)
  t.equal(stats2?.attempts, ports.length)
  t.comment(`8192 ports with 3 threads in ${stats2?.wallMs} ms, raw handles: ${String(stats2?.rawHandles)}`)
})

/** A connect function for tests: per-port behaviour, with every attempt counted and cancellations seen. */
function fakeConnect (behave: (port: number, attempt: number) => 'refuse' | 'open' | 'hang' | string) {
  const attempts = new Map<number, number>()
  let inflight = 0
  let maxInflight = 0
  let cancelled = 0
  const connect: ConnectFn = (address, port, _family, cb) => {
    const n = (attempts.get(port) ?? 0) + 1
    attempts.set(port, n)
    const b = behave(port, n)
    if (b.endsWith('!')) {
      // '<CODE>!' fails synchronously, as socket() does when descriptors run out.
      cb(b.slice(0, -1))
      return () => {}
    }
    inflight++
    maxInflight = Math.max(maxInflight, inflight)
    let live = true
    const settle = (code: string | null): void => {
      if (!live) return
      live = false
      inflight--
      cb(code, address, 40000)
    }
    if (b === 'open') setTimeout(() => settle(null), 1)
    else if (b === 'refuse') setTimeout(() => settle('ECONNREFUSED'), 1)
    else if (b !== 'hang') setTimeout(() => settle(b), 1)
    return () => {
      if (live) {
        live = false
        inflight--
        cancelled++
      }
    }
  }
  return { connect, attempts, get maxInflight () { return maxInflight }, get cancelled () { return cancelled } }
}

test('a silent port is filtered only after one retry, and the timer follows measured round trips', async (t) => {
  const silent = new Set([10, 11, 12])
  const f = fakeConnect((p) => (silent.has(p) ? 'hang' : p === 22 ? 'open' : 'refuse'))
  const ports = Array.from({ length: 40 }, (_, i) => i + 1)
  const started = performance.now()
  let stats: PortScanStats | undefined
  const [r] = await scanPorts({
    hosts: ['192.0.2.10'], ports, connect: f.connect, initialTimeoutMs: 5000, minTimeoutMs: 50, maxTimeoutMs: 5000,
    onStats: (s) => { stats = s }
  })
  const took = performance.now() - started
  t.same(r.filtered, [10, 11, 12])
  t.same(r.open, [22])
  t.equal(r.closedCount, 36)
  t.equal(r.up, true)
  for (const p of silent) t.equal(f.attempts.get(p), 2, `port ${p} tried twice`)
  t.equal(f.attempts.get(1), 1, 'answered ports are tried once')
  t.equal(stats?.timeouts, 6)
  t.equal(f.cancelled, 6, 'every timed-out attempt was abandoned')
  // With a 5 s initial timeout a scan that ignored the measured RTTs would take 10 s.
  t.ok(took < 4000, `took ${Math.round(took)} ms: in-flight attempts were re-timed from measured RTTs`)
})

test('retries: 0 calls a silent port filtered at the first timeout', async (t) => {
  const f = fakeConnect((p) => (p === 5 ? 'hang' : 'refuse'))
  const [r] = await scanPorts({ hosts: ['192.0.2.11'], ports: [4, 5, 6], connect: f.connect, retries: 0, initialTimeoutMs: 100, minTimeoutMs: 50 })
  t.same(r.filtered, [5])
  t.equal(f.attempts.get(5), 1)
})

test('a host that never answers is down with every port filtered', async (t) => {
  const f = fakeConnect(() => 'hang')
  const [r] = await scanPorts({ hosts: ['192.0.2.12'], ports: [22, 80, 443], connect: f.connect, initialTimeoutMs: 60, minTimeoutMs: 50 })
  t.equal(r.up, false)
  t.same(r.filtered, [22, 80, 443])
  t.equal(r.rttMs, undefined)
})

test('unreachable before any answer means host down; after an answer it means filtered', async (t) => {
  const down = fakeConnect(() => 'EHOSTUNREACH')
  const [a] = await scanPorts({ hosts: ['192.0.2.13'], ports: Array.from({ length: 100 }, (_, i) => i + 1), connect: down.connect, perHostConcurrency: 4 })
  t.equal(a.up, false)
  t.equal(a.downReason, 'host unreachable')
  t.same(a.open, [])
  t.same(a.filtered, [])
  t.ok((down.attempts.size) < 100, `stopped early after ${down.attempts.size} attempts`)

  const prohibited = fakeConnect((p) => (p === 1 ? 'open' : p === 50 ? 'EHOSTUNREACH' : 'refuse'))
  const [b] = await scanPorts({ hosts: ['192.0.2.14'], ports: Array.from({ length: 60 }, (_, i) => i + 1), connect: prohibited.connect, perHostConcurrency: 1 })
  t.equal(b.up, true)
  t.same(b.open, [1])
  t.same(b.filtered, [50])
  t.equal(b.closedCount, 58)
})

test('descriptor exhaustion backs off and is never reported as a port state', async (t) => {
  let failures = 0
  const f = fakeConnect((p, n) => {
    // Every port's first attempt fails as socket() does when the process is out of descriptors.
    if (n === 1 && failures < 150) { failures++; return 'EMFILE!' }
    return p % 10 === 0 ? 'open' : 'refuse'
  })
  let stats: PortScanStats | undefined
  const ports = Array.from({ length: 200 }, (_, i) => i + 1)
  const [r] = await scanPorts({ hosts: ['192.0.2.15'], ports, connect: f.connect, onStats: (s) => { stats = s } })
  t.same(r.open, ports.filter((p) => p % 10 === 0))
  t.equal(r.closedCount, 180)
  t.same(r.filtered, [])
  t.ok((stats?.resourceBackoffs ?? 0) >= 1, `backed off ${stats?.resourceBackoffs} times`)
})

test('two of our own sockets connected to each other (X to Y, Y to X) are not reported open', async (t) => {
  // The kernel lets a connect from port X to Y meet a connect from Y to X on the same address.
  const connect: ConnectFn = (address, port, _family, cb) => {
    const timer = setTimeout(() => {
      if (port === 45001) cb(null, address, 45002)
      else if (port === 45002) cb(null, address, 45001)
      else if (port === 45003) cb(null, address, 45001)
      else if (port === 45004) cb(null, '127.0.0.9', 45005)
      else cb('ECONNREFUSED')
    }, 1)
    return () => clearTimeout(timer)
  }
  let stats: PortScanStats | undefined
  const [r] = await scanPorts({ hosts: ['127.0.0.1'], ports: [45001, 45002, 45003, 45004, 45005], connect, onStats: (s) => { stats = s } })
  t.same(r.open, [45003, 45004], 'a one-way match or a different local address is a real open port')
  t.equal(r.closedCount, 3)
  t.equal(stats?.selfConnects, 2)
})

test('bounds: never more in flight than the global and per-host limits', async (t) => {
  const f = fakeConnect(() => 'refuse')
  const hosts = ['192.0.2.20', '192.0.2.21', '192.0.2.22', '192.0.2.23']
  const perHost = new Map<string, number>()
  let maxPerHost = 0
  const counting: ConnectFn = (address, port, family, cb) => {
    perHost.set(address, (perHost.get(address) ?? 0) + 1)
    maxPerHost = Math.max(maxPerHost, perHost.get(address) ?? 0)
    return f.connect(address, port, family, (code, la, lp) => {
      perHost.set(address, (perHost.get(address) ?? 0) - 1)
      cb(code, la, lp)
    })
  }
  await scanPorts({ hosts, ports: Array.from({ length: 300 }, (_, i) => i + 1), connect: counting, concurrency: 20, perHostConcurrency: 7 })
  t.ok(f.maxInflight <= 20, `global max ${f.maxInflight}`)
  t.ok(f.maxInflight >= 14, 'the bound is used, not undershot')
  t.ok(maxPerHost <= 7, `per-host max ${maxPerHost}`)
  t.ok(concurrencyCap(1024) < 1024 && concurrencyCap(64) >= 4, 'the cap stays under the descriptor limit')
})

test('progress counts only go up and end at the totals', async (t) => {
  const f = fakeConnect(() => 'refuse')
  const seen: PortScanProgress[] = []
  await scanPorts({ hosts: ['192.0.2.30', '192.0.2.31'], ports: Array.from({ length: 500 }, (_, i) => i + 1), connect: f.connect, onProgress: (p) => seen.push({ ...p }) })
  t.ok(seen.length >= 2)
  for (let i = 1; i < seen.length; i++) {
    t.ok(seen[i].portsDone >= seen[i - 1].portsDone && seen[i].hostsDone >= seen[i - 1].hostsDone, 'monotonic')
  }
  t.same(seen.at(-1), { portsDone: 1000, portsTotal: 1000, hostsDone: 2, hostsTotal: 2 })
})

test('cancellation stops a scan within a second and abandons every attempt in flight', async (t) => {
  const f = fakeConnect(() => 'hang')
  const ac = new AbortController()
  const started = performance.now()
  setTimeout(() => ac.abort(), 200)
  await t.rejects(scanPorts({ hosts: ['192.0.2.40'], ports: Array.from({ length: 1000 }, (_, i) => i + 1), connect: f.connect, concurrency: 100, initialTimeoutMs: 30_000, signal: ac.signal }),
    { name: 'AbortError' })
  const took = performance.now() - started
  t.ok(took < 1200, `stopped ${Math.round(took)} ms after the start (abort at 200 ms)`)
  t.equal(f.cancelled, 100, 'each in-flight attempt was abandoned')

  const already = new AbortController()
  already.abort()
  await t.rejects(scanPorts({ hosts: ['127.0.0.1'], ports: [1], signal: already.signal }))
})

test('cancellation of a real multi-threaded scan of every port', async (t) => {
  const ac = new AbortController()
  const started = performance.now()
  let progressed = 0
  setTimeout(() => ac.abort(new Error('stop now')), 100)
  await t.rejects(scanPorts({
    hosts: [randomLoopback(), randomLoopback()],
    ports: Array.from({ length: 65535 }, (_, i) => i + 1),
    signal: ac.signal,
    onProgress: (p) => { progressed = p.portsDone }
  }), /stop now/)
  const took = performance.now() - started
  t.ok(took < 1100, `rejected ${Math.round(took)} ms after the start`)
  const at = progressed
  await new Promise((resolve) => setTimeout(resolve, 150))
  t.equal(progressed, at, 'no progress after cancellation')
})

test('connect threads reused after a cancelled scan carry nothing over into the next one', async (t) => {
  const host = randomLoopback()
  const closers = [await serve(host, 4444, 'silent'), await serve(host, 5555, 'banner')]
  t.teardown(async () => { await Promise.all(closers.map((c) => c())) })
  const ports = Array.from({ length: 10000 }, (_, i) => i + 1).filter(notWildcard)
  for (let round = 0; round < 3; round++) {
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 20 + round * 20)
    await t.rejects(scanPorts({ hosts: [randomLoopback(), randomLoopback()], ports, threads: 3, signal: ac.signal }))
    let stats: PortScanStats | undefined
    const [r] = await scanPorts({ hosts: [host], ports, threads: 3, onStats: (s) => { stats = s } })
    t.same(r.open, [4444, 5555], `round ${round}: the open ports`)
    t.equal(r.closedCount, ports.length - 2, `round ${round}: every other port closed, none counted twice`)
    t.equal(stats?.attempts, ports.length, JSON.stringify(stats))
  }
})

test('rejects bad input', async (t) => {
  await t.rejects(scanPorts({ hosts: ['not-an-ip'], ports: [1] }), /not an IPv4 or IPv6 address/)
  await t.rejects(scanPorts({ hosts: ['127.0.0.1'], ports: [0] }), /port 0 is not in 1..65535/)
  t.same(await scanPorts({ hosts: [], ports: [1] }), [])
})

const ROOT = typeof process.getuid === 'function' && process.getuid() === 0
function hasCommand (cmd: string): boolean {
  try { execFileSync('sh', ['-c', `command -v ${cmd}`]); return true } catch { return false }
}

function runChild (args: string[], code: string): Promise<{ status: number | null, stdout: string, stderr: string }> {
  return new Promise((resolve) => {
    // A clean environment: the test runner's loader hooks would load modules lazily in the child,
    // which a child short of descriptors on purpose cannot afford.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && !k.startsWith('TAP') && !k.startsWith('_TAPJS')))
    const child = spawn(args[0], [...args.slice(1), TSX, '-e', code], { stdio: ['ignore', 'pipe', 'pipe'], env })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    child.on('close', (status) => resolve({ status, stdout, stderr }))
  })
}

test('in a network namespace: dropped ports read filtered, self-connects never read open', { skip: !ROOT || !hasCommand('ip') || !hasCommand('nft') ? 'needs root, ip and nft' : false }, async (t) => {
  const ns = `vs-ps-${randomBytes(4).toString('hex')}`
  execFileSync('ip', ['netns', 'add', ns])
  t.teardown(() => { try { execFileSync('ip', ['netns', 'del', ns]) } catch {} })
  execFileSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up'])
  const nft = (...a: string[]): void => { execFileSync('ip', ['netns', 'exec', ns, 'nft', ...a]) }
  nft('add', 'table', 'inet', 'vs')
  nft('add', 'chain', 'inet', 'vs', 'input', '{ type filter hook input priority 0; }')
  nft('add', 'rule', 'inet', 'vs', 'input', 'tcp', 'dport', '1000-1009', 'drop')

  const code = `
    const net = require('node:net')
    const { scanPorts } = require(${JSON.stringify(PORTSCAN)})
    const srv = net.createServer((s) => s.destroy())
    srv.listen(2000, '127.0.0.1', async () => {
      const out = {}
      const ports = Array.from({ length: 30 }, (_, i) => 990 + i).concat([2000])
      const [f] = await scanPorts({ hosts: ['127.0.0.1'], ports, minTimeoutMs: 100, onStats: (s) => { out.filteredStats = s } })
      out.filtered = f
      // Nobody listens in this namespace's ephemeral range: every connect there that succeeds is one
      // of ours meeting itself or another of ours, and none may read open.
      const [low, high] = require('node:fs').readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\\s+/).map(Number)
      const eph = []
      for (let p = low; p <= high; p++) eph.push(p)
      out.ephemeral = { ports: eph.length, open: [], selfConnects: 0 }
      for (let i = 0; i < 3; i++) {
        const [r] = await scanPorts({ hosts: ['127.0.0.1'], ports: eph, onStats: (s) => { out.ephemeral.selfConnects += s.selfConnects } })
        out.ephemeral.open.push(...r.open)
      }
      // Only two ephemeral ports left: a connect to one of them picks it as its own source.
      require('node:child_process').execFileSync('sysctl', ['-qw', 'net.ipv4.ip_local_port_range=40000 40001'])
      let self = 0
      const open = []
      for (let i = 0; i < 10; i++) {
        const [r] = await scanPorts({ hosts: ['127.0.0.1'], ports: [40000, 40001], concurrency: 1, onStats: (s) => { self += s.selfConnects } })
        open.push(...r.open)
      }
      out.self = self
      out.selfOpen = open
      console.log(JSON.stringify(out))
      srv.close()
    })`
  const r = await runChild(['ip', 'netns', 'exec', ns], code)
  t.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}')
  t.same(out.filtered.filtered, [1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009], 'the dropped block is filtered')
  t.same(out.filtered.open, [2000])
  t.equal(out.filtered.closedCount, 20)
  t.equal(out.filtered.up, true)
  t.equal(out.filteredStats.timeouts, 20, 'each dropped port was tried twice')
  t.same(out.ephemeral.open, [], `no port of the free ephemeral range read open over 3 scans of ${out.ephemeral.ports} ports`)
  t.comment(`${out.ephemeral.selfConnects} self- or cross-connects seen and discarded in those scans`)
  t.ok(out.self > 0, `${out.self} real self-connects happened`)
  t.same(out.selfOpen, [], 'and none was reported open')
})

test('with a tiny descriptor limit a real scan backs off instead of failing or misreporting', { skip: process.platform !== 'linux' ? 'needs /proc and ulimit' : false }, async (t) => {
  const host = randomLoopback()
  const open = [3000, 3001, 3500]
  const closers = await Promise.all(open.map((p) => serve(host, p, 'silent')))
  t.teardown(async () => { await Promise.all(closers.map((c) => c())) })
  const code = `
    const fs = require('node:fs')
    const { scanPorts } = require(${JSON.stringify(PORTSCAN)})
    // Use up the descriptors the scan's own cap left for the rest of the process, keeping a few,
    // after one small scan has loaded everything a scan needs.
    scanPorts({ hosts: [${JSON.stringify(host)}], ports: [1], threads: 1 }).then(() => {
    const held = []
    try { for (;;) held.push(fs.openSync('/dev/null', 'r')) } catch {}
    for (let i = 0; i < 6; i++) fs.closeSync(held.pop())
    const ports = Array.from({ length: 1000 }, (_, i) => 2801 + i).filter((p) => !${JSON.stringify([...WILDCARD])}.includes(p))
    scanPorts({ hosts: [${JSON.stringify(host)}], ports, concurrency: 64, threads: 1, onStats: (s) => { process.stdout.write(JSON.stringify(s) + '\\n') } })
      .then((r) => { console.log(JSON.stringify(r[0])); process.exit(0) }, (e) => { console.log(JSON.stringify({ error: e.message })); process.exit(0) })
    })`
  const r = await runChild(['sh', '-c', 'ulimit -n 200 && exec "$0" "$@"'], code)
  t.equal(r.status, 0, r.stderr)
  const lines = r.stdout.trim().split('\n')
  const stats = JSON.parse(lines.at(-2) ?? '{}')
  const res = JSON.parse(lines.at(-1) ?? '{}')
  t.equal(res.error, undefined)
  t.same(res.open, open)
  t.same(res.filtered, [])
  t.equal(res.closedCount, 997 - [...WILDCARD].filter((p) => p >= 2801 && p <= 3800).length)
  t.ok(stats.resourceBackoffs > 0, `backed off ${stats.resourceBackoffs} times`)
})
