// GET /app/scan/{id}/diff and the scanId filters of GET /host and GET /vulnerability, on both backends, from results
// written through the store as a worker writes them.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../../helper'
import { finding, write } from '../../support/results'
import { newScanRecord } from '../../../lib/scans'
import type { Target } from '../../../lib/scanner/types'
import type { FastifyInstance } from 'fastify'

const auth = { 'x-api-key': SERVICE_KEY }
const T0 = Date.parse('2026-04-01T00:00:00.000Z')
const H = 3600_000
const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const REDIS = { port: 6379, service: 'redis', product: 'Redis', version: '6.0.5' }
const PORTS = [22, 80, 6379]
const NET: Target[] = [{ value: '10.3.0.0/30', type: 'cidr' }]

async function scan (app: FastifyInstance, id: string, at: number, status: 'completed' | 'running' = 'completed', targets = NET): Promise<void> {
  const record = newScanRecord({ id, targets }, 'service', new Date(at))
  await app.store.createScan(record)
  if (status === 'completed') await app.store.updateScan(id, { status: 'completed', finishedAt: new Date(at + 60_000).toISOString() })
  else await app.store.updateScan(id, { status })
}

test('scan diff and scanId filters', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const [a, b] = ['10.3.0.1', '10.3.0.2']
      const sshA = finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
      const redisA = finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')
      await scan(app, 'mon', T0)
      await app.results.recordHosts([
        write({ address: a, at: T0, scanId: 'mon', services: [SSH, REDIS], scannedPorts: PORTS, settledPorts: PORTS, findings: [sshA, redisA] }),
        write({ address: b, at: T0, scanId: 'mon', services: [SSH], scannedPorts: PORTS, settledPorts: PORTS })
      ])
      await scan(app, 'other-net', T0 + H, 'completed', [{ value: '10.3.0.1', type: 'single_ip' }])
      // Tuesday: Redis is gone from a, SSH upgraded on b.
      await scan(app, 'tue', T0 + 2 * H)
      await app.results.recordHosts([
        write({ address: a, at: T0 + 2 * H, scanId: 'tue', services: [SSH], scannedPorts: PORTS, settledPorts: PORTS, findings: [sshA] }),
        write({ address: b, at: T0 + 2 * H, scanId: 'tue', services: [{ ...SSH, version: '9.6p1' }], scannedPorts: PORTS, settledPorts: PORTS })
      ])
      await scan(app, 'wed', T0 + 3 * H, 'running')

      const diff = await app.inject({ url: '/app/scan/tue/diff', headers: auth })
      t.equal(diff.statusCode, 200, diff.body)
      const d = diff.json()
      t.match(d, { scanId: 'tue', against: 'mon', limit: 100, offset: 0 }, 'against: the previous completed scan of the same targets')
      t.same(d.totals, { newFindings: 0, fixedFindings: 1, unchangedFindings: 1, portsOpened: 0, portsClosed: 1, servicesChanged: 1, hostsAppeared: 0, hostsDown: 0 })
      t.match(d.findings.fixed, [{ address: a, port: 6379, cveId: 'CVE-2022-0543', status: 'fixed', severity: 'critical', cvss: 10, product: 'Redis', version: '6.0.5' }])
      t.match(d.findings.unchanged, [{ address: a, port: 22, cveId: 'CVE-2024-6387', status: 'open' }])
      t.same(d.ports.closed, [{ address: a, port: 6379, protocol: 'tcp', service: 'redis', product: 'Redis', version: '6.0.5' }])
      t.same(d.services.changed, [{ address: b, port: 22, protocol: 'tcp', before: { service: 'ssh', product: 'OpenSSH', version: '9.2p1' }, after: { service: 'ssh', product: 'OpenSSH', version: '9.6p1' } }])

      const reverse = (await app.inject({ url: '/app/scan/mon/diff?against=tue', headers: auth })).json()
      t.same([reverse.totals.newFindings, reverse.totals.portsOpened, reverse.totals.fixedFindings], [1, 1, 0], 'the other way round: Redis and its finding are new')
      const paged = (await app.inject({ url: '/app/scan/mon/diff?against=tue&limit=1&offset=1', headers: auth })).json()
      t.same([paged.findings.new, paged.ports.opened, paged.totals.newFindings], [[], [], 1], 'paging applies to each list; totals stay')

      const errorOf = async (url: string, status: number, text: RegExp): Promise<void> => {
        const res = await app.inject({ url, headers: auth })
        t.equal(res.statusCode, status, url)
        t.match(res.json().error, text, url)
      }
      await errorOf('/app/scan/nope/diff', 404, /No scan with id 'nope'/)
      await errorOf('/app/scan/tue/diff?against=nope', 404, /No scan with id 'nope' \(against\)/)
      await errorOf('/app/scan/wed/diff?against=tue', 409, /'wed' \(scanId\) is running/)
      await errorOf('/app/scan/tue/diff?against=wed', 409, /'wed' \(against\) is running/)
      await errorOf('/app/scan/mon/diff', 409, /No completed scan of the same targets before scan 'mon'/)
      await errorOf('/app/scan/other-net/diff', 409, /No completed scan of the same targets/)
      await errorOf('/app/scan/tue/diff?against=tue', 400, /against names the scan itself/)
      await errorOf('/app/scan/tue/diff?limit=1001', 400, /limit/)
      await errorOf('/app/scan/tue/diff?against=a%20b', 400, /against/)

      // scanId on the lists: what each scan saw.
      const hosts = async (qs: string): Promise<string[]> => {
        const res = await app.inject({ url: `/host?${qs}`, headers: auth })
        t.equal(res.statusCode, 200, qs)
        return res.json().items.map((h: { address: string }) => h.address)
      }
      t.same(await hosts('scanId=tue&sort=address'), [a, b])
      t.same(await hosts('scanId=other-net'), [], 'a scan that wrote nothing: an empty page')
      const findings = async (qs: string, accept = 'application/json'): Promise<string> =>
        (await app.inject({ url: `/vulnerability?${qs}`, headers: { ...auth, accept } })).body
      t.same(JSON.parse(await findings('scanId=mon')).items.map((f: { cveId: string }) => f.cveId), ['CVE-2022-0543', 'CVE-2024-6387'])
      t.same(JSON.parse(await findings('scanId=tue')).items.map((f: { cveId: string }) => f.cveId), ['CVE-2024-6387'])
      const csv = await findings('scanId=tue', 'text/csv')
      t.equal(csv.trim().split('\n').length, 2, 'CSV: the header and the one finding tue observed')
      t.match(csv, /CVE-2024-6387/)
      t.notMatch(csv, /CVE-2022-0543/)
      for (const url of ['/host?scanId=nope', '/vulnerability?scanId=nope']) {
        const res = await app.inject({ url, headers: auth })
        t.equal(res.statusCode, 404, url)
        t.match(res.json(), { error: "No scan with id 'nope' (scanId)", code: 'VULNSCAN_NOT_FOUND' })
      }
      const csv404 = await app.inject({ url: '/vulnerability?scanId=nope', headers: { ...auth, accept: 'text/csv' } })
      t.equal(csv404.statusCode, 404, 'the CSV export too')
      t.equal((await app.inject({ url: '/host?scanId=', headers: auth })).statusCode, 400)
    })
  }
})
