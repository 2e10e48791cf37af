// The previous scan of the same targets, on both store backends: what a scan diff compares with by default.
import { test } from 'tap'
import type { ScanRecord, Store } from '../../../lib/store/types'
import type { Target } from '../../../lib/scanner/types'
import { targetsKey } from '../../../lib/scanner/targets'
import { backends, openBackendsIn } from '../../helper'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')

function scan (id: string, minutes: number, targets: Target[], status: ScanRecord['status'] = 'completed'): ScanRecord {
  return {
    id, status, targets, template: 'quick', priority: 3, requestHash: 'h-' + id, createdAt: new Date(T0 + minutes * 60_000).toISOString(),
    progress: { hostsTotal: 0, hostsDone: 0, portsTotal: 0, portsDone: 0, percent: 0 }, createdBy: 'service'
  }
}

const NET: Target[] = [{ value: '10.2.0.0/28', type: 'cidr' }, { value: '10.2.1.5', type: 'single_ip' }]

test('targetsKey: order, repeats and spelling aside', async (t) => {
  t.equal(targetsKey(NET), targetsKey([NET[1], NET[0], NET[1]]))
  t.equal(targetsKey([{ value: 'Web.Example.test', type: 'dns_name' }]), targetsKey([{ value: 'web.example.test', type: 'dns_name' }]))
  t.equal(targetsKey([{ value: '2001:DB8:0::1', type: 'single_ip' }]), targetsKey([{ value: '2001:db8::1', type: 'single_ip' }]))
  t.not(targetsKey(NET), targetsKey([NET[0]]), 'a subset is another target list')
  t.not(targetsKey([{ value: '10.2.0.1', type: 'single_ip' }]), targetsKey([{ value: '10.2.0.1', type: 'dns_name' }]))
})

test('previousScan contract', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const store: Store = (await openBackendsIn(t, backend)).store
      await store.createScan(scan('old', 0, NET))
      await store.createScan(scan('other-targets', 10, [NET[0]]))
      await store.createScan(scan('failed', 20, [NET[1], NET[0]], 'failed'))
      await store.createScan(scan('mid', 30, [NET[1], NET[0]]))
      await store.createScan(scan('now', 40, NET))
      await store.createScan(scan('later', 50, NET))
      t.equal((await store.previousScan('now', 'completed'))?.id, 'mid', 'the newest earlier completed scan of the same targets, in any order')
      t.equal((await store.previousScan('now', 'failed'))?.id, 'failed')
      t.equal((await store.previousScan('mid', 'completed'))?.id, 'old')
      t.equal(await store.previousScan('old', 'completed'), null, 'nothing before the first')
      t.equal(await store.previousScan('other-targets', 'completed'), null, 'nothing of the same targets')
      t.equal(await store.previousScan('unknown', 'completed'), null)
      t.equal((await store.previousScan('later', 'completed'))?.id, 'now')
      // Many scans of other targets in between are walked past.
      for (let i = 0; i < 120; i++) await store.createScan(scan(`n${i}`, 60 + i, NET, 'running'))
      await store.createScan(scan('last', 200, NET))
      t.equal((await store.previousScan('last', 'completed'))?.id, 'later', 'found past pages of running scans')
    })
  }
})
