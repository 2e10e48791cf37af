// A daemon that listens on every address (no option binds one: Xvfb, rmiregistry) runs in a network namespace of
// its own with only a loopback, and the detection and the checks run inside it against a random 127.x address,
// in a child `tsx` (a process cannot enter a namespace for a while and come back). Root and `ip` are needed.
import { execFileSync, spawn } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import path from 'node:path'

const TSX = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'tsx')
const LIB = path.join(__dirname, '..', '..', 'lib', 'scanner')

/** Why namespace tests cannot run here, or false. */
export function namespaceUnavailable (): string | false {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return 'needs root (a network namespace of its own)'
  try { execFileSync('sh', ['-c', 'command -v ip']) } catch { return 'needs ip (iproute2)' }
  return false
}

export interface NamespaceResult {
  service: Record<string, unknown>
  exposures: Array<{ check: string, evidence: string }>
  concluded: boolean
}

/** Start `argv` in a fresh namespace, wait for `port`, detect and check it there; everything is removed by `t.teardown`. */
export async function detectInNamespace (t: { teardown: (fn: () => void | Promise<void>) => void }, argv: string[], port: number, level: 'light' | 'full' = 'light', readyPort = port): Promise<NamespaceResult> {
  const ns = `vs-ns-${randomBytes(4).toString('hex')}`
  execFileSync('ip', ['netns', 'add', ns])
  t.teardown(() => { try { execFileSync('ip', ['netns', 'del', ns]) } catch {} })
  execFileSync('ip', ['-n', ns, 'link', 'set', 'lo', 'up'])
  const daemon = spawn('ip', ['netns', 'exec', ns, ...argv], { stdio: 'ignore' })
  // Waits for the daemon to exit (SIGKILL after 5 s), so that a test's later teardown can remove its files.
  const exited = new Promise<void>((resolve) => daemon.once('close', () => resolve()))
  t.teardown(async () => {
    daemon.kill('SIGTERM')
    const timer = setTimeout(() => daemon.kill('SIGKILL'), 5000)
    await exited
    clearTimeout(timer)
  })
  const host = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`
  const code = `
    const net = require('node:net')
    const { detectService } = require(${JSON.stringify(path.join(LIB, 'detect.ts'))})
    const { runChecks } = require(${JSON.stringify(path.join(LIB, 'checks', 'index.ts'))})
    const up = () => new Promise((resolve) => { const s = net.connect(${readyPort}, '${host}', () => { s.destroy(); resolve(true) }); s.on('error', () => resolve(false)) })
    ;(async () => {
      for (let i = 0; i < 200 && !(await up()); i++) await new Promise((r) => setTimeout(r, 100))
      const service = await detectService({ host: '${host}', port: ${port}, level: '${level}' })
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
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as NamespaceResult
}
