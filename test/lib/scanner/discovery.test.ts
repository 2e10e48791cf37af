// Host discovery in a network namespace: a /26 on a veth interface where three addresses are the
// namespace's own (with a listener on one port each) and the rest go nowhere (nft drops them too).
// Discovery must call exactly the three up, the scan must report the others down without a port
// scan, and the whole must cost about one discovery timeout, not two connect timeouts per port.

import { execFileSync, spawn } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import path from 'node:path'
import { test } from 'tap'

const ROOT = typeof process.getuid === 'function' && process.getuid() === 0
function hasCommand (cmd: string): boolean {
  try { execFileSync('sh', ['-c', `command -v ${cmd}`]); return true } catch { return false }
}
const TSX = path.join(__dirname, '..', '..', '..', 'node_modules', '.bin', 'tsx')
const ENGINE = path.join(__dirname, '..', '..', '..', 'lib', 'scanner', 'engine.ts')

function runIn (ns: string, code: string): Promise<{ status: number | null, stdout: string, stderr: string }> {
  return new Promise((resolve) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && !k.startsWith('TAP') && !k.startsWith('_TAPJS')))
    const child = spawn('ip', ['netns', 'exec', ns, TSX, '-e', code], { stdio: ['ignore', 'pipe', 'pipe'], env })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    child.on('close', (status) => resolve({ status, stdout, stderr }))
  })
}

test('discovery skips dead addresses and finds the live ones', { skip: !ROOT || !hasCommand('ip') || !hasCommand('nft') ? 'needs root, ip and nft' : false }, async (t) => {
  const ns = `vs-disc-${randomBytes(4).toString('hex')}`
  const net = `10.${randomInt(0, 256)}.${randomInt(0, 256)}`
  execFileSync('ip', ['netns', 'add', ns])
  t.teardown(() => { try { execFileSync('ip', ['netns', 'del', ns]) } catch {} })
  const ip = (...a: string[]): void => { execFileSync('ip', ['-n', ns, ...a]) }
  ip('link', 'set', 'lo', 'up')
  // Both ends of a veth pair inside the namespace: a link the /26 lives on (no dummy module needed).
  ip('link', 'add', 'd0', 'type', 'veth', 'peer', 'name', 'd1')
  ip('link', 'set', 'd0', 'up')
  ip('link', 'set', 'd1', 'up')
  const live = [`${net}.5`, `${net}.17`, `${net}.40`]
  for (const a of live) ip('addr', 'add', `${a}/26`, 'dev', 'd0')
  const nft = (...a: string[]): void => { execFileSync('ip', ['netns', 'exec', ns, 'nft', ...a]) }
  nft('add', 'table', 'inet', 'vs')
  nft('add', 'chain', 'inet', 'vs', 'output', '{ type filter hook output priority 0; }')
  nft('add', 'rule', 'inet', 'vs', 'output', 'ip', 'daddr', `${net}.0/26`, 'ip', 'daddr', '!=', `{ ${live.join(', ')} }`, 'drop')

  const code = `
    const net = require('node:net')
    const { scanHosts } = require(${JSON.stringify(ENGINE)})
    const live = ${JSON.stringify(live)}
    const servers = live.map((a, i) => net.createServer((s) => s.destroy()).listen(8000 + i, a))
    setTimeout(async () => {
      const hosts = Array.from({ length: 62 }, (_, i) => ({ address: '${net}.' + (i + 1), hostnames: [] }))
      const template = { name: 'discovery', ports: [8000, 8001, 8002, 9999], udpPorts: [], udp: false, detection: 'none', nvd: false }
      const out = {}
      let t0 = Date.now()
      out.on = await scanHosts(hosts, { template })
      out.onMs = Date.now() - t0
      t0 = Date.now()
      out.off = await scanHosts(hosts.slice(0, 8), { template, discovery: false })
      out.offMs = Date.now() - t0
      console.log(JSON.stringify(out))
      for (const s of servers) s.close()
    }, 200)`
  const r = await runIn(ns, code)
  t.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}')
  const up = out.on.filter((h: { up: boolean }) => h.up).map((h: { address: string }) => h.address)
  t.same(up, live, 'exactly the live addresses are up')
  t.equal(out.on.length, 62)
  for (const [i, a] of live.entries()) {
    const h = out.on.find((x: { address: string }) => x.address === a)
    t.same(h.ports.map((p: { port: number, protocol: string, state: string }) => `${p.port}/${p.protocol} ${p.state}`), [`${8000 + i}/tcp open`], `${a}: its listener, the rest closed`)
    t.equal(h.closedCount, 3)
  }
  t.ok(out.on.filter((h: { up: boolean, ports: unknown[] }) => !h.up && h.ports.length === 0).length === 59, 'the dead ones are down, with no ports')
  t.ok(out.onMs < 4000, `62 addresses with discovery in ${out.onMs} ms (one discovery timeout, not two connect timeouts per port)`)
  // Without discovery every address is port-scanned: the dead ones only end after their timeouts.
  t.same(out.off.filter((h: { up: boolean }) => h.up).map((h: { address: string }) => h.address), [`${net}.5`], 'discovery off: the same answer on the addresses it covers')
  t.comment(`with discovery: ${out.onMs} ms for 62 addresses; without, 8 addresses: ${out.offMs} ms`)
})
