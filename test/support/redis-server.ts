// Starts a private redis-server on a free port for tests that stop or restart Redis.
import { spawn, execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort, loopbackAddress } from './loopback'

export interface PrivateRedis {
  host: string
  port: number
  url: string
  /** Stop the server (SHUTDOWN; with persistence, NOSAVE is not used so the AOF stays). */
  stop(): Promise<void>
  /** Start it again on the same port and data directory. */
  start(): Promise<void>
  /** Stop and remove its data directory. */
  destroy(): Promise<void>
  /** SIGKILL, as a crash or an OOM kill does: what the AOF holds survives (appendOnly), nothing else. */
  kill(): Promise<void>
  /** SIGSTOP: the server keeps its connections open and answers nothing, until resume(). */
  pause(): void
  /** SIGCONT after pause(). */
  resume(): void
  /** The server's process id (undefined while stopped). */
  pid(): number | undefined
}

export function redisServerAvailable (): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

async function waitUntil (check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error('redis-server did not reach the expected state in time')
}

async function answers (host: string, port: number): Promise<boolean> {
  const c = new Redis({ port, host, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 })
  c.on('error', () => {})
  try {
    await c.connect()
    await c.ping()
    return true
  } catch {
    return false
  } finally {
    c.disconnect()
  }
}

export async function startPrivateRedis (opts: { appendOnly?: boolean } = {}): Promise<PrivateRedis> {
  const host = loopbackAddress()
  const port = await freePort(host)
  const dir = mkdtempSync(join(tmpdir(), 'vulnscan-redis-'))
  const args = ['--port', String(port), '--bind', host, '--dir', dir, '--save', '',
    '--appendonly', opts.appendOnly ? 'yes' : 'no', '--appendfsync', 'always', '--daemonize', 'no']
  let child: ReturnType<typeof spawn> | null = null
  const start = async (): Promise<void> => {
    child = spawn('redis-server', args, { stdio: 'ignore' })
    await waitUntil(() => answers(host, port), 5000)
  }
  const stop = async (): Promise<void> => {
    if (!child) return
    const exited = new Promise((resolve) => child!.once('exit', resolve))
    child.kill('SIGCONT')
    child.kill('SIGTERM')
    await exited
    child = null
    await waitUntil(async () => !(await answers(host, port)), 5000)
  }
  const kill = async (): Promise<void> => {
    const c = child as ReturnType<typeof spawn> | null
    if (!c) return
    const exited = new Promise((resolve) => c.once('exit', resolve))
    c.kill('SIGCONT')
    c.kill('SIGKILL')
    await exited
    child = null
  }
  await start()
  return {
    host,
    port,
    url: `redis://${host}:${port}`,
    start,
    stop,
    kill,
    pause: () => { (child as ReturnType<typeof spawn> | null)?.kill('SIGSTOP') },
    resume: () => { (child as ReturnType<typeof spawn> | null)?.kill('SIGCONT') },
    pid: () => (child as ReturnType<typeof spawn> | null)?.pid,
    destroy: async () => {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
