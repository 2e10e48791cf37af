// Debian's own sshd (openssh-server) for credentialed-scan tests: started on a random 127.x address with a
// configuration, host key and authorized_keys of the test's own, logins allowed for one throwaway user created
// for the test (key and password), no service started, stopped by PID, the user removed afterwards. A
// ForceCommand wrapper can make the package list hang, overflow or be missing, for the fault tests.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { freePort, loopbackAddress } from './loopback'

export const SSHD = '/usr/sbin/sshd'

/** Why these tests cannot run here, or false. Under CI a missing sshd or a non-root run is a failure, not a skip. */
export function sshLabUnavailable (): string | false {
  const reason = !existsSync(SSHD)
    ? `${SSHD} is absent: install Debian's openssh-server to run this test`
    : process.getuid?.() !== 0 ? 'creating the test\'s login user needs root' : null
  if (reason === null) return false
  if (process.env.CI === 'true') throw new Error(`${reason} (CI must have it)`)
  return reason
}

export interface KeyPair { privateKey: string, publicKey: string }

/** A fresh ed25519 key pair (ssh-keygen), optionally with a passphrase. */
export function keyPair (passphrase = ''): KeyPair {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vulnscan-key-'))
  try {
    const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', 'vulnscan-test', '-f', path.join(dir, 'id')], { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`ssh-keygen failed: ${r.stderr}`)
    return { privateKey: readFileSync(path.join(dir, 'id'), 'utf8'), publicKey: readFileSync(path.join(dir, 'id.pub'), 'utf8').trim() }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The fingerprint of a public key line, as `ssh-keygen -lf` prints it. */
export function fingerprintOfLine (line: string): string {
  const r = spawnSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', '-'], { input: line, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`ssh-keygen -l failed: ${r.stderr}`)
  return r.stdout.split(' ')[1]
}

export interface ScanUser { name: string, password: string, remove: () => void }

/** A login user with no privileges, no home directory and a random password; remove() deletes it. */
export function createScanUser (): ScanUser {
  const name = `vsc${randomBytes(4).toString('hex')}`
  const password = randomBytes(12).toString('base64url')
  const add = spawnSync('useradd', ['--no-create-home', '--shell', '/bin/sh', '--home-dir', '/nonexistent', name], { encoding: 'utf8' })
  if (add.status !== 0) throw new Error(`useradd failed: ${add.stderr}`)
  const pw = spawnSync('chpasswd', [], { input: `${name}:${password}\n`, encoding: 'utf8' })
  if (pw.status !== 0) {
    spawnSync('userdel', [name])
    throw new Error(`chpasswd failed: ${pw.stderr}`)
  }
  return { name, password, remove: () => { spawnSync('userdel', ['--force', name]) } }
}

export type FaultMode = 'none' | 'hang' | 'huge' | 'missing'

export interface LabSshd {
  host: string
  port: number
  dir: string
  /** The host key's public line and fingerprint. */
  hostKey: { line: string, fingerprint: string }
  /** What the package-list command does from now on (a ForceCommand wrapper reads it at each command). */
  setFault: (mode: FaultMode) => void
  stop: () => Promise<void>
  log: () => string
}

export interface LabSshdOptions {
  user: string
  authorizedKeys: string[]
  /** Allow password logins (default false: key only). */
  password?: boolean
  /** Listen here instead of a fresh random address and port (a restart with another host key). */
  host?: string
  port?: number
  /**
   * Identify as `SSH-2.0-OpenSSH_<version> Debian` (DebianBanner no, VersionAddendum Debian): the banner names the
   * distribution but not the package revision, as Apache's `(Debian)` does.
   */
  familyOnlyBanner?: boolean
}

async function greets (host: string, port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const sock = net.connect({ host, port })
    sock.setTimeout(1000)
    sock.once('data', (d) => { sock.destroy(); resolve(d.toString('latin1').startsWith('SSH-')) })
    sock.once('error', () => resolve(false))
    sock.once('timeout', () => { sock.destroy(); resolve(false) })
  })
}

export async function startLabSshd (opts: LabSshdOptions): Promise<LabSshd> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vulnscan-sshd-'))
  chmodSync(dir, 0o755)
  const host = opts.host ?? loopbackAddress()
  const port = opts.port ?? await freePort(host)
  const keygen = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'host_ed25519_key')], { encoding: 'utf8' })
  if (keygen.status !== 0) throw new Error(`ssh-keygen failed: ${keygen.stderr}`)
  // Debian's sshd refuses to start without its privilege separation directory, which the system service creates.
  if (!existsSync('/run/sshd')) spawnSync('mkdir', ['-m', '755', '-p', '/run/sshd'])
  writeFileSync(path.join(dir, 'authorized_keys'), opts.authorizedKeys.join('\n') + '\n', { mode: 0o644 })
  writeFileSync(path.join(dir, 'fault'), 'none\n', { mode: 0o644 })
  const wrapper = path.join(dir, 'wrapper.sh')
  writeFileSync(wrapper, [
    '#!/bin/sh',
    `mode=$(cat '${path.join(dir, 'fault')}' 2>/dev/null)`,
    'case "$SSH_ORIGINAL_COMMAND" in',
    '  dpkg-query*)',
    '    case "$mode" in',
    // Bounded, so that a test that ends early leaves no sleeper for long.
    '      hang) exec sleep 60 ;;',
    '      huge) head -c 52428800 /dev/zero | tr "\\000" x; exit 0 ;;',
    '      missing) echo "sh: 1: dpkg-query: not found" >&2; exit 127 ;;',
    '    esac ;;',
    'esac',
    'exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"',
    ''
  ].join('\n'), { mode: 0o755 })
  writeFileSync(path.join(dir, 'sshd_config'), [
    `ListenAddress ${host}:${port}`,
    `HostKey ${path.join(dir, 'host_ed25519_key')}`,
    'PidFile none',
    'UsePAM no',
    `PasswordAuthentication ${opts.password === true ? 'yes' : 'no'}`,
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication yes',
    `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
    'StrictModes no',
    `AllowUsers ${opts.user}`,
    'PermitRootLogin no',
    'X11Forwarding no',
    'AllowTcpForwarding no',
    'PermitTTY no',
    // The bench's 50 logins at once, and the fault tests' parallel sessions.
    'MaxStartups 200',
    'MaxSessions 50',
    'LogLevel ERROR',
    ...(opts.familyOnlyBanner === true ? ['DebianBanner no', 'VersionAddendum Debian'] : []),
    `ForceCommand ${wrapper}`,
    ''
  ].join('\n'))
  const child: ChildProcess = spawn(SSHD, ['-D', '-e', '-f', path.join(dir, 'sshd_config')], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  const keep = (d: Buffer): void => { log = (log + d.toString()).slice(-4000) }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
    }
    rmSync(dir, { recursive: true, force: true })
  }
  const deadline = Date.now() + 15_000
  for (;;) {
    if (child.exitCode !== null) {
      await stop()
      throw new Error(`sshd exited with code ${child.exitCode}: ${log}`)
    }
    if (await greets(host, port)) break
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`sshd did not answer on ${host}:${port}: ${log}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const line = readFileSync(path.join(dir, 'host_ed25519_key.pub'), 'utf8').trim()
  return {
    host,
    port,
    dir,
    hostKey: { line, fingerprint: fingerprintOfLine(line) },
    setFault: (mode) => writeFileSync(path.join(dir, 'fault'), `${mode}\n`),
    stop,
    log: () => log
  }
}
