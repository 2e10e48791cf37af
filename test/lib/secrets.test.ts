import { test } from 'tap'
import { randomBytes } from 'node:crypto'
import { SecretBox, SecretKeyError, SecretOpenError, secretBoxFor } from '../../lib/secrets'

const key = (): string => randomBytes(32).toString('hex')

test('a sealed secret opens for its own record only, and never shows its plain text', async (t) => {
  const box = new SecretBox({ key: key() })
  const sealed = box.seal('hunter2-private-key', 'credential:abc')
  t.notMatch(sealed, /hunter2/, 'the plain text is not in the sealed value')
  t.equal(box.open(sealed, 'credential:abc'), 'hunter2-private-key')
  t.throws(() => box.open(sealed, 'credential:other'), SecretOpenError, 'sealed for another record: refused')
  t.not(box.seal('hunter2-private-key', 'credential:abc'), sealed, 'a fresh IV every time')
})

test('tampering and foreign keys are refused, with messages that hold no secret', async (t) => {
  const box = new SecretBox({ key: key() })
  const sealed = box.seal('s3cret', 'c:1')
  const parts = sealed.split('.')
  const flipped = Buffer.from(parts[4], 'base64url')
  flipped[0] ^= 1
  parts[4] = flipped.toString('base64url')
  t.throws(() => box.open(parts.join('.'), 'c:1'), SecretOpenError)
  t.throws(() => box.open('plain text', 'c:1'), SecretOpenError)
  const other = new SecretBox({ key: key() })
  const err = t.throws(() => other.open(sealed, 'c:1'), SecretOpenError) as Error
  t.notMatch(err.message, /s3cret/)
})

test('rotation: the previous key opens, the new key seals, isCurrent tells them apart', async (t) => {
  const oldKey = key()
  const old = new SecretBox({ key: oldKey })
  const sealed = old.seal('token', 'c:1')
  const rotated = new SecretBox({ key: key(), previous: [oldKey] })
  t.equal(rotated.open(sealed, 'c:1'), 'token')
  t.equal(rotated.isCurrent(sealed), false)
  t.equal(rotated.isCurrent(rotated.seal('token', 'c:1')), true)
})

test('canary: a wrong key is told at start-up', async (t) => {
  const k = key()
  const canary = new SecretBox({ key: k }).canary()
  t.doesNotThrow(() => new SecretBox({ key: k }).checkCanary(canary))
  t.throws(() => new SecretBox({ key: key() }).checkCanary(canary), SecretKeyError)
  t.doesNotThrow(() => new SecretBox({ key: key(), previous: [k] }).checkCanary(canary))
})

test('secretBoxFor: the scaled deployment needs a key, the embedded default makes one', async (t) => {
  t.throws(() => secretBoxFor({ CREDENTIALS_KEY_PREVIOUS: '' }, true), /CREDENTIALS_KEY is not set/)
  t.equal(secretBoxFor({ CREDENTIALS_KEY_PREVIOUS: '' }, false).generated, true)
  t.throws(() => new SecretBox({ key: 'abcd' }), /64 hex/)
  const k = key()
  t.equal(secretBoxFor({ CREDENTIALS_KEY: k, CREDENTIALS_KEY_PREVIOUS: '' }, true).box.keyId, new SecretBox({ key: k }).keyId)
})
