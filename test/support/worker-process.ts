// Runs worker.ts as a separate process, the way `npm run start:worker` does (or server.ts, as `npm run start:api`
// does), and keeps its pino log lines so tests can count what the process said (e.g. 'scan finished' once per scan).
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'

const ROOT = join(__dirname, '..', '..')
// A log line longer than this is not one of ours; dropping it keeps a misbehaving child from growing memory.
const MAX_LINE = 64 * 1024

export interface WorkerLogLine {
  level: number
  msg: string
  scanId?: string
  [key: string]: unknown
}

export interface WorkerProcess {
  readonly child: ChildProcess
  readonly pid: number
  /** Every JSON log line the worker wrote to stdout so far. */
  readonly lines: WorkerLogLine[]
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>
  /** Whether the process has exited (by itself or killed). */
  hasExited(): boolean
  /** What it wrote to stderr (the first 64 KiB). */
  stderr(): string
  /** Resolves once the worker logged 'worker started'. */
  ready(ms?: number): Promise<void>
  /** SIGTERM and wait for a graceful exit (SIGKILL after `ms`). */
  stop(ms?: number): Promise<void>
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>
}

export function spawnWorker (env: Record<string, string | undefined>): WorkerProcess {
  return spawnEntry(['worker.ts'], env, 'worker started')
}

/** The API alone (`npm run start:api`), listening on env.HOST and env.PORT. */
export function spawnApi (env: Record<string, string | undefined>): WorkerProcess {
  return spawnEntry(['server.ts', '--no-worker'], { FASTIFY_AUTOLOAD_TYPESCRIPT: '1', ...env }, 'Server listening at')
}

function spawnEntry (entry: string[], env: Record<string, string | undefined>, readyMsg: string): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, entry[0]), ...entry.slice(1)], {
    cwd: ROOT,
    // The scaled deployment starts only with CREDENTIALS_KEY: the tests' own unless one is given.
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', CREDENTIALS_KEY: '7e57c4ed'.repeat(8), ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const lines: WorkerLogLine[] = []
  let partial = ''
  child.stdout!.setEncoding('utf8')
  child.stdout!.on('data', (chunk: string) => {
    partial += chunk
    let nl: number
    while ((nl = partial.indexOf('\n')) >= 0) {
      const line = partial.slice(0, nl)
      partial = partial.slice(nl + 1)
      try {
        lines.push(JSON.parse(line) as WorkerLogLine)
      } catch {}
    }
    if (partial.length > MAX_LINE) partial = ''
  })
  let stderr = ''
  child.stderr!.setEncoding('utf8')
  child.stderr!.on('data', (chunk: string) => { if (stderr.length < MAX_LINE) stderr += chunk })
  let exitCode: number | null | undefined
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => { exitCode = code; resolve(code) }))

  const waitExit = async (ms: number): Promise<boolean> => {
    if (exitCode !== undefined) return true
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ms) })
    const done = await Promise.race([exited.then(() => true), timedOut])
    clearTimeout(timer)
    return done
  }

  return {
    child,
    pid: child.pid ?? -1,
    lines,
    exited,
    hasExited: () => exitCode !== undefined,
    stderr: () => stderr,
    async ready (ms = 30_000) {
      const deadline = Date.now() + ms
      while (!lines.some((l) => typeof l.msg === 'string' && l.msg.startsWith(readyMsg))) {
        if (exitCode !== undefined) throw new Error(`${entry[0]} exited (${String(exitCode)}) before starting: ${stderr}`)
        if (Date.now() > deadline) throw new Error(`${entry[0]} did not start within ${ms} ms: ${stderr}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    async stop (ms = 20_000) {
      if (exitCode !== undefined) return
      child.kill('SIGTERM')
      if (!(await waitExit(ms))) {
        child.kill('SIGKILL')
        await exited
      }
    },
    async kill () {
      if (exitCode !== undefined) return
      child.kill('SIGKILL')
      await exited
    }
  }
}

/** How many times each scan id appears in a log line with this message. */
export function countByScan (lines: WorkerLogLine[], msg: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const l of lines) {
    if (l.msg === msg && typeof l.scanId === 'string') out.set(l.scanId, (out.get(l.scanId) ?? 0) + 1)
  }
  return out
}
