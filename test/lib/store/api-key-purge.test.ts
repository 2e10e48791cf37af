// Expired dynamic keys leave the store: when read, when listed, and by the sweep, on every backend.
import { test } from 'tap'
import type { ApiKeyRecord } from '../../../lib/store/types'
import { backends, build, openBackendsIn, SERVICE_KEY } from '../../helper'

function key (id: string, expiresAt: string | null): ApiKeyRecord {
  return { id, label: id, prefix: 'vs_x', hash: id.padEnd(64, '0'), createdAt: new Date().toISOString(), lastUsedAt: null, expiresAt }
}

test('expired keys are deleted, live ones kept', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const b = await openBackendsIn(t, backend)
      const past = new Date(Date.now() - 1000).toISOString()
      const soon = new Date(Date.now() + 300).toISOString()
      await b.store.createApiKey(key('aa', past))
      await b.store.createApiKey(key('bb', soon))
      await b.store.createApiKey(key('cc', null))
      t.equal(await b.store.purgeExpiredApiKeys(), 1, 'the sweep deletes the expired key')
      t.equal(await b.store.purgeExpiredApiKeys(), 0, 'and only once')
      await new Promise((resolve) => setTimeout(resolve, 400))
      t.equal(await b.store.findApiKey(key('bb', null).hash), null, 'a key read after it expired is not found')
      t.equal(await b.store.purgeExpiredApiKeys(), 0, 'reading it deleted it')
      t.same((await b.store.listApiKeys()).map((k) => k.id), ['cc'])
      t.equal(await b.store.deleteApiKey('bb'), false, 'nothing of it is left to delete')
    })
  }
})

test('the sweep runs on its own', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app, redis, config } = await build(t, backend, { KEY_SWEEP_INTERVAL: 1 })
      const created = await app.inject({ method: 'POST', url: '/admin/keys', headers: { 'x-api-key': SERVICE_KEY }, payload: { label: 'short', expiresIn: '1s' } })
      t.equal(created.statusCode, 201, created.body)
      await new Promise((resolve) => setTimeout(resolve, 2600))
      t.equal(await app.store.purgeExpiredApiKeys(), 0, 'already swept')
      if (redis) t.same(await redis.hgetall(`${config.REDIS_PREFIX}:apikeys`), {}, 'no index entry left behind')
    })
  }
})
