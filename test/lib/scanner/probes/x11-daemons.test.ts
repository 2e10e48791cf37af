// Debian's Xvfb with TCP on. Xvfb listens on every address of its network namespace (no option binds one), so
// each run gets a namespace of its own, with only a loopback, and the detection and the checks run inside it
// against a random 127.x address: with `-ac` the server accepts anyone (X11 open), with `-auth` a client without
// the cookie is refused (and nothing is reported).
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'tap'

const XVFB = '/usr/bin/Xvfb'
const ROOT = typeof process.getuid === 'function' && process.getuid() === 0
const TSX = path.join(__dirname, '..', '..', '..', '..', 'node_modules', '.bin', 'tsx')
const LIB = path.join(__dirname, '..', '..', '..', '..', 'lib', 'scanner')
const CI = process.env.CI === 'true'
function hasIp (): boolean {
  try { execFileSync('sh', ['-c', 'command -v ip']); return true } catch { return false }
}
const skip = !ROOT || !hasIp() ? 'needs root and ip (a network namespace of its own)' : !CI && !existsBin(XVFB) ? 'Xvfb is not installed (Debian package xvfb)' : false
function existsBin (p: string): boolean {
  try { execFileSync('test', ['-x', p]); return true } catch { return false }
}

/** An MIT-MAGIC-COOKIE-1 entry in the Xauthority format (family local, display 7). */
function authFile (dir: string): string {
  const field = (b: Buffer): Buffer => { const l = Buffer.alloc(2); l.writeUInt16BE(b.length); return Buffer.concat([l, b]) }
  const family = Buffer.from([1, 0])
  const file = path.join(dir, 'Xauthority')
  writeFileSync(file, Buffer.concat([family, field(Buffer.from('vulnscan')), field(Buffer.from('7')), field(Buffer.from('MIT-MAGIC-COOKIE-1')), field(randomBytes(16))]))
  return file
}

async function run (t: { teardown: (fn: () => void) => void }, open: boolean): Promise<{ service: Record<string, unknown>, exposures: Array<{ check: string, evidence: string }>, concluded: boolean }> {
  const ns = `vs-x11-${randomBytes(4).toString('hex')}`
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vulnscan-xvfb-'))
  execFileSync('ip', ['netns', 'add', ns])
  t.teardown(() => { try { execFileSync('ip', ['netns', 'del', ns]) } catch {} rmSync(dir, { recursive: true, force: true }) })
  execFileSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up'])
  const display = randomInt(1, 10)
  const args = ['netns', 'exec', ns, XVFB, `:${display}`, '-listen', 'tcp', '-nolisten', 'unix', ...(open ? ['-ac'] : ['-auth', authFile(dir)])]
  const xvfb = spawn('ip', args, { stdio: 'ignore' })
  t.teardown(() => { xvfb.kill('SIGTERM') })
  const host = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`
  const port = 6000 + display
  const code = `
    const net = require('node:net')
    const { detectService } = require(${JSON.stringify(path.join(LIB, 'detect.ts'))})
    const { runChecks } = require(${JSON.stringify(path.join(LIB, 'checks', 'index.ts'))})
    const up = () => new Promise((resolve) => { const s = net.connect(${port}, '${host}', () => { s.destroy(); resolve(true) }); s.on('error', () => resolve(false)) })
    ;(async () => {
      for (let i = 0; i < 100 && !(await up()); i++) await new Promise((r) => setTimeout(r, 100))
      const service = await detectService({ host: '${host}', port: ${port}, level: 'light' })
      const r = await runChecks({ host: '${host}', port: ${port}, service, hostnames: [] })
      console.log(JSON.stringify({ service, exposures: r.exposures, concluded: r.concluded }))
    })()`
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_OPTIONS' && !k.startsWith('TAP') && !k.startsWith('_TAPJS')))
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn('ip', ['netns', 'exec', ns, TSX, '-e', code], { stdio: ['ignore', 'pipe', 'pipe'], env })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    child.on('close', (status) => status === 0 ? resolve(stdout) : reject(new Error(`exit ${status}: ${stderr}`)))
  })
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}')
}

test('Xvfb -ac: X.Org named with its version, X11 open to anyone', { skip }, async (t) => {
  const r = await run(t, true)
  t.match(r.service, { service: 'x11', product: 'X.Org X server', version: /^\d+\.\d+\.\d+$/, extraInfo: /^X11 11\.0; access granted without authorization; 1 screen/ })
  t.ok(r.concluded)
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-X11-OPEN'])
  t.match(r.exposures[0].evidence, /vendor The X\.Org Foundation release \d+/)
})

test('Xvfb -auth: refused without the cookie, no finding', { skip }, async (t) => {
  const r = await run(t, false)
  t.match(r.service, { service: 'x11', extraInfo: /access refused; "Authorization required/ })
  t.ok(r.concluded)
  t.same(r.exposures, [])
})
