// The worker's side of credentialed scans: the stored credentials a scan names, opened only for the login, and a
// bound on the SSH sessions this worker process holds at once.
import type { CredentialVault, OpenedCredential } from '../credentials/vault'
import type { Store } from '../store/types'
import { collectHost, type CollectOutcome } from './collect'
import type { SshLimits } from './ssh'

export interface CredentialedScanning {
  collect(address: string, credentialIds: readonly string[], signal?: AbortSignal): Promise<CollectOutcome>
}

export interface CredentialedOptions {
  vault: Pick<CredentialVault, 'get' | 'opened'>
  store: Pick<Store, 'recordHostKey' | 'getHostKey'>
  limits: SshLimits
  /** SSH sessions this process holds at once, over every scan it runs. */
  sessions: number
}

/** A counting semaphore: at most `n` holders at once, served in arrival order. */
export function semaphore (n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0
  const waiting: Array<() => void> = []
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= n) await new Promise<void>((resolve) => waiting.push(resolve))
    active++
    try {
      return await fn()
    } finally {
      active--
      waiting.shift()?.()
    }
  }
}

/** The SSH limits the configuration sets. */
export function sshLimitsOf (config: { SSH_CONNECT_TIMEOUT_MS: number, SSH_COMMAND_TIMEOUT_MS: number, SSH_OUTPUT_MAX: number }): SshLimits {
  return { connectTimeoutMs: config.SSH_CONNECT_TIMEOUT_MS, commandTimeoutMs: config.SSH_COMMAND_TIMEOUT_MS, outputMaxBytes: config.SSH_OUTPUT_MAX }
}

export function credentialedScanning (opts: CredentialedOptions): CredentialedScanning {
  const limit = semaphore(Math.max(1, opts.sessions))
  return {
    async collect (address, credentialIds, signal) {
      const opened: OpenedCredential[] = []
      const problems: string[] = []
      for (const id of credentialIds) {
        try {
          const c = await opts.vault.get(id)
          if (c === null) problems.push(`credential ${id} no longer exists`)
          else opened.push(opts.vault.opened(c))
        } catch (err) {
          problems.push(`credential ${id} cannot be opened: ${(err as Error).message}`)
        }
      }
      if (opened.length === 0) return { ok: false, reason: 'credential', message: problems.join('; ') || 'the scan names no credential', credentialId: null }
      return await collectHost(address, opened, { store: opts.store, limits: opts.limits, limit, signal })
    }
  }
}
