// Template signatures. A signed template ends with a comment line `# digest: <hex>[:<key id>]`: the hex is an ASN.1
// DER ECDSA signature, made with SHA-256 over the file's text without that line (and without the trailing newline
// before it). It is verified with the public key of TEMPLATES_SIGNING_CERT (a PEM certificate or public key).

import { createPrivateKey, createPublicKey, createSign, createVerify, X509Certificate, type KeyObject } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { SignatureState } from './types'

const DIGEST_LINE = /\r?\n?# digest: ([0-9a-fA-F]+)(?::[0-9a-zA-Z]*)?[ \t]*\r?\n?$/

/** The public key in a PEM file: a certificate's, or a public (or private) key's own. */
export function signingKey (file: string): KeyObject {
  const pem = readFileSync(file, 'utf8')
  if (pem.includes('BEGIN CERTIFICATE')) return new X509Certificate(pem).publicKey
  if (pem.includes('PRIVATE KEY')) return createPublicKey(createPrivateKey(pem))
  return createPublicKey(pem)
}

/** The text that is signed, and the signature line's hex (null: unsigned). */
export function splitDigest (text: string): { body: string, signature: string | null } {
  const m = DIGEST_LINE.exec(text)
  if (m === null) return { body: text, signature: null }
  return { body: text.slice(0, m.index), signature: m[1] }
}

/** signed, unsigned, or invalid (a digest that does not verify) under the key; unsigned when there is no key. */
export function signatureOf (text: string, key: KeyObject | null): SignatureState {
  const { body, signature } = splitDigest(text)
  if (signature === null || key === null) return 'unsigned'
  try {
    const v = createVerify('sha256')
    v.update(body)
    return v.verify(key, Buffer.from(signature, 'hex')) ? 'signed' : 'invalid'
  } catch {
    return 'invalid'
  }
}

/** The text with a digest line by the private key (any earlier digest line replaced): for tests and authors. */
export function signTemplate (text: string, privateKeyPem: string): string {
  const { body } = splitDigest(text)
  const s = createSign('sha256')
  s.update(body)
  return `${body}\n# digest: ${s.sign(privateKeyPem).toString('hex')}\n`
}
