// One contract for both store backends.
import { test } from 'tap'
import type { ScanRecord, Store } from '../../../lib/store/types'
import { backends, openBackendsIn, type Backend } from '../../helper'

async function open (t: { teardown(fn: () => unknown): void }, backend: Backend): Promise<Store> {
  return (await openBackendsIn(t, backend)).store
}

function scan (id: string, at: number, status: ScanRecord['status'] = 'queued'): ScanRecord {
  return {
    id, status, targets: [{ value: '10.0.0.1', type: 'single_ip' }], template: 'quick', priority: 3, requestHash: 'h-' + id,
    createdAt: new Date(at).toISOString(), progress: { hostsTotal: 0, hostsDone: 0, portsTotal: 0, portsDone: 0, percent: 0 }, createdBy: 'service'
  }
}

test('store contract', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const store = await open(t, backend)
      await store.ping()

      const first = await store.createScan(scan('a', 1000))
      t.equal(first.created, true)
      const dup = await store.createScan({ ...scan('a', 2000), requestHash: 'other' })
      t.equal(dup.created, false, 'an existing id is not overwritten')
      t.equal(dup.scan.requestHash, 'h-a', 'and the stored record is returned')
      await store.createScan(scan('b', 2000))
      await store.createScan(scan('c', 3000))
      t.same((await store.listScans({ limit: 10, offset: 0 })).items.map((s) => s.id), ['c', 'b', 'a'])
      t.same(await store.listScans({ limit: 1, offset: 1 }).then((p) => [p.total, p.items.map((s) => s.id)]), [3, ['b']])
      t.equal((await store.listScans({ limit: 10, offset: 0, status: 'running' })).total, 0)
      t.equal(await store.getScan('zz'), null)

      const key = { id: 'k1', label: 'ci', prefix: 'vsk_abc', hash: 'f'.repeat(64), createdAt: new Date().toISOString(), lastUsedAt: null, expiresAt: null }
      await store.createApiKey(key)
      t.same(await store.findApiKey(key.hash), key)
      t.equal(await store.findApiKey('0'.repeat(64)), null)
      await store.touchApiKey(key.hash, '2026-01-01T00:00:00.000Z')
      t.equal((await store.listApiKeys())[0].lastUsedAt, '2026-01-01T00:00:00.000Z')
      const expired = { ...key, id: 'k2', hash: 'e'.repeat(64), expiresAt: new Date(Date.now() + 50).toISOString() }
      await store.createApiKey(expired)
      await new Promise((resolve) => setTimeout(resolve, 80))
      t.equal(await store.findApiKey(expired.hash), null, 'an expired key is not found')
      t.same((await store.listApiKeys()).map((k) => k.id), ['k1'], 'nor listed')
      t.equal(await store.deleteApiKey('k1'), true)
      t.equal(await store.deleteApiKey('k1'), false)
      t.equal(await store.findApiKey(key.hash), null)
    })
  }
})

test('scan state: updates, terminal states are final, batch progress only goes up, batches finish once', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const store = await open(t, backend)
      await store.createScan(scan('s', 1000))
      t.equal(await store.updateScan('nope', { status: 'running' }), null)
      const running = await store.updateScan('s', { status: 'running', startedAt: '2026-01-01T00:00:00.000Z', hostsTotal: 4, portsTotal: 400, batches: 2 })
      t.match(running, { applied: true, scan: { status: 'running', startedAt: '2026-01-01T00:00:00.000Z', batches: 2, progress: { hostsTotal: 4, portsTotal: 400, percent: 0 } } })
      t.equal((await store.listScans({ limit: 10, offset: 0, status: 'running' })).total, 1, 'moved to the running list')
      t.equal((await store.listScans({ limit: 10, offset: 0, status: 'queued' })).total, 0)

      await store.reportBatchProgress('s', 0, { hostsDone: 1, portsDone: 150 })
      await store.reportBatchProgress('s', 1, { hostsDone: 1, portsDone: 100 })
      await store.reportBatchProgress('s', 0, { hostsDone: 0, portsDone: 20 })
      const mid = await store.getScan('s')
      t.match(mid?.progress, { hostsDone: 2, portsDone: 250, percent: 62.5 }, 'a re-run batch cannot move progress back')
      await store.reportBatchProgress('s', 0, { hostsDone: 2, portsDone: 200 })
      await store.reportBatchProgress('s', 1, { hostsDone: 2, portsDone: 200 })
      t.equal((await store.getScan('s'))?.progress.percent, 99.9, 'not 100 before completion')

      const b = { hostsUp: 1, hostsDown: 1, openPorts: 3, findings: { critical: 1, high: 0, medium: 0, low: 0, none: 0, unknown: 0 }, uncheckedProducts: [] }
      t.equal((await store.finishBatch('s', 0, b)).length, 1)
      t.equal((await store.finishBatch('s', 0, { ...b, openPorts: 99 })).length, 1, 'finishing a batch twice counts once')
      const all = await store.finishBatch('s', 1, b)
      t.same(all.map((x) => x.openPorts).sort(), [3, 3], 'the first report of a batch is kept')

      const done = await store.updateScan('s', { status: 'completed', finishedAt: '2026-01-01T00:01:00.000Z' })
      t.match(done?.scan, { status: 'completed', progress: { percent: 100 } })
      const late = await store.updateScan('s', { status: 'failed', reason: 'late' })
      t.equal(late?.applied, false, 'a terminal scan does not change')
      t.equal(late?.scan.status, 'completed')
      t.equal((await store.listScans({ limit: 10, offset: 0, status: 'completed' })).total, 1)
    })
  }
})
