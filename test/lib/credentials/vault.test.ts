// Key rotation: secrets sealed under the old CREDENTIALS_KEY open while it is CREDENTIALS_KEY_PREVIOUS, are sealed
// again under the new one, and then open without the old key.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { MemoryStore } from '../../../lib/store/memory/store'
import { SecretBox, SecretKeyError } from '../../../lib/secrets'
import { CredentialVault, redact } from '../../../lib/credentials/vault'

t.test('rotating CREDENTIALS_KEY seals every secret again', async (t) => {
  const store = new MemoryStore()
  const oldKey = randomBytes(32).toString('hex')
  const newKey = randomBytes(32).toString('hex')
  const v1 = await CredentialVault.open(store, new SecretBox({ key: oldKey }))
  const a = await v1.create({ name: 'a', type: 'ssh', username: 'u', password: 'first-password' }, 'test')
  await v1.create({ name: 'b', type: 'ssh', username: 'u', password: 'second-password' }, 'test')
  await t.rejects(CredentialVault.open(store, new SecretBox({ key: newKey })), SecretKeyError, 'the new key alone does not start')
  const during = await CredentialVault.open(store, new SecretBox({ key: newKey, previous: [oldKey] }))
  t.same(await during.rotateKey(), { resealed: 2, current: 0 })
  t.same(await during.rotateKey(), { resealed: 0, current: 2 }, 'safe to repeat')
  const after = await CredentialVault.open(store, new SecretBox({ key: newKey }))
  t.equal(after.opened((await store.getCredential(a.id))!).password, 'first-password')
  await t.rejects(CredentialVault.open(store, new SecretBox({ key: oldKey })), SecretKeyError, 'the old key no longer opens them')
})

t.test('a sealed secret is bound to its record', async (t) => {
  const store = new MemoryStore()
  const v = await CredentialVault.open(store, SecretBox.ephemeral())
  const a = await v.create({ name: 'a', type: 'ssh', username: 'u', password: 'pw-a' }, 'test')
  const b = await v.create({ name: 'b', type: 'ssh', username: 'u', password: 'pw-b' }, 'test')
  t.throws(() => v.opened({ ...b, sealed: a.sealed }), /does not open/, 'a copied sealed value opens nowhere else')
})

t.test('redact', async (t) => {
  const key = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----'
  t.equal(redact('bad key b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ near', [key]), 'bad key [redacted] near')
  t.equal(redact('password hunter22 wrong', ['hunter22']), 'password [redacted] wrong')
})
