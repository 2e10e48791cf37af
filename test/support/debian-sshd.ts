// Debian's own sshd (package openssh-server) started on a random loopback address for a test,
// with a throwaway host key and no PID file, so its real identification string can be probed.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { freePort, loopbackAddress } from './loopback'

export const SSHD = '/usr/sbin/sshd'

export interface DebianSshd {
  host: string
  port: number
  /** The installed package version, as dpkg reports it. */
  packageVersion: string
  stop: () => Promise<void>
}

/**
 * Why the sshd tests cannot run here, or false when they can. Under CI a missing sshd is a
 * failure of the machine setup, not a reason to skip.
 */
export function sshdUnavailable (): string | false {
  if (existsSync(SSHD)) return false
  const reason = `${SSHD} is absent: install Debian's openssh-server to run this test`
  if (process.env.CI === 'true') throw new Error(`${reason} (CI must have it)`)
  return reason
}

async function waitForBanner (host: string, port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`sshd exited with code ${child.exitCode}`)
    const ok = await new Promise<boolean>((resolve) => {
      const sock = net.connect({ host, port })
      sock.setTimeout(500)
      sock.once('data', (d) => { sock.destroy(); resolve(d.toString('latin1').startsWith('SSH-')) })
      sock.once('error', () => resolve(false))
      sock.once('timeout', () => { sock.destroy(); resolve(false) })
    })
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`sshd did not answer on ${host}:${port} within ${timeoutMs} ms`)
}

export async function startDebianSshd (): Promise<DebianSshd> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'debian-sshd-'))
  const key = path.join(dir, 'host_ed25519_key')
  const keygen = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key])
  if (keygen.status !== 0) throw new Error(`ssh-keygen failed: ${keygen.stderr?.toString() ?? keygen.error?.message}`)
  // Debian's sshd refuses to start without its privilege separation directory, which the
  // system service's unit normally creates.
  if (process.getuid?.() === 0 && !existsSync('/run/sshd')) mkdirSync('/run/sshd', { mode: 0o755 })
  const host = loopbackAddress()
  const port = await freePort(host)
  const config = path.join(dir, 'sshd_config')
  writeFileSync(config, [
    `ListenAddress ${host}:${port}`,
    `HostKey ${key}`,
    'PidFile none',
    'UsePAM no',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication no',
    'AuthorizedKeysFile none',
    'PermitRootLogin no',
    'StrictModes no',
    ''
  ].join('\n'))
  const child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] })
  let log = ''
  child.stderr?.on('data', (d: Buffer) => { log = (log + d.toString()).slice(-4000) })
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
    await rm(dir, { recursive: true, force: true })
  }
  try {
    await waitForBanner(host, port, child, 10_000)
  } catch (err) {
    await stop()
    throw new Error(`${(err as Error).message}; sshd said: ${log.trim()}`)
  }
  const q = spawnSync('dpkg-query', ['-W', '-f=${Version}', 'openssh-server'], { encoding: 'utf8' })
  return { host, port, packageVersion: q.status === 0 ? q.stdout.trim() : '', stop }
}
