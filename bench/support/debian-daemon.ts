// A real daemon from Debian's packages, started by a test or by the service-detection lab on a random
// loopback address (never 127.0.0.1, never a wildcard) with a configuration of its own in a throwaway
// directory, in the foreground, and stopped by whoever started it. `.ci/run` installs the packages
// without starting their system services. The specs of the daemons themselves are in daemon-specs.ts.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { freePort, loopbackAddress } from './loopback'

export interface DaemonContext {
  host: string
  port: number
  /** A private directory for configuration, state, keys and logs. */
  dir: string
}

export interface DaemonSpec {
  /** Debian package that ships the binary (its version is reported with the daemon). */
  pkg: string
  binary: string
  /** Files to write into the directory before the start (name → content). */
  files?: (ctx: DaemonContext) => Record<string, string>
  /** Commands to run in the directory before the start (key generation …). */
  prepare?: (ctx: DaemonContext) => Array<[string, string[]]>
  args: (ctx: DaemonContext) => string[]
  /** Environment added to the daemon's (HOME-like directories pointed into the private one). */
  env?: (ctx: DaemonContext) => Record<string, string>
  /** Ready when this holds on the listening port (default: a TCP connect succeeds). */
  ready?: (ctx: DaemonContext) => Promise<boolean>
  /** How long the daemon may take to come up. */
  startMs?: number
  /** How long it may take to stop after SIGTERM before it is killed (default 5 s). */
  stopMs?: number
  /**
   * The daemon listens only on addresses some interface holds (named, smbd enumerate interfaces
   * instead of binding what they are told): its loopback address is added to `lo` for the run.
   */
  interfaceAddress?: boolean
  /** Undo what the daemon leaves outside its directory, once it has exited (dockerd's runtime directory). */
  cleanup?: (ctx: DaemonContext) => void
}

export interface RunningDaemon extends DaemonContext {
  /** The installed package version, as dpkg reports it. */
  packageVersion: string
  /** What the daemon wrote to stdout and stderr (the tail). */
  log: () => string
  stop: () => Promise<void>
}

/**
 * Why a test of this daemon cannot run here, or false when it can. Under CI a missing binary is
 * a failure of the machine setup, not a reason to skip.
 */
export function daemonUnavailable (binary: string, pkg: string): string | false {
  if (existsSync(binary)) return false
  const reason = `${binary} is absent: install Debian's ${pkg} to run this test`
  if (process.env.CI === 'true') throw new Error(`${reason} (CI must have it)`)
  return reason
}

/** Whether host:port accepts a TCP connection now. */
export async function accepts (host: string, port: number): Promise<boolean> {
  return await new Promise<boolean>((resolve) => {
    const sock = net.connect({ host, port })
    sock.setTimeout(500)
    sock.once('connect', () => { sock.destroy(); resolve(true) })
    sock.once('error', () => resolve(false))
    sock.once('timeout', () => { sock.destroy(); resolve(false) })
  })
}

export function packageVersion (pkg: string): string {
  const q = spawnSync('dpkg-query', ['-W', '-f=${Version}', pkg], { encoding: 'utf8' })
  return q.status === 0 ? q.stdout.trim() : ''
}

/** How to stop each daemon this process has spawned and not yet stopped, those still starting included. */
const live = new Set<() => Promise<void>>()

/** Stop every daemon this process started and has not stopped (a bench interrupted by Ctrl-C). */
export async function stopAllDaemons (): Promise<void> {
  await Promise.allSettled([...live].map(async (stop) => await stop()))
}

export async function startDaemon (spec: DaemonSpec): Promise<RunningDaemon> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `vulnscan-${path.basename(spec.binary)}-`))
  const host = loopbackAddress()
  const port = await freePort(host)
  const ctx: DaemonContext = { host, port, dir }
  for (const [name, content] of Object.entries(spec.files?.(ctx) ?? {})) writeFileSync(path.join(dir, name), content)
  if (spec.interfaceAddress) {
    const r = spawnSync('ip', ['addr', 'add', `${host}/32`, 'dev', 'lo'], { encoding: 'utf8' })
    if (r.status !== 0) {
      await rm(dir, { recursive: true, force: true })
      throw new Error(`could not add ${host} to lo: ${r.stderr ?? r.error?.message}`)
    }
  }
  const dropAddress = (): void => {
    if (spec.interfaceAddress) spawnSync('ip', ['addr', 'del', `${host}/32`, 'dev', 'lo'])
  }
  for (const [cmd, args] of spec.prepare?.(ctx) ?? []) {
    const r = spawnSync(cmd, args, { cwd: dir, encoding: 'utf8' })
    if (r.status !== 0) {
      dropAddress()
      throw new Error(`${cmd} failed: ${r.stderr ?? r.error?.message}`)
    }
  }
  const env = { ...process.env, ...(spec.env?.(ctx) ?? {}) }
  const child: ChildProcess = spawn(spec.binary, spec.args(ctx), { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  const keep = (d: Buffer): void => { log = (log + d.toString()).slice(-4000) }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const stop = async (): Promise<void> => {
    live.delete(stop)
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), spec.stopMs ?? 5000)
      await exited
      clearTimeout(timer)
    }
    dropAddress()
    spec.cleanup?.(ctx)
    await rm(dir, { recursive: true, force: true })
  }
  live.add(stop)
  const deadline = Date.now() + (spec.startMs ?? 10_000)
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${spec.binary} exited with code ${child.exitCode}`)
      if (await (spec.ready ?? (async (c) => await accepts(c.host, c.port)))(ctx)) break
      if (Date.now() > deadline) throw new Error(`${spec.binary} did not answer on ${host}:${port}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  } catch (err) {
    await stop()
    throw new Error(`${(err as Error).message}; it said: ${log.trim().slice(-1000)}`)
  }
  return { ...ctx, packageVersion: packageVersion(spec.pkg), log: () => log, stop }
}

/**
 * A daemon that inetd would run, one process per connection with the socket as its stdin and
 * stdout (telnetd): a small listener on a loopback address of its own stands in for inetd.
 */
export async function startInetd (spec: { pkg: string, binary: string, args?: string[], port?: number }): Promise<RunningDaemon> {
  const host = loopbackAddress()
  const children = new Set<ChildProcess>()
  let log = ''
  const server = net.createServer((sock) => {
    sock.on('error', () => {})
    const child = spawn(spec.binary, spec.args ?? [], { stdio: [sock, sock, 'pipe'] })
    children.add(child)
    child.stderr?.on('data', (d: Buffer) => { log = (log + d.toString()).slice(-4000) })
    child.on('error', (err) => { log = (log + err.message).slice(-4000); sock.destroy() })
    child.on('exit', () => { children.delete(child); sock.destroy() })
    sock.on('close', () => child.kill())
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(spec.port ?? 0, host, resolve)
  })
  const port = (server.address() as net.AddressInfo).port
  const stop = async (): Promise<void> => {
    live.delete(stop)
    for (const c of children) c.kill()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  live.add(stop)
  return { host, port, dir: '', packageVersion: packageVersion(spec.pkg), log: () => log, stop }
}
