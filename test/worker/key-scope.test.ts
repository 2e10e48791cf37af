// A key's scope reaches the worker: names resolved there are held to it, within the global lists.
import { test } from 'tap'
import { lookup } from 'node:dns/promises'
import { build, SERVICE_KEY } from '../helper'

const SERVICE = { 'x-api-key': SERVICE_KEY }

async function settled (app: Awaited<ReturnType<typeof build>>['app'], id: string, key: string): Promise<{ status: string, reason?: string, summary?: { excluded: { address: string, reason: string }[] } }> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const scan = (await app.inject({ url: `/app/scan/${id}`, headers: { 'x-api-key': key } })).json()
    if (['completed', 'failed', 'cancelled'].includes(scan.status) || Date.now() > deadline) return scan
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

test('a DNS name is resolved in the worker and addresses outside the key scope are left out and listed', async (t) => {
  const { app } = await build(t, 'memory', { WORKER_ENABLED: true })
  const addresses = (await lookup('localhost', { all: true })).map((a) => a.address)
  const make = async (scope: string[]): Promise<string> => (await app.inject({ method: 'POST', url: '/admin/keys', headers: SERVICE, payload: { label: 'scoped', scope } })).json().key
  const body = (id: string): object => ({ id, targets: [{ value: 'localhost', type: 'dns_name' }], options: { template: 'discovery', ports: '1-3' } })

  // The key may scan 127.0.0.2 only: the name's addresses are all outside, the literal address inside.
  const narrow = await make(['127.0.0.2/32'])
  const mixed = { id: 'in', targets: [{ value: '127.0.0.2', type: 'single_ip' }, { value: 'localhost', type: 'dns_name' }], options: { template: 'discovery', ports: '1-3' } }
  t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: { 'x-api-key': narrow }, payload: mixed })).statusCode, 200)
  const inScope = await settled(app, 'in', narrow)
  t.equal(inScope.status, 'completed')
  t.same(inScope.summary?.excluded.map((e) => e.address).sort(), [...addresses].sort(), 'every address of the name is listed as excluded')
  for (const e of inScope.summary?.excluded ?? []) t.match(e.reason, /outside this key's scope/)

  const elsewhere = await make(['127.41.0.0/16'])
  t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: { 'x-api-key': elsewhere }, payload: body('out') })).statusCode, 200, 'a name passes at POST time')
  const outOfScope = await settled(app, 'out', elsewhere)
  t.equal(outOfScope.status, 'failed')
  t.match(outOfScope.reason, /outside the scan scope/, 'nothing left to scan')
})
