import { test } from 'tap'
import { keyScopeProblem, roleAllows, scopeFor } from '../../lib/access'
import { expandTargets, parseScope } from '../../lib/scanner/targets'

test('roles are ordered reader < operator < admin', async (t) => {
  t.ok(roleAllows('admin', 'operator'))
  t.ok(roleAllows('operator', 'reader'))
  t.notOk(roleAllows('operator', 'admin'))
  t.notOk(roleAllows('reader', 'operator'))
})

test('literal targets outside the key scope are named', async (t) => {
  t.equal(keyScopeProblem([{ type: 'single_ip', value: '127.1.0.1' }], []), null, 'no scope: nothing to add')
  t.equal(keyScopeProblem([{ type: 'single_ip', value: '127.1.0.1' }], ['127.1.0.0/24']), null)
  t.match(keyScopeProblem([{ type: 'single_ip', value: '127.1.0.1' }, { type: 'single_ip', value: '127.2.0.1' }], ['127.1.0.0/24']),
    /^targets\[1\]\.value: 127\.2\.0\.1 is outside this key's scope$/)
  t.equal(keyScopeProblem([{ type: 'dns_name', value: 'example.test' }], ['127.1.0.0/24']), null, 'names wait for resolution')
})

test('resolved names: addresses outside the key scope are left out and listed', async (t) => {
  const scope = scopeFor(parseScope('127.0.0.0/8', '127.9.0.0/16'), ['127.1.0.0/16', '127.9.0.0/16'])
  const { hosts, excluded } = await expandTargets([{ type: 'dns_name', value: 'multi.test' }], {
    maxHosts: 10,
    scope,
    resolve: async () => ['127.1.0.5', '127.3.0.5', '127.9.0.5', '10.0.0.1']
  })
  t.same(hosts.map((h) => h.address), ['127.1.0.5'])
  t.same(excluded, [
    { address: '127.3.0.5', reason: "127.3.0.5 is outside this key's scope" },
    { address: '127.9.0.5', reason: '127.9.0.5 is in the denied block 127.9.0.0/16' },
    { address: '10.0.0.1', reason: '10.0.0.1 is outside the allowed scope' }
  ], 'the global lists win over a key scope that would allow more')
  t.equal(scopeFor(parseScope('', ''), undefined).allows('10.1.1.1'), true)
})
