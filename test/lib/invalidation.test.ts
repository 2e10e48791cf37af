// The invalidation channel over a Redis that goes away and comes back: key records are not cached while
// announcements cannot arrive, and caching and invalidation resume once the channel is subscribed again.
import { test } from 'tap'
import { ApiKeyCache } from '../../lib/key-cache'
import { API_KEYS_TOPIC, type ApiKeyRecord } from '../../lib/store/types'
import { newApiKey } from '../../lib/api-keys'
import { dropSchema, openBackendsFor, uniqueSchema } from '../helper'
import { redisServerAvailable, startPrivateRedis } from '../support/redis-server'

async function waitFor (what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

test('the key cache stops caching while its channel is down and resumes once resubscribed', async (t) => {
  if (!redisServerAvailable()) {
    if (process.env.CI === 'true') throw new Error('CI=true and redis-server is not installed')
    return t.pass('skipped: redis-server is not installed')
  }
  const redis = await startPrivateRedis()
  // Torn down whether or not the backends open (a private Redis left running kept the file alive until tap's limit).
  t.teardown(async () => { await redis.destroy() })
  const schema = uniqueSchema('invalidation')
  const backends = await openBackendsFor('redis', { REDIS_URL: redis.url, DATABASE_SCHEMA: schema })
  t.teardown(async () => {
    await backends.close()
    await dropSchema(schema)
  })
  const channel = backends.invalidation
  const { record } = newApiKey('team', null)
  let records: ApiKeyRecord[] = [record]
  let reads = 0
  const cache = new ApiKeyCache({ async findApiKey (hash) { reads++; return records.find((r) => r.hash === hash) ?? null } }, channel)
  t.teardown(() => cache.close())

  await waitFor('the channel is live', () => channel.live(API_KEYS_TOPIC))
  await cache.find(record.hash)
  await cache.find(record.hash)
  t.equal(reads, 1, 'cached while the channel is live')

  const epoch = channel.epoch()
  await redis.stop()
  await waitFor('the channel is down', () => !channel.live(API_KEYS_TOPIC))
  t.not(channel.epoch(), epoch, 'the epoch moves when messages may be lost')
  await cache.find(record.hash)
  await cache.find(record.hash)
  t.equal(reads, 3, 'every lookup reads the store while no announcement can arrive')
  records = []
  t.equal(await cache.find(record.hash), null, 'a revocation made while the channel is down counts at once')
  records = [{ ...record, role: 'reader' }]
  t.equal((await cache.find(record.hash))?.role, 'reader', 'so does a change of role')

  await redis.start()
  await waitFor('the channel is live again', () => channel.live(API_KEYS_TOPIC), 20_000)
  const before = reads
  t.equal((await cache.find(record.hash))?.role, 'reader')
  t.equal((await cache.find(record.hash))?.role, 'reader')
  t.equal(reads, before + 1, 'cached again once resubscribed')

  // Announcements flow again: the change below reaches the cache through Redis, not through this process.
  const heard = channel.received(API_KEYS_TOPIC, record.id, 5000)
  records = []
  await channel.publish(API_KEYS_TOPIC, record.id)
  t.equal(await heard, true, 'the announcement came back through the restarted Redis')
  t.equal(await cache.find(record.hash), null, 'and emptied the cache')
})
