// A credentialed collection on one host: log in with the scan's credentials in turn (the next one only after the
// host refused the previous), check the host key (pinned, else trust on first use), then read the OS, the
// package list, the running kernel and whether a reboot is pending, each command on its own channel. Nothing
// run here changes the host or needs privileges. The outcome is an inventory, or a failure with its reason.
import { credentialCovers, type OpenedCredential } from '../credentials/vault'
import type { KnownHostKey, Store } from '../store/types'
import {
  DPKG_FORMAT, packageFormatOf, parseApk, parseDpkg, parseOsRelease, parseRpm, RPM_FORMAT, type Inventory
} from './inventory'
import { LoginFailure, sshLogin, type HostKeyCheck, type LoginFailureReason, type SshLimits, type SshSession } from './ssh'

export type CollectOutcome =
  | { ok: true, inventory: Inventory, credentialId: string }
  | { ok: false, reason: LoginFailureReason, message: string, credentialId: string | null }

export interface CollectDeps {
  store: Pick<Store, 'recordHostKey' | 'getHostKey'>
  limits: SshLimits
  /** Runs `fn` within the worker's bound on SSH sessions at once. */
  limit: <T>(fn: () => Promise<T>) => Promise<T>
  signal?: AbortSignal
  now?: () => Date
}

/** The host-key rule: a pinned key must match; otherwise the first login's key is recorded and must not change. */
export function hostKeyCheck (credential: Pick<OpenedCredential, 'id' | 'hostKeys'>, host: string, deps: Pick<CollectDeps, 'store' | 'now'>): HostKeyCheck {
  return async ({ fingerprint, algorithm }) => {
    const pinned = credential.hostKeys.filter((k) => k.host === host)
    if (pinned.length > 0) {
      return pinned.some((k) => k.fingerprint === fingerprint)
        ? null
        : `the host key changed: ${host} showed ${algorithm} ${fingerprint}, not the key pinned in the credential (${pinned.map((k) => k.fingerprint).join(', ')}). Not logged in`
    }
    const seen: KnownHostKey = { fingerprint, algorithm, firstSeen: (deps.now?.() ?? new Date()).toISOString() }
    const known = await deps.store.recordHostKey(credential.id, host, seen)
    if (known.fingerprint === fingerprint) return null
    return `the host key changed: ${host} showed ${algorithm} ${fingerprint}, but the first login (${known.firstSeen}) recorded ${known.algorithm} ${known.fingerprint}. ` +
      'Not logged in; if the host was re-keyed, pin its new key in the credential\'s hostKeys'
  }
}

/** Reasons after which another credential is worth a try: the host refused this one, or could not use it. */
const NEXT_CREDENTIAL = new Set<LoginFailureReason>(['auth', 'credential'])

export async function collectHost (address: string, credentials: readonly OpenedCredential[], deps: CollectDeps): Promise<CollectOutcome> {
  const usable = credentials.filter((c) => credentialCovers(c, address))
  if (usable.length === 0) {
    return { ok: false, reason: 'scope', message: `${address} is outside the scope of every credential the scan names`, credentialId: null }
  }
  let last: CollectOutcome | null = null
  for (const c of usable) {
    const outcome = await deps.limit(async () => await collectWith(address, c, deps))
    if (outcome.ok) return outcome
    last = outcome
    if (!NEXT_CREDENTIAL.has(outcome.reason)) break
  }
  return last as CollectOutcome
}

async function collectWith (address: string, c: OpenedCredential, deps: CollectDeps): Promise<CollectOutcome> {
  let session: SshSession | null = null
  try {
    session = await sshLogin({ host: address, port: c.port, username: c.username, privateKey: c.privateKey, password: c.password, passphrase: c.passphrase },
      deps.limits, hostKeyCheck(c, address, deps), deps.signal)
    return { ok: true, inventory: await readInventory(session), credentialId: c.id }
  } catch (err) {
    if (err instanceof LoginFailure) return { ok: false, reason: err.reason, message: err.message, credentialId: c.id }
    return { ok: false, reason: 'error', message: (err as Error).message, credentialId: c.id }
  } finally {
    session?.close()
  }
}

/** One command that must succeed: exit 127 is a command the host does not have. */
async function must (session: SshSession, command: string, what: string): Promise<string> {
  const r = await session.run(command)
  if (r.code === 127) throw new LoginFailure('no-command', `${what}: the host has no \`${command.split(' ')[0]}\` (exit 127)`)
  if (r.code !== 0) throw new LoginFailure('error', `${what}: \`${command.split(' ')[0]}\` exited with ${r.code === null ? 'a signal' : r.code}`)
  return r.stdout
}

/** Read what the matcher needs, one command per channel (exec: no shell state carries over). */
export async function readInventory (session: SshSession): Promise<Inventory> {
  let osText = (await session.run('cat /etc/os-release')).stdout
  if (osText.trim() === '') osText = await must(session, 'cat /usr/lib/os-release', 'reading the OS')
  const os = parseOsRelease(osText)
  const format = packageFormatOf(os)
  if (format === null) throw new LoginFailure('unsupported', `the host runs ${os.prettyName ?? os.id}, whose package list vulnscan does not read (Debian, Ubuntu, the Red Hat family and Alpine)`)
  const kernelRun = await session.run('uname -r')
  const kernel = kernelRun.code === 0 && kernelRun.stdout.trim() !== '' ? kernelRun.stdout.trim() : null
  const inventory: Inventory = { os, format, packages: [], kernel, rebootRequired: false }
  if (format === 'dpkg') {
    inventory.packages = parseDpkg(await must(session, `dpkg-query -W -f='${DPKG_FORMAT}'`, 'reading the package list'))
    inventory.rebootRequired = (await session.run('test -e /var/run/reboot-required')).code === 0
  } else if (format === 'rpm') {
    inventory.packages = parseRpm(await must(session, `rpm -qa --qf '${RPM_FORMAT}'`, 'reading the package list'))
  } else {
    inventory.packages = parseApk(await must(session, 'apk info -v', 'reading the package list'))
    const release = await session.run('cat /etc/alpine-release')
    if (release.code === 0 && release.stdout.trim() !== '') inventory.alpineRelease = release.stdout.trim()
  }
  if (inventory.packages.length === 0) throw new LoginFailure('error', 'the package list is empty: the account may not read the package database')
  return inventory
}
