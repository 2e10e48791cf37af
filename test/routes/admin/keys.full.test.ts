import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../../helper'
import { newApiKey } from '../../../lib/api-keys'

const SERVICE = { 'x-api-key': SERVICE_KEY }
const scanBody = (id: string, value = '127.20.0.1', type = 'single_ip'): object => ({ id, targets: [{ value, type }], options: { template: 'quick' }, priority: 3 })

test('roles: reader reads, operator changes, admin manages keys', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const make = async (role?: string): Promise<{ id: string, key: string, role: string }> => {
        const res = await app.inject({ method: 'POST', url: '/admin/keys', headers: SERVICE, payload: { label: `k-${role ?? 'default'}`, ...(role ? { role } : {}) } })
        t.equal(res.statusCode, 201)
        return res.json()
      }
      const reader = await make('reader')
      const operator = await make('operator')
      const admin = await make('admin')
      t.equal((await make()).role, 'operator', 'a new key without a role is an operator')

      const as = (k: { key: string }): Record<string, string> => ({ 'x-api-key': k.key })
      t.equal((await app.inject({ url: '/host', headers: as(reader) })).statusCode, 200, 'a reader reads')
      const denied = await app.inject({ method: 'POST', url: '/app/scan', headers: as(reader), payload: scanBody('r1') })
      t.equal(denied.statusCode, 403, 'a reader may not post')
      t.same(Object.keys(denied.json()).sort(), ['code', 'error'])
      t.equal(denied.json().code, 'VULNSCAN_AUTH_FORBIDDEN')
      t.match(denied.json().error, /'operator' role/, 'the error names the role needed')
      t.equal((await app.inject({ method: 'DELETE', url: '/host/127.20.0.1', headers: as(reader) })).statusCode, 403, 'a reader may not delete hosts')
      t.equal((await app.inject({ method: 'PATCH', url: '/vulnerability/finding/x', headers: as(reader), payload: { status: 'accepted' } })).statusCode, 403, 'a reader may not decide findings')

      t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: as(operator), payload: scanBody('o1') })).statusCode, 200, 'an operator posts')
      t.equal((await app.inject({ method: 'DELETE', url: '/app/scan/o1', headers: as(operator) })).statusCode, 200, 'an operator cancels')
      const notAdmin = await app.inject({ url: '/admin/keys', headers: as(operator) })
      t.equal(notAdmin.statusCode, 403)
      t.match(notAdmin.json().error, /'admin' role/)
      t.equal((await app.inject({ url: '/admin/audit', headers: as(operator) })).statusCode, 403, 'the audit log is admin only')

      const listed = await app.inject({ url: '/admin/keys', headers: as(admin) })
      t.equal(listed.statusCode, 200, 'an admin key manages keys')
      const byId = new Map(listed.json().items.map((k: { id: string }) => [k.id, k]))
      t.match(byId.get(reader.id), { role: 'reader', scope: [] })
      t.match(byId.get(admin.id), { role: 'admin' })
      t.equal((await app.inject({ url: '/admin/audit', headers: as(admin) })).statusCode, 200)
    })
  }
})

test('a key stored before roles existed acts exactly as before: operator, no /admin', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const { key, record } = newApiKey('legacy', null)
      await app.store.createApiKey(record)
      t.equal(record.role, undefined)
      const h = { 'x-api-key': key }
      t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scanBody('l1') })).statusCode, 200)
      t.equal((await app.inject({ url: '/admin/keys', headers: h })).statusCode, 403)
      const listed = (await app.inject({ url: '/admin/keys', headers: SERVICE })).json()
      t.match(listed.items[0], { id: record.id, role: 'operator', scope: [] }, 'listed with the role it acts with')
    })
  }
})

test('PATCH changes role and scope on the next request; bad input is a 400, unknown id a 404', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const k = (await app.inject({ method: 'POST', url: '/admin/keys', headers: SERVICE, payload: { label: 'p' } })).json()
      const h = { 'x-api-key': k.key }
      t.equal((await app.inject({ url: '/host', headers: h })).statusCode, 200, 'cached now')
      const patched = await app.inject({ method: 'PATCH', url: `/admin/keys/${k.id}`, headers: SERVICE, payload: { role: 'reader' } })
      t.equal(patched.statusCode, 200)
      t.match(patched.json(), { id: k.id, role: 'reader', label: 'p' })
      t.notOk('hash' in patched.json())
      t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scanBody('p1') })).statusCode, 403, 'the new role applies at once')
      const scoped = await app.inject({ method: 'PATCH', url: `/admin/keys/${k.id}`, headers: SERVICE, payload: { role: 'operator', scope: ['127.21.0.0/24'] } })
      t.same(scoped.json().scope, ['127.21.0.0/24'])
      t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scanBody('p2') })).statusCode, 403, 'outside the new scope')
      t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scanBody('p3', '127.21.0.9') })).statusCode, 200)

      t.equal((await app.inject({ method: 'PATCH', url: `/admin/keys/${k.id}`, headers: SERVICE, payload: { scope: ['not-a-cidr'] } })).statusCode, 400)
      t.equal((await app.inject({ method: 'PATCH', url: `/admin/keys/${k.id}`, headers: SERVICE, payload: { role: 'root' } })).statusCode, 400)
      t.equal((await app.inject({ method: 'PATCH', url: `/admin/keys/${k.id}`, headers: SERVICE, payload: {} })).statusCode, 400)
      t.equal((await app.inject({ method: 'PATCH', url: '/admin/keys/nope', headers: SERVICE, payload: { role: 'reader' } })).statusCode, 404)
      t.equal((await app.inject({ method: 'POST', url: '/admin/keys', headers: SERVICE, payload: { label: 'bad', scope: ['300.1.1.1/8'] } })).statusCode, 400)
    })
  }
})

test('scope: a literal target outside the key scope is a 403 naming it; the scan keeps the scope for the worker', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend, { SCAN_ALLOW: '127.0.0.0/8' })
      const k = (await app.inject({ method: 'POST', url: '/admin/keys', headers: SERVICE, payload: { label: 's', scope: ['127.22.0.0/16'] } })).json()
      t.same(k.scope, ['127.22.0.0/16'])
      const h = { 'x-api-key': k.key }
      const out = await app.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scanBody('s1', '127.23.0.1') })
      t.equal(out.statusCode, 403)
      t.equal(out.json().code, 'VULNSCAN_SCAN_OUTSIDE_KEY_SCOPE')
      t.match(out.json().error, /127\.23\.0\.1 is outside this key's scope/)
      const range = await app.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scanBody('s2', '127.22.255.250-127.23.0.5', 'ip_range') })
      t.equal(range.statusCode, 403)
      t.match(range.json().error, /leaves this key's scope at 127\.23\.0\.0/)
      const global = await app.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scanBody('s3', '10.0.0.1') })
      t.equal(global.statusCode, 400, 'the global lists still come first')
      t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scanBody('s4', 'localhost', 'dns_name') })).statusCode, 200, 'names are checked after resolution')
      t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scanBody('s5', '127.22.3.4') })).statusCode, 200)
      t.same((await app.store.getScan('s5'))?.keyScope, ['127.22.0.0/16'])
      t.equal((await app.store.getScan('s5'))?.createdBy, k.id)
      t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: SERVICE, payload: scanBody('s6', '127.23.0.1') })).statusCode, 200, 'the infrastructure key is unscoped')
      t.equal((await app.store.getScan('s6'))?.keyScope, undefined)
    })
  }
})
