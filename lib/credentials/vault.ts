// Stored SSH logins: created and changed by admins, used by scans. The secret (private key or password, and a
// key's passphrase) is sealed with lib/secrets.ts under CREDENTIALS_KEY the moment it arrives, bound to its
// record, and opened only in the worker, for the login itself. No view of a credential carries it.
import { createHash, randomUUID } from 'node:crypto'
import { utils } from 'ssh2'
import { parseKeyScope } from '../access'
import { parseAddress } from '../addresses'
import { parseScope, scopeError } from '../scanner/targets'
import type { Target } from '../scanner/types'
import { SecretBox, SecretKeyError } from '../secrets'
import type { CredentialPatch, CredentialRecord, ListOptions, Page, PinnedHostKey, Store } from '../store/types'

/** A problem with what a client sent about a credential (a 400, a 404 or a 409 in the routes). */
export class CredentialInputError extends Error {
  constructor (message: string, readonly kind: 'invalid' | 'unknown' | 'taken' | 'scope' = 'invalid') {
    super(message)
    this.name = 'CredentialInputError'
  }
}

export interface CredentialInput {
  name: string
  type: 'ssh'
  username: string
  privateKey?: string
  password?: string
  passphrase?: string
  port?: number
  hostKeys?: PinnedHostKey[]
  scope?: string[]
  description?: string
}

export interface CredentialChange {
  username?: string
  privateKey?: string
  password?: string
  passphrase?: string
  port?: number
  hostKeys?: PinnedHostKey[]
  scope?: string[]
  description?: string
}

/** What leaves the server about a credential: never the secret, sealed or not. */
export interface CredentialView {
  id: string
  name: string
  type: 'ssh'
  username: string
  auth: CredentialRecord['auth']
  port: number
  hostKeys: PinnedHostKey[]
  scope: string[]
  description: string
  createdAt: string
  updatedAt: string
  secretUpdatedAt: string
}

/** The login a worker makes with a credential: the secret in the clear, for as long as the login lasts. */
export interface OpenedCredential {
  id: string
  name: string
  username: string
  port: number
  privateKey?: string
  password?: string
  passphrase?: string
  hostKeys: PinnedHostKey[]
  scope: string[]
}

interface Sealed { secret: string, passphrase?: string }

const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}=?$/

/** `SHA256:<base64, unpadded>` of a host key's wire form, as OpenSSH prints it. */
export function fingerprintOf (key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`
}

/**
 * A pinned host key as given: a fingerprint, or an OpenSSH public key line (`ssh-ed25519 AAAA… comment`, what
 * /etc/ssh/ssh_host_*_key.pub holds) turned into its fingerprint.
 */
export function pinnedFingerprint (given: string): string {
  const text = given.trim()
  if (FINGERPRINT.test(text)) return text.replace(/=$/, '')
  const parsed = safeParseKey(text)
  const key = Array.isArray(parsed) ? parsed[0] : parsed
  if (key instanceof Error || key === undefined || key.isPrivateKey()) {
    throw new CredentialInputError('hostKeys[].fingerprint must be SHA256:<base64> as `ssh-keygen -lf` prints it, or an OpenSSH public key line')
  }
  return fingerprintOf(key.getPublicSSH())
}

/** ssh2's key parser, whose few throws (rather than returned errors) on odd input become returned errors too. */
function safeParseKey (text: string, passphrase?: string): ReturnType<typeof utils.parseKey> {
  try {
    return utils.parseKey(text, passphrase)
  } catch (err) {
    return new Error(redact((err as Error).message, [text, passphrase]))
  }
}

/** Replace every occurrence of the secrets in a message: what an SSH library says may quote what it was given. */
export function redact (message: string, secrets: Array<string | undefined>): string {
  let out = message
  for (const s of secrets) {
    if (s === undefined || s.length < 4) continue
    out = out.split(s).join('[redacted]')
    // A key's lines one by one, in case a message quotes a part of it.
    for (const line of s.split(/\r?\n/)) if (line.length >= 16) out = out.split(line).join('[redacted]')
  }
  return out
}

function checkPrivateKey (privateKey: string, passphrase: string | undefined): void {
  const parsed = safeParseKey(privateKey, passphrase)
  const key = Array.isArray(parsed) ? parsed[0] : parsed
  if (key instanceof Error || key === undefined) {
    const why = key instanceof Error ? redact(key.message, [privateKey, passphrase]) : 'no key in it'
    throw new CredentialInputError(`privateKey cannot be read${passphrase === undefined ? '' : ' with this passphrase'}: ${why}`)
  }
  if (!key.isPrivateKey()) throw new CredentialInputError('privateKey holds a public key: give the private key (the public one goes in the host\'s authorized_keys)')
}

function checkHostKeys (hostKeys: PinnedHostKey[]): PinnedHostKey[] {
  return hostKeys.map((k, i) => {
    let host: string
    try {
      host = parseAddress(k.host, `hostKeys[${i}].host`)
    } catch (err) {
      throw new CredentialInputError((err as Error).message)
    }
    return { host, fingerprint: pinnedFingerprint(k.fingerprint) }
  })
}

function checkScope (scope: string[]): string[] {
  try {
    return parseKeyScope(scope)
  } catch (err) {
    throw new CredentialInputError(`scope: ${(err as Error).message}`)
  }
}

export function credentialView (c: CredentialRecord): CredentialView {
  return {
    id: c.id,
    name: c.name,
    type: c.type,
    username: c.username,
    auth: c.auth,
    port: c.port,
    hostKeys: c.hostKeys,
    scope: c.scope,
    description: c.description,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    secretUpdatedAt: c.secretUpdatedAt
  }
}

const context = (id: string): string => `credential:${id}`

export class CredentialVault {
  constructor (private readonly store: Store, private readonly box: SecretBox) {}

  /**
   * The vault over `store`, once the key is known to open what the store already keeps: the first start writes the
   * check value; a start with another key throws SecretKeyError before any secret is needed.
   */
  static async open (store: Store, box: SecretBox): Promise<CredentialVault> {
    const stored = await store.secretsCanary(box.canary())
    box.checkCanary(stored)
    return new CredentialVault(store, box)
  }

  private seal (id: string, secret: string, passphrase: string | undefined): string {
    const value: Sealed = passphrase === undefined ? { secret } : { secret, passphrase }
    return this.box.seal(JSON.stringify(value), context(id))
  }

  async create (input: CredentialInput, by: string, now = new Date()): Promise<CredentialRecord> {
    const auth = secretOf(input)
    if (auth === null || auth === undefined) throw new CredentialInputError('give exactly one of privateKey and password')
    if (auth.kind === 'privateKey') checkPrivateKey(auth.secret, input.passphrase)
    else if (input.passphrase !== undefined) throw new CredentialInputError('passphrase goes with a privateKey, not with a password')
    const id = randomUUID()
    const at = now.toISOString()
    const record: CredentialRecord = {
      id,
      name: input.name,
      type: 'ssh',
      username: input.username,
      auth: auth.kind,
      sealed: this.seal(id, auth.secret, input.passphrase),
      port: input.port ?? 22,
      hostKeys: checkHostKeys(input.hostKeys ?? []),
      scope: checkScope(input.scope ?? []),
      description: input.description ?? '',
      createdAt: at,
      updatedAt: at,
      secretUpdatedAt: at,
      createdBy: by
    }
    if (!(await this.store.createCredential(record))) throw new CredentialInputError(`A credential named '${input.name}' exists already`, 'taken')
    return record
  }

  async update (id: string, change: CredentialChange, now = new Date()): Promise<CredentialRecord | null> {
    const current = await this.store.getCredential(id)
    if (current === null) return null
    const at = now.toISOString()
    const patch: CredentialPatch = { updatedAt: at }
    const auth = secretOf(change)
    if (auth === undefined) throw new CredentialInputError('give at most one of privateKey and password')
    if (auth !== null) {
      if (auth.kind === 'privateKey') checkPrivateKey(auth.secret, change.passphrase)
      else if (change.passphrase !== undefined) throw new CredentialInputError('passphrase goes with a privateKey, not with a password')
      patch.auth = auth.kind
      patch.sealed = this.seal(id, auth.secret, change.passphrase)
      patch.secretUpdatedAt = at
    } else if (change.passphrase !== undefined) {
      throw new CredentialInputError('a new passphrase needs the privateKey it opens')
    }
    if (change.username !== undefined) patch.username = change.username
    if (change.port !== undefined) patch.port = change.port
    if (change.hostKeys !== undefined) patch.hostKeys = checkHostKeys(change.hostKeys)
    if (change.scope !== undefined) patch.scope = checkScope(change.scope)
    if (change.description !== undefined) patch.description = change.description
    return await this.store.updateCredential(id, patch)
  }

  async get (id: string): Promise<CredentialRecord | null> {
    return await this.store.getCredential(id)
  }

  async list (opts: ListOptions): Promise<Page<CredentialRecord>> {
    return await this.store.listCredentials(opts)
  }

  async delete (id: string): Promise<boolean> {
    return await this.store.deleteCredential(id)
  }

  /**
   * The ids of the credentials a scan names, by id or by name, each once in the order given. Throws
   * CredentialInputError naming the first one that names no credential.
   */
  async resolve (refs: readonly string[]): Promise<CredentialRecord[]> {
    const out = new Map<string, CredentialRecord>()
    for (const [i, ref] of refs.entries()) {
      const c = await this.store.getCredential(ref) ?? await this.store.getCredentialByName(ref)
      if (c === null) throw new CredentialInputError(`options.credentials[${i}]: no credential has the id or name '${ref}'`, 'unknown')
      out.set(c.id, c)
    }
    return [...out.values()]
  }

  /**
   * The credential ids a scan or schedule stores for the credentials it names (by id or name), after the rule for
   * using them: each exists, and the scan's literal targets lie inside each one's scope. Throws CredentialInputError
   * (`unknown` or `scope`).
   */
  async forScan (refs: readonly string[] | undefined, targets: readonly Target[]): Promise<string[] | undefined> {
    if (refs === undefined || refs.length === 0) return undefined
    const found = await this.resolve(refs)
    for (const c of found) {
      const problem = credentialScopeProblem(c, targets)
      if (problem !== null) throw new CredentialInputError(problem, 'scope')
    }
    return found.map((c) => c.id)
  }

  /** The secret in the clear, for a login; SecretOpenError (naming no part of it) when it does not open. */
  opened (c: CredentialRecord): OpenedCredential {
    const sealed = JSON.parse(this.box.open(c.sealed, context(c.id))) as Sealed
    return {
      id: c.id,
      name: c.name,
      username: c.username,
      port: c.port,
      ...(c.auth === 'privateKey' ? { privateKey: sealed.secret } : { password: sealed.secret }),
      ...(sealed.passphrase !== undefined ? { passphrase: sealed.passphrase } : {}),
      hostKeys: c.hostKeys,
      scope: c.scope
    }
  }

  /**
   * Seal every secret again under the current key (after CREDENTIALS_KEY changed and the old one went to
   * CREDENTIALS_KEY_PREVIOUS), and the check value with it. Returns how many were sealed again.
   */
  async rotateKey (): Promise<{ resealed: number, current: number }> {
    let resealed = 0
    let current = 0
    for (let offset = 0; ; offset += 100) {
      const page = await this.store.listCredentials({ offset, limit: 100 })
      for (const c of page.items) {
        if (this.box.isCurrent(c.sealed)) {
          current++
          continue
        }
        const plain = this.box.open(c.sealed, context(c.id))
        await this.store.updateCredential(c.id, { sealed: this.box.seal(plain, context(c.id)), updatedAt: c.updatedAt })
        resealed++
      }
      if (page.items.length < 100) break
    }
    await this.store.secretsCanary(this.box.canary(), true)
    return { resealed, current }
  }
}

/** The secret an input gives: null when none, undefined when both. */
function secretOf (input: { privateKey?: string, password?: string }): { kind: CredentialRecord['auth'], secret: string } | null | undefined {
  if (input.privateKey !== undefined && input.password !== undefined) return undefined
  if (input.privateKey !== undefined) return { kind: 'privateKey', secret: input.privateKey }
  if (input.password !== undefined) return { kind: 'password', secret: input.password }
  return null
}

/**
 * The rule for using a credential in a scan (docs/credentialed-scans.md): the posting key may post scans (operator
 * or admin), and every literal target lies inside the credential's scope when it has one. Hosts that only resolve
 * later (names, tags) are held to the scope by the worker, which does not log in outside it. Returns the problem
 * as a sentence, or null.
 */
export function credentialScopeProblem (c: Pick<CredentialRecord, 'name' | 'scope'>, targets: readonly Target[]): string | null {
  if (c.scope.length === 0) return null
  const scope = parseScope([...c.scope], [])
  for (const [i, t] of targets.entries()) {
    if (t.type === 'dns_name') continue
    const refusal = scopeError(t, scope)
    if (refusal !== null) return `targets[${i}].value: ${refusal.replace(/the allowed scope/, `the scope of credential '${c.name}'`)}`
  }
  return null
}

/** Whether the credential may be used on one address (its scope, when it has one). */
export function credentialCovers (c: Pick<OpenedCredential, 'scope'>, address: string): boolean {
  if (c.scope.length === 0) return true
  return parseScope([...c.scope], []).refusal(address) === null
}

export { SecretKeyError }
