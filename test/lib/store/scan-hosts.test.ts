// What each scan saw of each host, on both results backends: the `scanId` filters of host and finding lists and
// the per-scan snapshots a scan diff compares.
import { test } from 'tap'
import { findingId } from '../../../lib/store/results-merge'
import { backends, type Backend } from '../../helper'
import { finding, write, openResults, type OpenedResults } from '../../support/results'

type Opened = OpenedResults

const open = async (t: { teardown(fn: () => unknown): void }, backend: Backend): Promise<Opened> => await openResults(t, backend, 'scanhosts')

const T0 = Date.parse('2026-02-01T00:00:00.000Z')
const H = 3600_000
const iso = (ms: number): string => new Date(ms).toISOString()

const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const HTTP = { port: 80, service: 'http', product: 'Apache httpd', version: '2.4.49' }
const REDIS = { port: 6379, service: 'redis', product: 'Redis', version: '6.0.5' }
const QUICK = [21, 22, 23, 25, 80, 443, 6379, 8080]

test('results per scan', async (t) => {
  for (const backend of await backends()) {
    t.test(`${backend}: scanId filters hosts and findings to what that scan saw`, async (t) => {
      const { store } = await open(t, backend)
      const [a, b, c] = ['10.1.0.1', '10.1.0.2', '10.1.0.3']
      const sshA = finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
      const httpA = finding(a, 80, 'CVE-2021-41773', 'Apache httpd', '2.4.49')
      const redisB = finding(b, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')
      await store.recordHosts([
        write({ address: a, at: T0, scanId: 's1', services: [SSH, HTTP], scannedPorts: QUICK, findings: [sshA, httpA] }),
        write({ address: b, at: T0, scanId: 's1', services: [REDIS], scannedPorts: QUICK, findings: [redisB] })
      ])
      // s2 sees a again (Apache gone), and c; b is not in its targets.
      await store.recordHosts([
        write({ address: a, at: T0 + H, scanId: 's2', services: [SSH], scannedPorts: QUICK, settledPorts: QUICK, findings: [sshA] }),
        write({ address: c, at: T0 + H, scanId: 's2', services: [HTTP], scannedPorts: QUICK })
      ])
      const hosts = async (q: object): Promise<string[]> => (await store.listHosts({ limit: 50, offset: 0, ...q })).items.map((h) => h.address)
      t.same(await hosts({ scanId: 's1', sort: 'address' }), [a, b])
      t.same(await hosts({ scanId: 's2', sort: 'address' }), [a, c])
      t.same(await hosts({ scanId: 's2', port: 80 }), [c], 'combined with another filter')
      t.same(await hosts({ scanId: 's2', sort: 'address', order: 'desc' }), [c, a])
      t.same(await store.listHosts({ scanId: 's2', sort: 'address', limit: 1, offset: 1 }), { items: [await store.getHost(c)], total: 2 }, 'paged, with the total')
      t.same(await store.listHosts({ scanId: 'nope', limit: 50, offset: 0 }), { items: [], total: 0 }, 'a scan that wrote nothing: no host')

      const cves = async (q: object): Promise<string[]> => (await store.listFindings({ limit: 50, offset: 0, ...q })).items.map((f) => `${f.address}:${f.cveId}:${f.status}`)
      t.same(await cves({ scanId: 's1' }), [`${b}:CVE-2022-0543:open`, `${a}:CVE-2024-6387:open`, `${a}:CVE-2021-41773:fixed`],
        'what s1 observed, as the findings stand now (Apache fixed by s2), highest CVSS first')
      t.same(await cves({ scanId: 's2' }), [`${a}:CVE-2024-6387:open`])
      t.same(await cves({ scanId: 's1', host: a, sort: 'cvss', order: 'asc' }), [`${a}:CVE-2021-41773:fixed`, `${a}:CVE-2024-6387:open`], 'one host of the scan')
      t.same(await cves({ scanId: 's1', status: 'fixed' }), [`${a}:CVE-2021-41773:fixed`])
      t.same(await cves({ scanId: 's1', cveId: 'cve-2022-0543' }), [`${b}:CVE-2022-0543:open`])
      t.same(await cves({ scanId: 's2', cveId: 'CVE-2022-0543' }), [], 'a CVE the scan did not observe')
      t.equal((await store.listFindings({ scanId: 's1', limit: 1, offset: 0 })).total, 3, 'the total counts the scan\'s findings only')
      t.equal((await store.listFindings({ limit: 1, offset: 0 })).total, 3)
      t.equal((await store.listFindings({ scanId: 's1', minCvss: 8, limit: 1, offset: 0 })).total, 2)
      t.same(await cves({ scanId: 'nope' }), [])
      const exported: string[] = []
      for await (const f of store.streamFindings({ scanId: 's1', sort: 'cvss', order: 'desc' })) exported.push(f.id)
      t.same(exported, (await store.listFindings({ scanId: 's1', limit: 50, offset: 0 })).items.map((f) => f.id), 'the export reads the same list')
    })

    t.test(`${backend}: each scan keeps its own snapshot of a host`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.1.1.1'
      const sshA = finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
      const redisA = finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')
      await store.recordHost(write({ address: a, at: T0, scanId: 's1', services: [SSH, REDIS, { port: 443, service: 'https', state: 'filtered' }], scannedPorts: QUICK, settledPorts: [21, 22, 23, 25, 80, 6379, 8080], findings: [sshA, redisA] }))
      await store.recordHost(write({ address: a, at: T0 + H, scanId: 's2', services: [{ ...SSH, version: '9.6p1' }], scannedPorts: QUICK, settledPorts: QUICK }))
      const [s1] = await store.scanHosts('s1')
      t.same(s1, {
        address: a,
        up: true,
        at: iso(T0),
        scanned: '21-23,25,80,443,6379,8080',
        settled: '21-23,25,80,6379,8080',
        ports: [
          { port: 22, state: 'open', service: 'ssh', product: 'OpenSSH', version: '9.2p1' },
          { port: 443, state: 'filtered' },
          { port: 6379, state: 'open', service: 'redis', product: 'Redis', version: '6.0.5' }
        ],
        findings: [
          { id: findingId(a, 22, sshA.cveId), port: 22, protocol: 'tcp', cveId: sshA.cveId, severity: sshA.severity, cvss: sshA.cvss, status: 'fixed' },
          { id: findingId(a, 6379, redisA.cveId), port: 6379, protocol: 'tcp', cveId: redisA.cveId, severity: redisA.severity, cvss: redisA.cvss, status: 'fixed' }
        ].sort((x, y) => x.id < y.id ? -1 : 1)
      }, 's1 as it saw the host; its findings as they stand now (s2 fixed both)')
      t.same((await store.scanHosts('s2')).map((h) => [h.ports, h.findings]), [[[{ port: 22, state: 'open', service: 'ssh', product: 'OpenSSH', version: '9.6p1' }], []]])
      t.same(await store.scanHosts('nope'), [])
    })

    t.test(`${backend}: a re-run write changes nothing; a later re-match adds what it settles and keeps the rest`, async (t) => {
      const { store, db, schema } = await open(t, backend)
      const a = '10.1.2.1'
      const sshA = finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
      const redisA = finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')
      // The NVD could not be asked about Redis: port 6379 is left unsettled.
      const first = write({ address: a, at: T0, scanId: 's1', services: [SSH, REDIS], scannedPorts: QUICK, settledPorts: [21, 22, 23, 25, 80, 443, 8080], findings: [sshA] })
      await store.recordHosts([first])
      const before = await store.scanHosts('s1')
      const rows = async (): Promise<unknown> => db === undefined ? null : (await db.query(`SELECT * FROM "${schema}".scan_hosts ORDER BY scan_id, address`)).rows
      const rowsBefore = await rows()
      await store.recordHosts([first])
      await store.recordHost(first)
      t.same(await store.scanHosts('s1'), before, 'the same snapshot')
      if (db !== undefined) {
        t.same(await rows(), rowsBefore, 'the same row')
        t.equal((rowsBefore as unknown[]).length, 1)
      }
      // The worker's re-match: the host as stored, no port covered, the matched port settled.
      await store.recordHost(write({ address: a, at: T0, scanId: 's1', services: [SSH, REDIS], scannedPorts: [], settledPorts: [6379], findings: [redisA] }))
      const [after] = await store.scanHosts('s1')
      t.same(after.ports, before[0].ports, 'the ports the scan saw stay')
      t.equal(after.scanned, before[0].scanned)
      t.equal(after.settled, '21-23,25,80,443,6379,8080', 'now settled')
      t.same(after.findings.map((f) => f.cveId).sort(), [redisA.cveId, sshA.cveId], 'the re-matched finding is the scan\'s too')
      t.same((await store.listFindings({ scanId: 's1', limit: 10, offset: 0 })).total, 2)
    })

    t.test(`${backend}: deleting a host deletes what every scan saw of it`, async (t) => {
      const { store, db, schema } = await open(t, backend)
      const [a, b] = ['10.1.3.1', '10.1.3.2']
      const sshA = finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
      for (const scanId of ['s1', 's2']) {
        await store.recordHosts([
          write({ address: a, at: T0 + (scanId === 's1' ? 0 : H), scanId, services: [SSH], findings: [sshA] }),
          write({ address: b, at: T0 + (scanId === 's1' ? 0 : H), scanId, services: [HTTP] })
        ])
      }
      t.ok(await store.deleteHost(a))
      t.same((await store.scanHosts('s1')).map((h) => h.address), [b])
      t.same((await store.scanHosts('s2')).map((h) => h.address), [b])
      t.same((await store.listHosts({ scanId: 's1', limit: 10, offset: 0 })).items.map((h) => h.address), [b])
      t.equal((await store.listHosts({ scanId: 's1', limit: 10, offset: 0 })).total, 1, 'the deleted host is not counted in the scan')
      t.equal((await store.listFindings({ scanId: 's1', limit: 10, offset: 0 })).total, 0)
      if (db !== undefined) t.same((await db.query(`SELECT address FROM "${schema}".scan_hosts ORDER BY 1`)).rows, [{ address: b }, { address: b }])
      // Seen again later, the host starts afresh in the scans that see it.
      await store.recordHost(write({ address: a, at: T0 + 2 * H, scanId: 's3', services: [SSH], findings: [sshA] }))
      t.same((await store.scanHosts('s3')).map((h) => [h.address, h.findings.length]), [[a, 1]])
      t.same((await store.scanHosts('s1')).map((h) => h.address), [b])
    })
  }
})
