// One SSH login to one host, and the read-only commands run through it: each command in a channel of its own
// (exec, never an interactive shell, so no state passes from one command to the next), with a deadline and a
// bound on what it may print. Host keys are checked before any credential is sent. Every failure ends as a
// LoginFailure with a reason a person can act on; no error escapes carrying the secret.
import { Client as SshClient, type ConnectConfig } from 'ssh2'
import { fingerprintOf, redact } from '../credentials/vault'

/** Why a credentialed collection on a host did not succeed (the scan summary counts them per reason). */
export const LOGIN_FAILURE_REASONS = ['auth', 'host-key', 'timeout', 'no-command', 'connect', 'output-limit', 'unsupported', 'scope', 'credential', 'error'] as const
export type LoginFailureReason = typeof LOGIN_FAILURE_REASONS[number]

export class LoginFailure extends Error {
  constructor (readonly reason: LoginFailureReason, message: string) {
    super(message)
    this.name = 'LoginFailure'
  }
}

export interface SshTarget {
  host: string
  port: number
  username: string
  privateKey?: string
  password?: string
  passphrase?: string
}

export interface SshLimits {
  /** TCP connect, key exchange and authentication together. */
  connectTimeoutMs: number
  /** One command, from the channel's opening to its exit. */
  commandTimeoutMs: number
  /** Bytes one command may print on stdout before it is stopped. */
  outputMaxBytes: number
}

/** What the host-key check says of the key a host showed: accept it, or refuse the login with this reason. */
export type HostKeyCheck = (key: { fingerprint: string, algorithm: string }) => Promise<string | null>

export interface CommandResult {
  stdout: string
  code: number | null
}

/** The algorithm name at the head of a host key's wire form (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `rsa-sha2-512`'s key `ssh-rsa`). */
export function hostKeyAlgorithm (key: Buffer): string {
  if (key.length < 4) return 'unknown'
  const n = key.readUInt32BE(0)
  return n > 0 && n < 64 && key.length >= 4 + n ? key.subarray(4, 4 + n).toString('latin1') : 'unknown'
}

export interface SshSession {
  run(command: string): Promise<CommandResult>
  close(): void
}

/**
 * Log in. Resolves with a session once authenticated; rejects with a LoginFailure (auth, host-key, timeout,
 * connect, credential or error) otherwise. `signal` ends a login in progress.
 */
export async function sshLogin (target: SshTarget, limits: SshLimits, checkHostKey: HostKeyCheck, signal?: AbortSignal): Promise<SshSession> {
  const secrets = [target.privateKey, target.password, target.passphrase]
  const conn = new SshClient()
  let hostKeyRefusal: string | null = null
  let sawHostKey = false
  const config: ConnectConfig = {
    host: target.host,
    port: target.port,
    username: target.username,
    readyTimeout: limits.connectTimeoutMs,
    // Our own agent and keys are never offered: only the credential's.
    agent: undefined,
    tryKeyboard: false,
    keepaliveInterval: 0,
    hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => {
      sawHostKey = true
      checkHostKey({ fingerprint: fingerprintOf(key), algorithm: hostKeyAlgorithm(key) }).then((refusal) => {
        hostKeyRefusal = refusal
        verify(refusal === null)
      }, (err: Error) => {
        hostKeyRefusal = `the host key could not be checked: ${err.message}`
        verify(false)
      })
    },
    ...(target.privateKey !== undefined ? { privateKey: target.privateKey, ...(target.passphrase !== undefined ? { passphrase: target.passphrase } : {}) } : {}),
    ...(target.password !== undefined ? { password: target.password } : {})
  }
  return await new Promise<SshSession>((resolve, reject) => {
    let settled = false
    // The handshake's own timer starts after the TCP connect; this one covers the whole login, the connect included.
    const timer = setTimeout(() => fail(new LoginFailure('timeout', `no SSH login within ${limits.connectTimeoutMs} ms`)), limits.connectTimeoutMs + 1000)
    const onAbort = (): void => fail(new LoginFailure('timeout', 'the scan stopped while logging in'))
    signal?.addEventListener('abort', onAbort, { once: true })
    const done = (): void => {
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
    function fail (err: LoginFailure): void {
      if (settled) return
      done()
      conn.end()
      conn.destroy()
      reject(err)
    }
    conn.on('ready', () => {
      if (settled) return
      done()
      resolve(session(conn, limits, secrets))
    })
    conn.on('error', (err: Error & { level?: string, code?: string }) => {
      if (settled) return
      const message = redact(err.message, secrets)
      if (hostKeyRefusal !== null) return fail(new LoginFailure('host-key', hostKeyRefusal))
      if (err.level === 'client-authentication') return fail(new LoginFailure('auth', `the host refused the credential (${message})`))
      if (err.level === 'client-timeout') return fail(new LoginFailure('timeout', sawHostKey ? `no SSH login within ${limits.connectTimeoutMs} ms` : `no SSH handshake within ${limits.connectTimeoutMs} ms (${message})`))
      if (err.code === 'ECONNREFUSED' || err.code === 'EHOSTUNREACH' || err.code === 'ENETUNREACH' || err.code === 'ECONNRESET') return fail(new LoginFailure('connect', `cannot connect to ${target.host}:${target.port}: ${err.code}`))
      if (/private key|passphrase|Unsupported key format|Cannot parse/i.test(err.message)) return fail(new LoginFailure('credential', `the credential's key cannot be used: ${message}`))
      fail(new LoginFailure('error', message))
    })
    conn.on('close', () => fail(new LoginFailure(hostKeyRefusal !== null ? 'host-key' : 'error', hostKeyRefusal ?? 'the host closed the connection during the login')))
    try {
      conn.connect(config)
    } catch (err) {
      fail(new LoginFailure('credential', `the credential cannot be used: ${redact((err as Error).message, secrets)}`))
    }
  })
}

function session (conn: SshClient, limits: SshLimits, secrets: Array<string | undefined>): SshSession {
  let closed = false
  conn.on('error', () => {})
  return {
    close () {
      if (closed) return
      closed = true
      conn.end()
      // A host that never answers the close must not keep the socket.
      setTimeout(() => conn.destroy(), 1000).unref()
    },
    async run (command) {
      return await new Promise<CommandResult>((resolve, reject) => {
        let finished = false
        const chunks: Buffer[] = []
        let size = 0
        let code: number | null = null
        let stream: import('ssh2').ClientChannel | null = null
        const end = (err: LoginFailure | null): void => {
          if (finished) return
          finished = true
          clearTimeout(timer)
          if (err !== null) {
            stream?.close()
            // A channel that will not close (a hung command ignoring the signal) takes the connection with it.
            conn.end()
            conn.destroy()
            closed = true
            reject(err)
            return
          }
          resolve({ stdout: Buffer.concat(chunks).toString('utf8'), code })
        }
        const timer = setTimeout(() => end(new LoginFailure('timeout', `\`${command.split(' ')[0]}\` did not finish within ${limits.commandTimeoutMs} ms`)), limits.commandTimeoutMs)
        conn.exec(command, (err, ch) => {
          if (err !== undefined && err !== null) return end(new LoginFailure('error', `cannot run \`${command.split(' ')[0]}\`: ${redact(err.message, secrets)}`))
          stream = ch
          ch.on('data', (d: Buffer) => {
            size += d.length
            if (size > limits.outputMaxBytes) {
              end(new LoginFailure('output-limit', `\`${command.split(' ')[0]}\` printed more than ${limits.outputMaxBytes} bytes; stopped there`))
              return
            }
            chunks.push(d)
          })
          // stderr is read and dropped: a command's complaints must not stall its channel.
          ch.stderr.on('data', () => {})
          ch.on('exit', (c: number | null) => { code = c })
          ch.on('close', () => end(null))
          ch.on('error', (e: Error) => end(new LoginFailure('error', redact(e.message, secrets))))
        })
      })
    }
  }
}
