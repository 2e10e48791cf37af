import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../../helper'
import { finding, write } from '../../support/results'
import { findingId } from '../../../lib/store/results-merge'

const auth = { 'x-api-key': SERVICE_KEY }
const T0 = Date.parse('2026-02-01T00:00:00.000Z')
const H = 3600_000
const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const REDIS = { port: 6379, service: 'redis', product: 'Redis', version: '6.0.5' }

test('host routes', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      await app.results.recordHost(write({ address: '10.0.0.2', at: T0 + H, hostnames: ['db.test'], services: [SSH, REDIS], findings: [finding('10.0.0.2', 6379, 'CVE-2022-0543', 'Redis', '6.0.5'), finding('10.0.0.2', 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] }))
      await app.results.recordHost(write({ address: '10.0.0.10', at: T0, hostnames: ['web.test'], services: [SSH] }))
      await app.results.recordHost(write({ address: '2001:db8::5', at: T0 + 2 * H, services: [SSH], findings: [finding('2001:db8::5', 22, 'CVE-2016-6210', 'OpenSSH', '9.2p1')] }))

      const list = await app.inject({ url: '/host', headers: auth })
      t.equal(list.statusCode, 200)
      t.match(list.headers['content-type'], /^application\/json/)
      const body = list.json()
      t.same([body.total, body.limit, body.offset], [3, 50, 0])
      t.same(body.items.map((h: { address: string }) => h.address), ['2001:db8::5', '10.0.0.2', '10.0.0.10'], 'most recently seen first')
      t.match(body.items[1], { address: '10.0.0.2', hostnames: ['db.test'], findingsCount: 2, maxSeverity: 'critical', ports: [{ port: 22, product: 'OpenSSH', version: '9.2p1' }, { port: 6379 }] })

      const q = async (qs: string): Promise<string[]> => {
        const res = await app.inject({ url: `/host?${qs}`, headers: auth })
        t.equal(res.statusCode, 200, qs)
        return res.json().items.map((h: { address: string }) => h.address)
      }
      t.same(await q('sort=address'), ['10.0.0.2', '10.0.0.10', '2001:db8::5'])
      t.same(await q('sort=address&order=desc'), ['2001:db8::5', '10.0.0.10', '10.0.0.2'])
      t.same(await q('sort=findings'), ['10.0.0.2', '2001:db8::5', '10.0.0.10'])
      t.same(await q('sort=severity&order=asc'), ['10.0.0.10', '2001:db8::5', '10.0.0.2'])
      t.same(await q('q=WEB'), ['10.0.0.10'])
      t.same(await q('port=6379'), ['10.0.0.2'])
      t.same(await q('service=ssh&sort=address'), ['10.0.0.2', '10.0.0.10', '2001:db8::5'])
      t.same(await q('product=Redis'), ['10.0.0.2'])
      t.same(await q('minSeverity=high'), ['10.0.0.2'])
      t.same(await q('minSeverity=medium'), ['2001:db8::5', '10.0.0.2'])
      t.same(await q('hasFindings=false'), ['10.0.0.10'])
      t.same(await q('hasFindings=true&limit=1&offset=1'), ['10.0.0.2'])
      for (const bad of ['port=0', 'port=x', 'minSeverity=huge', 'sort=name', 'order=up', 'hasFindings=maybe', 'limit=501', 'color=red']) {
        const res = await app.inject({ url: `/host?${bad}`, headers: auth })
        t.equal(res.statusCode, 400, `${bad} is a 400`)
        t.equal(res.json().code, 'VULNSCAN_VALIDATION')
      }

      const one = await app.inject({ url: '/host/10.0.0.2', headers: auth })
      t.equal(one.statusCode, 200)
      t.match(one.json(), { address: '10.0.0.2', up: true, firstSeen: new Date(T0 + H).toISOString(), findingsCount: 2 })
      t.equal((await app.inject({ url: '/host/2001:DB8:0::5', headers: auth })).json().address, '2001:db8::5', 'IPv6 in any spelling')
      const missing = await app.inject({ url: '/host/10.9.9.9', headers: auth })
      t.equal(missing.statusCode, 404)
      t.equal(missing.json().code, 'VULNSCAN_NOT_FOUND')
      for (const bad of ['db.test', '999.1.1.1', '10.0.0', 'x'.repeat(80)]) {
        const res = await app.inject({ url: `/host/${bad}`, headers: auth })
        t.equal(res.statusCode, 400, `${bad.slice(0, 20)} is not an address`)
        t.match(res.json(), { error: /address/ })
      }

      const vulns = await app.inject({ url: '/host/10.0.0.2/vulnerability', headers: auth })
      t.equal(vulns.statusCode, 200)
      t.same(vulns.json().items.map((f: { cveId: string }) => f.cveId), ['CVE-2022-0543', 'CVE-2024-6387'], 'highest CVSS first')
      t.same([vulns.json().total, vulns.json().limit, vulns.json().offset], [2, 50, 0])
      t.same((await app.inject({ url: '/host/10.0.0.2/vulnerability?limit=1&offset=1', headers: auth })).json().items.map((f: { cveId: string }) => f.cveId), ['CVE-2024-6387'])
      t.same((await app.inject({ url: '/host/10.0.0.2/vulnerability?kev=true', headers: auth })).json().total, 1)
      t.same((await app.inject({ url: '/host/10.0.0.10/vulnerability', headers: auth })).json(), { items: [], total: 0, limit: 50, offset: 0 })
      t.equal((await app.inject({ url: '/host/10.9.9.9/vulnerability', headers: auth })).statusCode, 404)
      t.equal((await app.inject({ url: '/host/nope/vulnerability', headers: auth })).statusCode, 400)

      t.equal((await app.inject({ url: '/host', headers: {} })).statusCode, 401)
      t.equal((await app.inject({ method: 'DELETE', url: '/host/10.0.0.2' })).statusCode, 401)

      const del = await app.inject({ method: 'DELETE', url: '/host/10.0.0.2', headers: auth })
      t.equal(del.statusCode, 204)
      t.equal(del.body, '')
      t.equal((await app.inject({ method: 'DELETE', url: '/host/10.0.0.2', headers: auth })).statusCode, 404)
      t.equal((await app.inject({ method: 'DELETE', url: '/host/not-ip', headers: auth })).statusCode, 400)
      t.equal((await app.inject({ url: '/host/10.0.0.2', headers: auth })).statusCode, 404)
      t.equal(await app.results.getFinding(findingId('10.0.0.2', 6379, 'CVE-2022-0543')), null, 'its findings are gone')
      t.same(await q('port=6379'), [], 'and it is out of every filter')
      t.equal((await app.inject({ url: '/vulnerability?host=10.0.0.2', headers: auth })).json().total, 0)
    })
  }
})

test('GET /host: pages follow every host write, and lists show ports in brief', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const ssh = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1', banner: 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3' }
      await app.results.recordHost(write({ address: '10.7.0.1', at: Date.parse('2026-01-01T00:00:00Z'), services: [ssh] }))
      const first = await app.inject({ url: '/host', headers: auth })
      t.equal(first.json().total, 1)
      t.same((await app.inject({ url: '/host', headers: auth })).body, first.body, 'the same page while nothing changes')
      t.same(Object.keys(first.json().items[0].ports[0]).sort(), ['port', 'product', 'protocol', 'service', 'state', 'version'], 'the list shows each port in brief')
      t.equal((await app.inject({ url: '/host/10.7.0.1', headers: auth })).json().ports[0].banner, ssh.banner, 'the host itself has them')

      await app.results.recordHost(write({ address: '10.7.0.2', at: Date.parse('2026-01-02T00:00:00Z'), services: [ssh] }))
      const second = (await app.inject({ url: '/host', headers: auth })).json()
      t.equal(second.total, 2, 'a new host shows at once')
      t.equal(second.items[0].address, '10.7.0.2')
      await app.results.deleteHost('10.7.0.2')
      t.equal((await app.inject({ url: '/host', headers: auth })).json().total, 1, 'a deleted host goes at once')
    })
  }
})
