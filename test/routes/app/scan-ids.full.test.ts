// Scan ids are client input that ends up inside storage keys and queue job ids: every id the schema accepts
// must name exactly one scan, whatever other scans exist.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../../helper'

const auth = { 'x-api-key': SERVICE_KEY, 'content-type': 'application/json' }
const body = (id: string): string => JSON.stringify({ id, targets: [{ value: '127.3.0.1', type: 'single_ip' }] })

test('ids that extend another id with a key suffix are separate scans, in either order', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      // Suffixes the Redis store puts after a scan's id, posted before and after the plain id.
      const ids = ['a:state', 'a', 'a:progress', 'a:batches', 'b', 'b:state', 'b:progress', 'b:batches', 'c:state:state', 'c:state', 'c']
      for (const id of ids) {
        const res = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: body(id) })
        t.equal(res.statusCode, 200, `POST ${id}`)
      }
      for (const id of ids) {
        const res = await app.inject({ url: `/app/scan/${encodeURIComponent(id)}`, headers: auth })
        t.equal(res.statusCode, 200, `GET ${id}`)
        t.equal(res.json().id, id)
        t.equal(res.json().status, 'queued')
      }
      const list = await app.inject({ url: '/app/scan?limit=50', headers: auth })
      t.equal(list.statusCode, 200, 'the list answers')
      t.same(list.json().items.map((s: { id: string }) => s.id).sort(), [...ids].sort())

      await app.store.reportBatchProgress('a', 0, { hostsDone: 1, portsDone: 10 })
      await app.store.finishBatch('a', 0, { hostsUp: 1, hostsDown: 0, openPorts: 0, findings: { critical: 0, high: 0, medium: 0, low: 0, none: 0, unknown: 0 }, uncheckedProducts: [] })
      const cancelled = await app.inject({ method: 'DELETE', url: '/app/scan/a:state', headers: { 'x-api-key': SERVICE_KEY } })
      t.equal(cancelled.statusCode, 200)
      t.equal((await app.inject({ url: '/app/scan/a', headers: auth })).json().status, 'queued', 'cancelling a:state leaves a alone')
      t.equal((await app.store.finishBatch('a:state', 0, { hostsUp: 0, hostsDown: 1, openPorts: 0, findings: { critical: 0, high: 0, medium: 0, low: 0, none: 0, unknown: 0 }, uncheckedProducts: [] })).length, 1, 'batches are per scan')
    })
  }
})
