// Starts a private PostgreSQL (Debian's server binaries, a fresh cluster in a temporary directory) on a random
// loopback address and a free port, for tests that stop or restart the results database under load. Its unix
// socket sits in the cluster's own directory. PostgreSQL refuses to run as root: as root, the cluster belongs
// to the `postgres` user and the server runs as that user.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomInt } from 'node:crypto'
import { Client } from 'pg'

const BIN = '/usr/lib/postgresql/15/bin'

export interface PrivatePostgres {
  host: string
  port: number
  /** URL of its `postgres` database (with the password when the cluster wants one). */
  url: string
  /** Stop at once, the way a crash or an OOM kill does (`immediate` mode: recovery on the next start). */
  crash(): Promise<void>
  /** Start again on the same address, port and data directory. */
  start(): Promise<void>
  /** Stop and remove the cluster. */
  destroy(): Promise<void>
  /**
   * End every backend of the service's connections (application_name 'vulnscan') that is running a query or idle in
   * a transaction, as a failover or idle_in_transaction_session_timeout does; returns how many it ended.
   */
  terminateBackends(states?: string[]): Promise<number>
  /**
   * SIGSTOP the postmaster and every process it started (backends, checkpointer, WAL writer): connections stay open,
   * new ones are queued by the kernel, and nothing answers, until resume(). Returns how many processes it stopped.
   */
  pause(): number
  /** SIGCONT every process pause() stopped. */
  resume(): void
}

/** The pids whose parent is `ppid`, from /proc. */
function childrenOf (ppid: number): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      // The command name (field 2) is in parentheses and may hold spaces: the parent pid is the 2nd field after it.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === ppid) out.push(Number(name))
    } catch {}
  }
  return out
}

export function postgresServerAvailable (): boolean {
  return existsSync(join(BIN, 'initdb')) && existsSync(join(BIN, 'postgres'))
}

/** The uid and gid to run the server as: ours, or postgres's when we are root. */
function runAs (): { uid?: number, gid?: number } {
  if (process.getuid?.() !== 0) return {}
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim())
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim())
  return { uid, gid }
}

/** A random address in 127.0.0.0/8 other than 127.0.0.1 (the machine's own services) and a port free on it. */
async function freeLoopback (): Promise<{ host: string, port: number }> {
  for (;;) {
    const host = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const srv = createServer()
        srv.once('error', reject)
        srv.listen(0, host, () => {
          const { port } = srv.address() as { port: number }
          srv.close(() => resolve(port))
        })
      })
      return { host, port }
    } catch {}
  }
}

async function answers (url: string): Promise<boolean> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 500 })
  c.on('error', () => {})
  try {
    await c.connect()
    await c.query('SELECT 1')
    return true
  } catch {
    return false
  } finally {
    await c.end().catch(() => {})
  }
}

async function waitUntil (what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`private PostgreSQL: ${what} not within ${ms} ms`)
}

export interface PrivatePostgresOptions {
  /** How the cluster authenticates everyone (trust by default); with a password method, `password` is postgres's. */
  auth?: 'trust' | 'scram-sha-256'
  password?: string
}

export async function startPrivatePostgres (opts: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
  const owner = runAs()
  const dir = mkdtempSync(join(tmpdir(), 'vulnscan-pg-'))
  const data = join(dir, 'data')
  if (owner.uid !== undefined) chownSync(dir, owner.uid, owner.gid!)
  const auth = opts.auth ?? 'trust'
  const password = opts.password ?? 'a-long-test-password'
  const pwfile = join(dir, 'pwfile')
  if (auth !== 'trust') {
    writeFileSync(pwfile, password + '\n')
    if (owner.uid !== undefined) chownSync(pwfile, owner.uid, owner.gid!)
  }
  execFileSync(join(BIN, 'initdb'), ['-D', data, '-U', 'postgres', `--auth=${auth}`, ...(auth !== 'trust' ? [`--pwfile=${pwfile}`] : []),
    '--no-sync', '-E', 'UTF8', '--locale=C.UTF-8'], { ...owner, stdio: 'ignore' })
  const { host, port } = await freeLoopback()
  const url = auth === 'trust' ? `postgres://postgres@${host}:${port}/postgres` : `postgres://postgres:${encodeURIComponent(password)}@${host}:${port}/postgres`
  // Loopback only, the socket in the cluster's directory; durable commits as in production (fsync stays on).
  const args = ['-D', data, '-h', host, '-p', String(port), '-k', dir, '-c', 'max_connections=100', '-c', 'shared_buffers=32MB']
  let child: ChildProcess | null = null
  const start = async (): Promise<void> => {
    child = spawn(join(BIN, 'postgres'), args, { ...owner, stdio: 'ignore' })
    await waitUntil('accepting connections', () => answers(url), 30_000)
  }
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    const c = child
    if (c === null) return
    child = null
    const exited = new Promise((resolve) => c.once('exit', resolve))
    c.kill(signal)
    await exited
  }
  let admin: Client | null = null
  const terminateBackends = async (states = ['active', 'idle in transaction', 'idle in transaction (aborted)']): Promise<number> => {
    if (admin === null) {
      const c = new Client({ connectionString: url, connectionTimeoutMillis: 2000, application_name: 'fault-injector' })
      c.on('error', () => { if (admin === c) admin = null })
      await c.connect()
      admin = c
    }
    try {
      const r = await admin.query("SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = 'vulnscan' AND state = ANY($1)", [states])
      return r.rows.filter((row: { ended: boolean }) => row.ended).length
    } catch (err) {
      await admin?.end().catch(() => {})
      admin = null
      throw err
    }
  }
  const dropAdmin = async (): Promise<void> => {
    const c = admin
    admin = null
    await c?.end().catch(() => {})
  }
  let paused: number[] = []
  const signal = (pids: number[], sig: NodeJS.Signals): void => { for (const pid of pids) { try { process.kill(pid, sig) } catch {} } }
  await start()
  return {
    host,
    port,
    url,
    terminateBackends,
    // SIGQUIT: immediate shutdown, no checkpoint; committed transactions survive through the WAL.
    crash: async () => { await dropAdmin(); await stop('SIGQUIT') },
    pause: () => {
      const pid = (child as ChildProcess | null)?.pid
      if (pid === undefined) return 0
      // The postmaster first, so that it starts no new backend while its children are stopped.
      signal([pid], 'SIGSTOP')
      paused = [pid, ...childrenOf(pid)]
      signal(paused.slice(1), 'SIGSTOP')
      return paused.length
    },
    resume: () => {
      signal(paused, 'SIGCONT')
      paused = []
    },
    start,
    destroy: async () => {
      signal(paused, 'SIGCONT')
      paused = []
      await dropAdmin()
      await stop('SIGINT')
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
