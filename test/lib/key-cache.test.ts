import { test } from 'tap'
import { ApiKeyCache } from '../../lib/key-cache'
import { MemoryInvalidation } from '../../lib/invalidation'
import { API_KEYS_TOPIC, type ApiKeyRecord } from '../../lib/store/types'
import { newApiKey } from '../../lib/api-keys'

function countingStore (records: ApiKeyRecord[]): { findApiKey: (h: string) => Promise<ApiKeyRecord | null>, reads: number } {
  const s = {
    reads: 0,
    async findApiKey (hash: string) {
      s.reads++
      return records.find((r) => r.hash === hash) ?? null
    }
  }
  return s
}

test('a known key is read once, until a change is announced; unknown hashes are never cached', async (t) => {
  const { record } = newApiKey('a', null)
  const store = countingStore([record])
  const channel = new MemoryInvalidation()
  const cache = new ApiKeyCache(store, channel)
  t.teardown(() => cache.close())
  for (let i = 0; i < 5; i++) t.equal((await cache.find(record.hash))?.id, record.id)
  t.equal(store.reads, 1, 'one store read for five lookups')
  await channel.publish(API_KEYS_TOPIC, record.id)
  await cache.find(record.hash)
  t.equal(store.reads, 2, 'read again after an invalidation')
  t.equal(await cache.find('00'), null)
  t.equal(await cache.find('00'), null)
  t.equal(store.reads, 4)
})

test('a lookup racing an invalidation does not cache the stale record', async (t) => {
  const { record } = newApiKey('a', null)
  const channel = new MemoryInvalidation()
  let release: () => void = () => {}
  let reads = 0
  const store = {
    async findApiKey () {
      reads++
      if (reads === 1) await new Promise<void>((resolve) => { release = resolve })
      return record
    }
  }
  const cache = new ApiKeyCache(store, channel)
  t.teardown(() => cache.close())
  const pending = cache.find(record.hash)
  await channel.publish(API_KEYS_TOPIC, record.id)
  release()
  await pending
  await cache.find(record.hash)
  t.equal(reads, 2, 'the record read before the invalidation was not kept')
})

test('an expired key stops working at its expiry even when cached', async (t) => {
  const { record } = newApiKey('a', 50)
  const cache = new ApiKeyCache(countingStore([record]), new MemoryInvalidation())
  t.teardown(() => cache.close())
  t.ok(await cache.find(record.hash))
  await new Promise((resolve) => setTimeout(resolve, 80))
  t.equal(await cache.find(record.hash), null)
})
