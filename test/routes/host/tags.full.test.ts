// Host tags through the API: PUT and PATCH /host/{address}/tags (validated, operator role, audited), the `tag`
// filter of GET /host, GET /vulnerability and its CSV export, and the tag fields of scan and schedule bodies.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../../helper'
import { finding, write } from '../../support/results'
import { MAX_TAGS } from '../../../lib/tags'

const auth = { 'x-api-key': SERVICE_KEY }
const T0 = Date.parse('2026-02-01T00:00:00.000Z')
const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const REDIS = { port: 6379, service: 'redis', product: 'Redis', version: '6.0.5' }

test('host tags routes', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const a = '10.4.0.1'
      const b = '10.4.0.2'
      await app.results.recordHost(write({ address: a, at: T0, services: [SSH, REDIS], findings: [finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5'), finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] }))
      await app.results.recordHost(write({ address: b, at: T0 + 1000, services: [SSH], findings: [finding(b, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] }))

      const put = (address: string, payload: unknown, headers: Record<string, string> = auth) =>
        app.inject({ method: 'PUT', url: `/host/${address}/tags`, headers, payload: payload as object })
      const patch = (address: string, payload: unknown, headers: Record<string, string> = auth) =>
        app.inject({ method: 'PATCH', url: `/host/${address}/tags`, headers, payload: payload as object })

      t.same((await app.inject({ url: `/host/${a}`, headers: auth })).json().tags, [], 'a host without tags shows an empty list')
      const set = await put(a, { tags: ['web', 'prod', 'web', 'team:a-1.b_c'] })
      t.equal(set.statusCode, 200)
      t.same(set.json().tags, ['prod', 'team:a-1.b_c', 'web'], 'each once, in order')
      t.match(set.json(), { address: a, findingsCount: 2 }, 'the whole host comes back')
      t.same((await app.inject({ url: `/host/${a}`, headers: auth })).json().tags, ['prod', 'team:a-1.b_c', 'web'])
      t.same((await app.inject({ url: '/host?sort=address', headers: auth })).json().items.map((h: { tags: string[] }) => h.tags), [['prod', 'team:a-1.b_c', 'web'], []], 'lists show tags')

      const unknown = await put('10.4.0.99', { tags: ['prod'] })
      t.equal(unknown.statusCode, 404)
      t.match(unknown.json(), { code: 'VULNSCAN_NOT_FOUND', error: /10\.4\.0\.99/ })
      t.equal((await patch('10.4.0.99', { add: ['prod'] })).statusCode, 404)
      t.equal((await put('not-an-address', { tags: [] })).statusCode, 400)

      const tooMany = Array.from({ length: MAX_TAGS + 1 }, (_, i) => `t${i}`)
      for (const [payload, field] of [
        [{ tags: ['Prod'] }, 'tags/0'], [{ tags: ['-x'] }, 'tags/0'], [{ tags: ['ok', 'has space'] }, 'tags/1'], [{ tags: [''] }, 'tags/0'],
        [{ tags: ['x'.repeat(64)] }, 'tags/0'], [{ tags: tooMany }, 'tags'], [{ tags: 'prod' }, 'tags'], [{}, 'tags'], [{ tags: [], more: 1 }, 'more']
      ] as const) {
        const res = await put(a, payload)
        t.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 60))
        t.match(res.json(), { code: 'VULNSCAN_VALIDATION', error: new RegExp(field.replace('/', '.')) }, `the error names ${field}`)
      }
      t.same((await app.inject({ url: `/host/${a}`, headers: auth })).json().tags, ['prod', 'team:a-1.b_c', 'web'], 'a refused request changes nothing')

      const changed = await patch(a, { add: ['pci', 'prod'], remove: ['web', 'absent'] })
      t.equal(changed.statusCode, 200)
      t.same(changed.json().tags, ['pci', 'prod', 'team:a-1.b_c'])
      t.equal((await patch(a, {})).statusCode, 400, 'a patch that says nothing')
      await put(b, { tags: tooMany.slice(0, MAX_TAGS - 1) })
      const over = await patch(b, { add: ['y', 'z'] })
      t.equal(over.statusCode, 400)
      t.match(over.json(), { code: 'VULNSCAN_HOST_INVALID_TAGS', error: new RegExp(`tags: a host carries at most ${MAX_TAGS} tags`) })
      t.equal((await put(b, { tags: ['staging'] })).statusCode, 200)

      // Filters.
      const hosts = async (qs: string): Promise<string[]> => {
        const res = await app.inject({ url: `/host?${qs}`, headers: auth })
        t.equal(res.statusCode, 200, qs)
        return res.json().items.map((h: { address: string }) => h.address)
      }
      t.same(await hosts('tag=prod'), [a])
      t.same(await hosts('tag=staging'), [b])
      t.same(await hosts('tag=none'), [])
      const findings = async (qs: string): Promise<{ total: number, items: { address: string }[] }> => {
        const res = await app.inject({ url: `/vulnerability?${qs}`, headers: auth })
        t.equal(res.statusCode, 200, qs)
        return res.json()
      }
      t.same((await findings('tag=prod')).items.map((f) => f.address), [a, a])
      t.equal((await findings('tag=staging')).total, 1)
      t.equal((await findings('tag=staging&host=10.4.0.1')).total, 0)
      const csv = await app.inject({ url: '/vulnerability?tag=staging', headers: { ...auth, accept: 'text/csv' } })
      t.equal(csv.statusCode, 200)
      const lines = csv.body.trim().split('\r\n')
      t.equal(lines.length, 2, 'header and the one finding on a staging host')
      t.match(lines[1], b)
      for (const bad of ['tag=Prod', 'tag=', `tag=${'x'.repeat(64)}`, 'tag=a%20b']) {
        t.equal((await app.inject({ url: `/host?${bad}`, headers: auth })).statusCode, 400, `GET /host?${bad}`)
        const res = await app.inject({ url: `/vulnerability?${bad}`, headers: auth })
        t.equal(res.statusCode, 400, `GET /vulnerability?${bad}`)
        t.match(res.json().error, /tag/)
      }

      // Roles: tagging is a change, as deciding a finding is (operator); every change is audited.
      const key = async (role: string): Promise<Record<string, string>> =>
        ({ 'x-api-key': (await app.inject({ method: 'POST', url: '/admin/keys', headers: auth, payload: { label: role, role } })).json().key })
      const reader = await key('reader')
      const operator = await key('operator')
      t.equal((await put(a, { tags: ['x'] }, reader)).statusCode, 403, 'a reader may not tag')
      t.equal((await patch(a, { add: ['x'] }, reader)).statusCode, 403)
      t.equal((await app.inject({ url: '/host?tag=prod', headers: reader })).statusCode, 200, 'a reader may filter')
      t.equal((await put(a, { tags: ['ops'] }, operator)).statusCode, 200, 'an operator may')
      const audit = (await app.inject({ url: '/admin/audit?limit=500', headers: auth })).json().items as { method: string, route: string, targetId: string, status: number }[]
      const tagging = audit.filter((e) => e.route === '/host/:address/tags')
      t.ok(tagging.some((e) => e.method === 'PUT' && e.targetId === a && e.status === 200), 'a PUT is in the audit log with its host')
      t.ok(tagging.some((e) => e.method === 'PATCH' && e.targetId === b && e.status === 400), 'a refused PATCH too')
      t.ok(tagging.some((e) => e.status === 403), 'and a forbidden one')
    })
  }
})

test('scan and schedule bodies: tags, targetTags and the request hash', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const a = '127.31.0.1'
      await app.results.recordHost(write({ address: a, at: T0, services: [SSH] }))
      await app.results.setHostTags(a, ['lab'])
      const post = (payload: object) => app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload })

      const none = await post({ id: 'n1' })
      t.equal(none.statusCode, 400)
      t.match(none.json().error, /^targets: a scan needs at least one target, or targetTags/)
      t.equal((await post({ id: 'n2', targets: [] })).statusCode, 400, 'an empty target list alone')
      const nobody = await post({ id: 'n3', targetTags: ['ghost', 'void'] })
      t.equal(nobody.statusCode, 400)
      t.match(nobody.json(), { code: 'VULNSCAN_SCAN_INVALID_TARGET', error: 'targetTags: no known host carries any of the tags ghost, void, and the scan names no targets' })
      t.equal((await post({ id: 'n4', targetTags: ['Lab'] })).statusCode, 400, 'a target tag is a tag')
      t.equal((await post({ id: 'n5', targets: [{ value: a, type: 'single_ip' }], tags: ['ok', 'NO'] })).statusCode, 400)

      const byTag = await post({ id: 't1', targetTags: ['lab'], tags: ['seen', 'lab', 'seen'] })
      t.equal(byTag.statusCode, 200)
      const scan = (await app.inject({ url: '/app/scan/t1', headers: auth })).json()
      t.match(scan, { id: 't1', targets: [], targetTags: ['lab'], tags: ['lab', 'seen'] }, 'kept on the scan, as tag sets')
      t.equal((await post({ id: 't1', targetTags: ['lab'], tags: ['lab', 'seen'] })).statusCode, 200, 'the same request again (tags in another order)')
      t.equal((await post({ id: 't1', targetTags: ['lab'], tags: ['lab'] })).statusCode, 409, 'other tags: another request')
      t.equal((await post({ id: 't1', targetTags: ['lab', 'x'], tags: ['lab', 'seen'] })).statusCode, 409, 'other target tags: another request')
      // Tags named by a target-less scan that exists already: a re-post is recognised whatever the hosts carry now.
      await app.results.setHostTags(a, [])
      t.equal((await post({ id: 't1', targetTags: ['lab'], tags: ['seen', 'lab'] })).statusCode, 200)
      const plain = await post({ id: 'p1', targets: [{ value: a, type: 'single_ip' }] })
      t.equal(plain.statusCode, 200)
      t.notOk('tags' in (await app.inject({ url: '/app/scan/p1', headers: auth })).json(), 'a scan without tags shows none')

      const sched = (scan: object) => app.inject({ method: 'POST', url: '/app/schedule', headers: auth, payload: { cron: '0 3 * * *', scan } })
      const s1 = await sched({ targetTags: ['prod'], tags: ['nightly'] })
      t.equal(s1.statusCode, 201, 'a schedule may name only target tags (they are looked up at each run)')
      t.match(s1.json().scan, { targetTags: ['prod'], tags: ['nightly'] })
      t.notOk('targets' in s1.json().scan)
      const s2 = await sched({})
      t.equal(s2.statusCode, 400)
      t.match(s2.json().error, /^scan\.targets: a scan needs at least one target, or targetTags/)
      t.equal((await sched({ targetTags: ['BAD'] })).statusCode, 400)
      const patched = await app.inject({ method: 'PATCH', url: `/app/schedule/${s1.json().id as string}`, headers: auth, payload: { scan: { targets: [{ value: a, type: 'single_ip' }], tags: ['x'] } } })
      t.equal(patched.statusCode, 200)
      t.same(patched.json().scan.tags, ['x'])
    })
  }
})
