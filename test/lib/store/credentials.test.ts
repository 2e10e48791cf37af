// The credential records, host keys and secrets check value of both stores: one contract.
import { test } from 'tap'
import { backends, openBackendsIn } from '../../helper'
import type { CredentialRecord } from '../../../lib/store/types'

const record = (id: string, name: string, at: string): CredentialRecord => ({
  id, name, type: 'ssh', username: 'u', auth: 'password', sealed: `v1.x.${id}`, port: 22, hostKeys: [], scope: [], description: '',
  createdAt: at, updatedAt: at, secretUpdatedAt: at, createdBy: 'service'
})

test('credential store contract', async (t) => {
  for (const kind of await backends()) {
    t.test(kind, async (t) => {
      const { store } = await openBackendsIn(t, kind)
      t.equal(await store.createCredential(record('a', 'alpha', '2026-01-01T00:00:00.000Z')), true)
      t.equal(await store.createCredential(record('b', 'alpha', '2026-01-02T00:00:00.000Z')), false, 'a name is taken once')
      t.equal(await store.getCredential('b'), null, 'and nothing was written')
      t.equal(await store.createCredential(record('c', 'gamma:x', '2026-01-03T00:00:00.000Z')), true)
      t.same((await store.listCredentials({ offset: 0, limit: 10 })).items.map((c) => c.id), ['c', 'a'], 'newest first')
      t.equal((await store.getCredentialByName('gamma:x'))?.id, 'c')
      t.equal((await store.updateCredential('a', { port: 2222, updatedAt: '2026-01-04T00:00:00.000Z' }))?.port, 2222)
      t.equal(await store.updateCredential('zz', { port: 1, updatedAt: '2026-01-04T00:00:00.000Z' }), null)

      const first = { fingerprint: 'SHA256:first', algorithm: 'ssh-ed25519', firstSeen: '2026-01-05T00:00:00.000Z' }
      const [x, y] = await Promise.all([
        store.recordHostKey('a', '192.0.2.1', first),
        store.recordHostKey('a', '192.0.2.1', { ...first, fingerprint: 'SHA256:second' })
      ])
      t.equal(x.fingerprint, y.fingerprint, 'two first logins at once agree on one key')
      t.equal((await store.recordHostKey('a', '192.0.2.1', { ...first, fingerprint: 'SHA256:third' })).fingerprint, x.fingerprint, 'a recorded key stays')
      t.equal(await store.getHostKey('c', '192.0.2.1'), null, 'per credential')

      t.equal(await store.secretsCanary('one'), 'one')
      t.equal(await store.secretsCanary('two'), 'one', 'kept once written')
      t.equal(await store.secretsCanary('three', true), 'three', 'replaced by a rotation')

      t.equal(await store.deleteCredential('a'), true)
      t.equal(await store.getHostKey('a', '192.0.2.1'), null, 'its host keys go with it')
      t.equal(await store.getCredentialByName('alpha'), null)
      t.equal(await store.createCredential(record('d', 'alpha', '2026-01-06T00:00:00.000Z')), true, 'the name is free again')
      t.equal(await store.deleteCredential('a'), false)
    })
  }
})
