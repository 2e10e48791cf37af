// The ownership model's parts (lib/ownership.ts): who changes what, reach within a scope, the scope a schedule's run
// is held to, and what a scan's summary shows to a key that did not make it.
import { test } from 'tap'
import { owns, reachWithin, runScope, scanView, sees, OWNED } from '../../lib/ownership'
import { intersectScopes } from '../../lib/scanner/targets'
import { newScanRecord } from '../../lib/scans'

const op = { id: 'k1', admin: false, scope: ['10.1.0.0/16'] }
const admin = { id: 'k2', admin: true, scope: [] }

test('owners and admins change; others do not', async (t) => {
  t.ok(owns(op, { createdBy: 'k1' }))
  t.notOk(owns(op, { createdBy: 'service' }))
  t.ok(owns(admin, { createdBy: 'k1' }))
})

test('a reach lies in a scope by its given scope, else by its literal targets', async (t) => {
  const single = (value: string) => ({ value, type: 'single_ip' as const })
  t.ok(reachWithin({ targets: [single('10.1.2.3')] }, ['10.1.0.0/16']))
  t.notOk(reachWithin({ targets: [single('10.1.2.3'), single('10.2.0.1')] }, ['10.1.0.0/16']))
  t.ok(reachWithin({ targets: [{ value: '10.1.0.0/24', type: 'cidr' }] }, ['10.1.0.0/25', '10.1.0.128/25']), 'covered by two blocks together')
  t.notOk(reachWithin({ targets: [{ value: 'db.example.test', type: 'dns_name' }] }, ['10.1.0.0/16']), 'a name may resolve anywhere')
  t.notOk(reachWithin({ targetTags: ['prod'] }, ['10.1.0.0/16']), 'tags follow hosts anywhere')
  t.ok(reachWithin({ keyScope: ['10.1.4.0/24'], targetTags: ['prod'] }, ['10.1.0.0/16']), 'unless the scope it was given bounds them')
  t.ok(reachWithin({ targetTags: ['prod'] }, []), 'no scope: everything')
  const scan = newScanRecord({ targets: [single('10.9.0.1')] }, 'service')
  t.notOk(sees(op, OWNED.scan, scan))
  t.ok(sees(op, OWNED.scan, { ...scan, createdBy: 'k1' }), 'its own, always')
  t.ok(sees(admin, OWNED.webhook, { createdBy: 'service' } as never), 'a resource without addresses: every key of the role')
})

test('a run is held to what it was given and what its owner may scan now', async (t) => {
  t.same(runScope(['10.1.0.0/16'], ['10.1.2.0/24', '10.9.0.0/16']), ['10.1.2.0/24'])
  t.same(runScope(['10.1.2.0/24'], ['10.0.0.0/8']), ['10.1.2.0/24'])
  t.same(runScope(undefined, ['10.0.0.0/8']), ['10.0.0.0/8'])
  t.same(runScope(['10.1.0.0/16'], []), ['10.1.0.0/16'])
  t.same(runScope([], []), [], 'neither has a scope: none')
  t.equal(runScope(['10.1.0.0/16'], ['10.2.0.0/16']), null, 'nothing in common: no run')
  t.same(intersectScopes(['10.1.0.5', '2001:db8::/32'], ['10.1.0.0/24', '2001:db8:1::/48']), ['10.1.0.5/32', '2001:db8:1::/48'])
})

test('a scan\'s summary shows other keys only the excluded addresses inside their scope', async (t) => {
  const scan = { ...newScanRecord({ targets: [{ value: 'db.example.test', type: 'dns_name' }] }, 'service'), summary: { hostsUp: 0, hostsDown: 0, openPorts: 0, findings: { critical: 0, high: 0, medium: 0, low: 0, none: 0, unknown: 0 }, uncheckedProducts: [], excluded: [{ address: '10.1.0.9', reason: 'r' }, { address: '10.9.0.9', reason: 'r' }] } }
  t.same(scanView(op, scan).summary?.excluded.map((e) => e.address), ['10.1.0.9'])
  t.equal(scanView({ ...op, id: 'service' }, scan), scan, 'its maker sees them all')
  t.equal(scanView(admin, scan), scan, 'a key without a scope too')
})
