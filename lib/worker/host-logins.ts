// The credentialed half of a batch: a login starts as each host's port scan ends, beside its detection, and the
// host's write waits for it. A login that succeeds gives the host's package findings and what it has installed
// (which then decides its banner findings); one that fails says why, and settles nothing.
import type { HostResult } from '../domain/hosts'
import type { NewFinding } from '../domain/findings'
import type { NvdService } from '../nvd/service'
import type { CredentialedScanning } from '../credentialed/scanning'
import type { CollectOutcome } from '../credentialed/collect'
import { packageFamilyOf } from '../credentialed/families'
import { installedSources, matchPackages } from '../credentialed/packages'
import type { DistroFamily } from '../distro/package'
import type { InstalledContext } from './host-match'
import type { RunnerLogger, WorkerMatchDeps } from './types'

export type LoginResult = { findings: NewFinding[], installed?: InstalledContext } | { failed: { reason: string, message: string } }

export interface HostLogins {
  /** Starts the login of a host that is up, once. */
  login(host: HostResult): void
  /** The package findings of a host whose login succeeded and what it has installed, or why there are none; null when no login was tried. */
  result(host: HostResult): Promise<LoginResult | null>
}

export function hostLogins (deps: {
  scanId: string
  credentialIds: readonly string[]
  credentialed: CredentialedScanning | null | undefined
  matchDeps: WorkerMatchDeps
  nvd: NvdService
  log: RunnerLogger
  signal: AbortSignal
}): HostLogins {
  const { scanId, credentialIds, matchDeps, log } = deps
  const logins = new Map<string, Promise<CollectOutcome>>()
  return {
    login (host) {
      if (credentialIds.length === 0 || !host.up || logins.has(host.address)) return
      const outcome = deps.credentialed === undefined || deps.credentialed === null
        ? Promise.resolve<CollectOutcome>({ ok: false, reason: 'unsupported', message: 'this worker was started without credentialed scanning', credentialId: null })
        : deps.credentialed.collect(host.address, credentialIds, deps.signal)
          .catch((err: Error): CollectOutcome => ({ ok: false, reason: 'error', message: err.message, credentialId: null }))
      logins.set(host.address, outcome)
    },
    async result (host) {
      const pending = logins.get(host.address)
      if (pending === undefined) return null
      const outcome = await pending
      if (!outcome.ok) return { failed: { reason: outcome.reason, message: outcome.message } }
      const inv = outcome.inventory
      const family = packageFamilyOf(inv.os)
      if (family === null) return { failed: { reason: 'unsupported', message: `no distribution tracker decides ${inv.os.prettyName ?? inv.os.id} packages yet (${inv.packages.length} read)` } }
      if (matchDeps.sources === null) return { failed: { reason: 'unsupported', message: 'this worker has no distribution tracker data to decide packages by' } }
      const m = await matchPackages(host.address, inv, family, { sources: matchDeps.sources, cves: async (ids) => await deps.nvd.index.getMany(ids) })
      for (const note of m.notes) log.info({ scanId, address: host.address }, note)
      const release = family.release(inv.os, inv)
      const dpkg = family.family === 'debian' || family.family === 'ubuntu'
      const installed = dpkg && release !== null
        ? { family: family.family as DistroFamily, release, sources: new Map(installedSources(inv, family).sources.map((x) => [x.source, x])) }
        : undefined
      return { findings: m.findings, ...(installed !== undefined ? { installed } : {}) }
    }
  }
}
