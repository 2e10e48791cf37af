import { spawn } from 'node:child_process'
import { randomInt } from 'node:crypto'
import * as net from 'node:net'
import * as path from 'node:path'
import { test } from 'tap'

const ROOT = path.join(__dirname, '..', '..')
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx')
const SCRIPT = path.join(ROOT, 'scripts', 'scan.ts')

function cli (args: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(TSX, [SCRIPT, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

async function sshOn (host: string, port: number): Promise<() => Promise<void>> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
    s.on('error', () => {})
    s.write('SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n')
  })
  await new Promise<void>((resolve) => server.listen({ host, port }, resolve))
  return async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

test('prints a table of what it found', async (t) => {
  const host = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`
  t.teardown(await sshOn(host, 2222))
  const r = await cli([host, '--ports', '2221-2223'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, new RegExp(`${host.replace(/\./g, '\\.')}: up.*1 open, 0 filtered, 2 closed`))
  t.match(r.stdout, /2222\/tcp\s*│\s*open\s*│\s*ssh\s*│\s*OpenSSH\s*│\s*9\.2p1 deb12u3\s*│\s*cpe:2\.3:a:openbsd:openssh:/)
})

test('--json prints the hosts as JSON, with the target type read from the syntax', async (t) => {
  const a = randomInt(1, 255)
  const b = randomInt(0, 256)
  const host = `127.${a}.${b}.2`
  t.teardown(await sshOn(host, 2222))
  const r = await cli([`127.${a}.${b}.1-127.${a}.${b}.3`, '--template', 'discovery', '-p', '2222', '--json'])
  t.equal(r.code, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  t.equal(out.template, 'discovery')
  t.same(out.hosts.map((h: { address: string }) => h.address), [`127.${a}.${b}.1`, host, `127.${a}.${b}.3`])
  t.same(out.hosts[1].ports, [{ port: 2222, protocol: 'tcp', state: 'open' }])
  t.same(out.hosts[0].ports, [])
})

test('bad input gives a clear error, the usage text and exit status 2', async (t) => {
  const cases: [string[], RegExp][] = [
    [[], /error: no target given/],
    [['10.0.0.300'], /error: 10\.0\.0\.300: '10\.0\.0\.300' is not a valid IPv4 or IPv6 address/],
    [['127.0.0.1', '--ports', '22,70000'], /error: '70000': port 70000 is outside 1-65535/],
    [['127.0.0.1', '--template', 'loud'], /error: unknown template 'loud'/],
    [['10.0.0.0/8'], /cidr \/8 covers 16777216 hosts, more than the limit of 4096/],
    [['127.0.0.1', '--deny', '127.0.0.0/8'], /127\.0\.0\.1 is in the denied block 127\.0\.0\.0\/8/],
    [['127.0.0.1', '--bogus'], /error: Unknown option '--bogus'/]
  ]
  // In parallel: each run starts a TypeScript process, which is most of its time.
  const results = await Promise.all(cases.map(async ([args]) => await cli(args)))
  for (const [i, [args, message]] of cases.entries()) {
    const r = results[i]
    t.equal(r.code, 2, args.join(' '))
    t.match(r.stderr, message)
    t.match(r.stderr, /Usage: npm run scan/)
    t.equal(r.stdout, '')
  }
})

test('a name that does not resolve fails with status 1', async (t) => {
  const r = await cli(['no-such-host.invalid'])
  t.equal(r.code, 1)
  t.match(r.stderr, /error: no-such-host\.invalid: the name does not resolve/)
})

test('--help prints the usage and exits 0', async (t) => {
  const r = await cli(['--help'])
  t.equal(r.code, 0)
  t.match(r.stdout, /Usage: npm run scan -- <target…> \[options\]/)
})
