// Secrets at rest (SSH credentials, tracker tokens): sealed with AES-256-GCM under CREDENTIALS_KEY, bound to the
// record they belong to, and never kept or handed on in plain text beyond the moment they are used.
//
// A sealed value reads `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url). The key id (the first 8 bytes of the
// key's SHA-256, hex) says which key sealed it, so that a rotation can keep the previous keys for opening
// (CREDENTIALS_KEY_PREVIOUS) while everything is sealed again under the new one. The associated data (the
// record's kind and id) makes a sealed value useless anywhere but in the record it was sealed for.
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from 'node:crypto'

const VERSION = 'v1'
const IV_BYTES = 12
const TAG_BYTES = 16

/** A 32-byte key as 64 hex characters. */
export const SECRET_KEY_PATTERN = /^[0-9a-fA-F]{64}$/

export class SecretKeyError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'SecretKeyError'
  }
}

/** A sealed value could not be opened: tampered with, sealed for another record, or under a key not configured. */
export class SecretOpenError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'SecretOpenError'
  }
}

function keyId (key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16)
}

function parseKey (hex: string, name: string): Buffer {
  if (!SECRET_KEY_PATTERN.test(hex)) throw new SecretKeyError(`${name} must be 32 random bytes as 64 hex characters (openssl rand -hex 32)`)
  return Buffer.from(hex, 'hex')
}

export interface SecretBoxOptions {
  /** The key that seals: 64 hex characters. */
  key: string
  /** Earlier keys, still accepted for opening during a rotation. */
  previous?: readonly string[]
}

/** Seals and opens secrets under one current key (and opens under the earlier ones of a rotation). */
export class SecretBox {
  readonly keyId: string
  readonly #key: Buffer
  readonly #keys: Map<string, Buffer>

  constructor (opts: SecretBoxOptions) {
    this.#key = parseKey(opts.key, 'CREDENTIALS_KEY')
    this.keyId = keyId(this.#key)
    this.#keys = new Map([[this.keyId, this.#key]])
    for (const hex of opts.previous ?? []) {
      const k = parseKey(hex, 'CREDENTIALS_KEY_PREVIOUS')
      this.#keys.set(keyId(k), k)
    }
  }

  /** A box with a key of its own, for a process whose secrets live and die with it (the embedded default). */
  static ephemeral (): SecretBox {
    return new SecretBox({ key: randomBytes(32).toString('hex') })
  }

  /** Seal `plain` for the record `context` names (e.g. `credential:<id>`). */
  seal (plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES })
    cipher.setAAD(Buffer.from(context, 'utf8'))
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    return [VERSION, this.keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.')
  }

  /** Open a value sealed for `context`; throws SecretOpenError naming no part of the secret. */
  open (sealed: string, context: string): string {
    const parts = sealed.split('.')
    if (parts.length !== 5 || parts[0] !== VERSION) throw new SecretOpenError('not a sealed secret')
    const key = this.#keys.get(parts[1])
    if (key === undefined) throw new SecretOpenError(`sealed under key ${parts[1]}, which is neither CREDENTIALS_KEY nor one of CREDENTIALS_KEY_PREVIOUS`)
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[2], 'base64url'), { authTagLength: TAG_BYTES })
      decipher.setAAD(Buffer.from(context, 'utf8'))
      decipher.setAuthTag(Buffer.from(parts[3], 'base64url'))
      return Buffer.concat([decipher.update(Buffer.from(parts[4], 'base64url')), decipher.final()]).toString('utf8')
    } catch {
      throw new SecretOpenError('the sealed secret does not open: tampered with, or sealed for another record')
    }
  }

  /** Whether a sealed value was sealed under the current key (a rotation seals the others again). */
  isCurrent (sealed: string): boolean {
    return sealed.split('.')[1] === this.keyId
  }

  /**
   * A value to keep beside the secrets of a store: opening it at start-up tells a wrong key from a right one
   * before any secret is needed (checkCanary).
   */
  canary (): string {
    return this.seal(CANARY_TEXT, CANARY_CONTEXT)
  }

  /** Throws SecretKeyError when the stored canary was sealed under a key this box does not hold. */
  checkCanary (stored: string): void {
    let text: string
    try {
      text = this.open(stored, CANARY_CONTEXT)
    } catch (err) {
      throw new SecretKeyError(`CREDENTIALS_KEY does not open the secrets already stored (${(err as Error).message}); set the key they were sealed with, or list it in CREDENTIALS_KEY_PREVIOUS while rotating`)
    }
    if (!timingSafeEqual(Buffer.from(text), Buffer.from(CANARY_TEXT))) throw new SecretKeyError('CREDENTIALS_KEY check value is corrupt')
  }
}

const CANARY_TEXT = 'vulnscan-secrets-check'
const CANARY_CONTEXT = 'canary'

/**
 * The secret box a deployment uses. The scaled deployment (Redis and PostgreSQL, several processes) needs
 * CREDENTIALS_KEY: without it a start is refused, never a silent plain text. The embedded default may make a
 * key for its run, as it does the service key, since its secrets die with the process anyway.
 */
export function secretBoxFor (config: { CREDENTIALS_KEY?: string, CREDENTIALS_KEY_PREVIOUS: string }, scaled: boolean): { box: SecretBox, generated: boolean } {
  const previous = config.CREDENTIALS_KEY_PREVIOUS.split(',').map((s) => s.trim()).filter((s) => s !== '')
  if (config.CREDENTIALS_KEY === undefined || config.CREDENTIALS_KEY === '') {
    if (scaled) throw new SecretKeyError('CREDENTIALS_KEY is not set: the scaled deployment (REDIS_URL) keeps SSH credentials and tracker tokens encrypted with it. Generate one with `openssl rand -hex 32` and give every API and worker process the same value')
    return { box: SecretBox.ephemeral(), generated: true }
  }
  return { box: new SecretBox({ key: config.CREDENTIALS_KEY, previous }), generated: false }
}
