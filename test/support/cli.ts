// Runs the `vulnscan` CLI as a user's shell would: a child process, or on a pseudo-terminal through util-linux
// `script` when the output is interactive (progress line, Ctrl-C).
import { execFile, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { loopbackAddress } from './loopback'

export const BIN = join(__dirname, '..', '..', 'bin', 'vulnscan.js')
export const SCRIPT = '/usr/bin/script'
export const hasScript = (): boolean => existsSync(SCRIPT)
/** Node options that make a CLI child collect garbage every 20 ms (weakly held objects go at once). */
export const GC_PRESSURE = ['--expose-gc', '--require', join(__dirname, 'gc-pressure.js')]

export interface Run { code: number, stdout: string, stderr: string }

/** The environment of a user's shell: without the runner's VULNSCAN_* settings, colour forcing or tap's loader hooks. */
export function cleanEnv (env: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VULNSCAN_') && !k.startsWith('TAP') && k !== 'FORCE_COLOR' && k !== 'NODE_OPTIONS'))
  return { ...base, NO_COLOR: '1', ...env }
}

export function cli (args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: cleanEnv(env), timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1
      resolve({ code, stdout, stderr })
    })
  })
}

/** Starts the app on a random loopback address; returns its URL and address. */
export async function listen (app: FastifyInstance): Promise<{ url: string, address: string, port: number }> {
  const address = loopbackAddress()
  await app.listen({ port: 0, host: address })
  const { port } = app.server.address() as AddressInfo
  return { url: `http://${address}:${port}`, address, port }
}

const quote = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`

export interface PtyRun {
  /** Everything the terminal showed so far. */
  output: () => string
  /** Types into the terminal (e.g. '\x03' for Ctrl-C). */
  type: (text: string) => void
  /** Resolves when a regular expression matches the output (or rejects after `ms`). */
  waitFor: (pattern: RegExp, ms?: number) => Promise<void>
  /** The exit status of the CLI. */
  done: Promise<number>
  /** Ends the terminal and the CLI in it (for a test's teardown). */
  kill: () => void
}

/**
 * Runs the CLI on a pseudo-terminal of `columns` columns (set with stty, and in $COLUMNS). `exec` makes the CLI the
 * terminal's foreground process, so Ctrl-C reaches it as it would from a shell.
 */
export function cliInPty (args: string[], env: Record<string, string | undefined>, columns = 80, nodeArgs: string[] = [], cwd?: string): PtyRun {
  const command = `stty cols ${columns} rows 24 && exec ${[process.execPath, ...nodeArgs, BIN, ...args].map(quote).join(' ')}`
  const child = spawn(SCRIPT, ['-qec', command, '/dev/null'], { env: cleanEnv({ COLUMNS: String(columns), ...env }), stdio: ['pipe', 'pipe', 'pipe'], ...(cwd !== undefined ? { cwd } : {}) })
  let output = ''
  const waiters = new Set<() => void>()
  const onData = (chunk: Buffer): void => {
    output += chunk.toString('utf8')
    for (const w of waiters) w()
  }
  child.stdout.on('data', onData)
  child.stderr.on('data', onData)
  const done = new Promise<number>((resolve) => child.on('close', (code) => {
    child.stdin.end()
    resolve(code ?? -1)
  }))
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000)
  void done.then(() => clearTimeout(killer))
  return {
    output: () => output,
    type: (text) => { child.stdin.write(text) },
    waitFor: (pattern, ms = 60_000) => new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (!pattern.test(output)) return
        waiters.delete(check)
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`${String(pattern)} not seen within ${ms} ms; output: ${JSON.stringify(output)}`))
      }, ms)
      waiters.add(check)
      check()
    }),
    done,
    kill: () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') }
  }
}

/**
 * What a terminal shows, line by line: a redraw (carriage return, cursor restore, cursor to a column) starts the
 * line again, so each drawn state is one entry; colour and other control codes are dropped.
 */
export function screenLines (raw: string): string[] {
  /* eslint-disable no-control-regex */
  return raw
    .replace(/\x1b[78]|\x1b\[\d*G/g, '\r')
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')
    /* eslint-enable no-control-regex */
    .split('\n').flatMap((line) => line.split('\r')).filter((l) => l !== '')
}
