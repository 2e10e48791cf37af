// API key material: generation, hashing and lifetimes. Keys are stored only as SHA-256 hashes.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import type { ApiKeyRecord } from './store/types'

const KEY_PREFIX = 'vsk_'

export function hashKey (key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest()
}

/** Constant-time comparison of two keys through their digests (equal length whatever the input). */
export function sameKey (candidateHash: Buffer, expectedHash: Buffer): boolean {
  return timingSafeEqual(candidateHash, expectedHash)
}

export function generateKey (): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url')
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/** `30d`, `12h`, `2w` → milliseconds; null for a malformed lifetime. */
export function parseLifetime (spec: string): number | null {
  const m = /^([1-9][0-9]{0,4})([smhdw])$/.exec(spec)
  return m ? Number(m[1]) * UNIT_MS[m[2]] : null
}

/** A new key and the record to store for it; the plain key is returned once and never stored. */
export function newApiKey (label: string, lifetimeMs: number | null, now = new Date()): { key: string, record: ApiKeyRecord } {
  const key = generateKey()
  return {
    key,
    record: {
      id: randomUUID(),
      label,
      prefix: key.slice(0, KEY_PREFIX.length + 6),
      hash: hashKey(key).toString('hex'),
      createdAt: now.toISOString(),
      lastUsedAt: null,
      expiresAt: lifetimeMs === null ? null : new Date(now.getTime() + lifetimeMs).toISOString()
    }
  }
}
