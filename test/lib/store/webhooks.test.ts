// The webhook half of the store contract, on both backends: records, and each webhook's bounded delivery log.
import { test } from 'tap'
import { WEBHOOK_DELIVERIES_KEPT, type WebhookDelivery, type WebhookRecord } from '../../../lib/store/types'
import { backends, openBackendsIn } from '../../helper'

function hook (id: string, at: number): WebhookRecord {
  const iso = new Date(at).toISOString()
  return { id, url: 'https://hooks.example.com/x', events: ['scan.failed'], filter: { kevOnly: true }, format: 'json', enabled: true, description: id, secret: 'whsec_x', createdAt: iso, updatedAt: iso, createdBy: 'service' }
}

function delivery (webhookId: string, n: number): WebhookDelivery {
  return { id: `d${n}`, webhookId, at: new Date(n * 1000).toISOString(), event: 'scan.failed', eventId: `e${n}`, attempt: 1, statusCode: 500, error: 'answered 500', durationMs: n, ok: false, willRetry: true }
}

test('webhook records and delivery logs', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { store } = await openBackendsIn(t, backend)
      await store.createWebhook(hook('a', 1000))
      await store.createWebhook(hook('b', 2000))
      t.same(await store.getWebhook('a'), hook('a', 1000), 'read back as written, secret included')
      t.same((await store.listWebhooks({ limit: 10, offset: 0 })).items.map((w) => w.id), ['b', 'a'], 'newest first')
      t.same(await store.listWebhooks({ limit: 1, offset: 1 }).then((p) => [p.total, p.items.map((w) => w.id)]), [2, ['a']])
      t.match(await store.updateWebhook('a', { enabled: false, filter: {}, updatedAt: '2026-01-01T00:00:00.000Z' }), { id: 'a', enabled: false, filter: {}, secret: 'whsec_x', description: 'a' })
      t.equal(await store.updateWebhook('nope', { enabled: true, updatedAt: 'x' }), null)

      for (let n = 1; n <= WEBHOOK_DELIVERIES_KEPT + 5; n++) await store.appendWebhookDelivery(delivery('a', n))
      const log = await store.listWebhookDeliveries('a', { limit: 3, offset: 0 })
      t.equal(log.total, WEBHOOK_DELIVERIES_KEPT, 'the log keeps the newest entries only')
      t.same(log.items.map((d) => d.id), [`d${WEBHOOK_DELIVERIES_KEPT + 5}`, `d${WEBHOOK_DELIVERIES_KEPT + 4}`, `d${WEBHOOK_DELIVERIES_KEPT + 3}`], 'newest first')
      t.same(log.items[0], delivery('a', WEBHOOK_DELIVERIES_KEPT + 5))
      t.equal((await store.listWebhookDeliveries('b', { limit: 3, offset: 0 })).total, 0, 'each webhook its own log')

      t.equal(await store.deleteWebhook('a'), true)
      t.equal(await store.deleteWebhook('a'), false)
      t.equal(await store.getWebhook('a'), null)
      await store.appendWebhookDelivery(delivery('a', 1))
      t.equal((await store.listWebhookDeliveries('a', { limit: 3, offset: 0 })).total, 0, 'the log went with it, and stays gone')
      // Ids with the key separator stay apart.
      await store.createWebhook(hook('b:deliveries', 3000))
      t.equal((await store.getWebhook('b'))?.description, 'b')
      t.equal((await store.getWebhook('b:deliveries'))?.description, 'b:deliveries')
    })
  }
})
