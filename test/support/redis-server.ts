// Starts a private redis-server on a free port for tests that stop or restart Redis.
import { spawn, execFileSync } from 'node:child_process'
import { createServer } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'

export interface PrivateRedis {
  port: number
  url: string
  /** Stop the server (SHUTDOWN; with persistence, NOSAVE is not used so the AOF stays). */
  stop(): Promise<void>
  /** Start it again on the same port and data directory. */
  start(): Promise<void>
  /** Stop and remove its data directory. */
  destroy(): Promise<void>
}

export function redisServerAvailable (): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** A TCP port free on 127.0.0.1 at the time of asking. */
export async function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

async function waitUntil (check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error('redis-server did not reach the expected state in time')
}

async function answers (port: number): Promise<boolean> {
  const c = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 500 })
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
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'vulnscan-redis-'))
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '',
    '--appendonly', opts.appendOnly ? 'yes' : 'no', '--appendfsync', 'always', '--daemonize', 'no']
  let child: ReturnType<typeof spawn> | null = null
  const start = async (): Promise<void> => {
    child = spawn('redis-server', args, { stdio: 'ignore' })
    await waitUntil(() => answers(port), 5000)
  }
  const stop = async (): Promise<void> => {
    if (!child) return
    const exited = new Promise((resolve) => child!.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
    child = null
    await waitUntil(async () => !(await answers(port)), 5000)
  }
  await start()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    destroy: async () => {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
