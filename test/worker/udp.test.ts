// UDP end to end, on both backends: a real memcached from Debian's packages on a random loopback address serves
// the same version over TCP and UDP on port 11211, and the real NVD record of CVE-2023-46852 (memcached before
// 1.6.22) matches it on both. The scans run through the worker into the results store: the host record shows
// 11211/udp with its service beside 11211/tcp, the two findings have their own ids, and a scan of one transport
// never fixes the other's finding (a false "fixed" is the defect this guards against).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import { startFakeNvd } from '../support/fake-nvd'
import { accepts, daemonUnavailable, startDaemon, type RunningDaemon } from '../support/debian-daemon'
import { scanUdp } from '../../lib/scanner/udpscan'
import { UDP_REGISTRY } from '../../lib/scanner/probes/udp/index'
import { findingId } from '../../lib/store/results-merge'

type Json = Record<string, any>
const auth = { 'x-api-key': SERVICE_KEY }
const MEMCACHED = '/usr/bin/memcached'
const PORT = 11211
const CVE = 'CVE-2023-46852'
const RECORD = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'udp', `${CVE}.json`), 'utf8')) as object

async function answersUdp (host: string): Promise<boolean> {
  const [r] = await scanUdp({ hosts: [host], ports: [PORT], registry: UDP_REGISTRY, retries: 0, initialTimeoutMs: 300, minTimeoutMs: 300 })
  return r.open.length === 1
}

/** memcached on its own port of `host` (the test's first address again for each restart), over TCP, UDP or both. */
async function memcachedOn (host: string | null, tcp: boolean, udp: boolean): Promise<RunningDaemon> {
  return await startDaemon({
    pkg: 'memcached',
    binary: MEMCACHED,
    args: ({ host: h }) => ['-l', host ?? h, '-p', tcp ? String(PORT) : '0', '-U', udp ? String(PORT) : '0', '-u', 'root', '-m', '8'],
    ready: async ({ host: h }) => (!tcp || await accepts(host ?? h, PORT)) && (!udp || await answersUdp(host ?? h))
  })
}

test('UDP findings through the worker: kept apart from TCP ones on the same port', { skip: daemonUnavailable(MEMCACHED, 'memcached') }, async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const nvd = await startFakeNvd({ rateLimit: null, records: [RECORD] })
      t.teardown(() => nvd.close())
      let daemon = await memcachedOn(null, true, true)
      t.teardown(async () => { await daemon.stop() })
      const address = daemon.host
      const { app } = await build(t, backend, { WORKER_ENABLED: true, NVD_API_URL: nvd.baseUrl })

      const scan = async (id: string, udp: boolean): Promise<Json> => {
        const options = { template: 'quick', ports: String(PORT), ...(udp ? { udp: true, udpPorts: String(PORT) } : {}) }
        const posted = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id, targets: [{ value: address, type: 'single_ip' }], options } })
        t.equal(posted.statusCode, 200, posted.body)
        for (let i = 0; i < 900; i++) {
          const s = (await app.inject({ url: `/app/scan/${id}`, headers: auth })).json() as Json
          if (['completed', 'failed', 'cancelled'].includes(s.status)) {
            t.equal(s.status, 'completed', s.reason ?? '')
            return s
          }
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        throw new Error(`scan ${id} did not end`)
      }
      const get = async (url: string): Promise<Json> => (await app.inject({ url, headers: auth })).json() as Json
      /** The finding with this id as the API lists it, whatever its status. */
      const finding = async (id: string): Promise<Json | undefined> => {
        for (const status of ['open', 'reopened', 'fixed']) {
          const f = ((await get(`/vulnerability?cveId=${CVE}&host=${address}&status=${status}`)).items as Json[]).find((x) => x.id === id)
          if (f !== undefined) return f
        }
      }
      const tcpId = findingId(address, PORT, CVE)
      const udpId = findingId(address, PORT, CVE, 'udp')
      const restart = async (tcp: boolean, udp: boolean): Promise<void> => {
        await daemon.stop()
        daemon = await memcachedOn(address, tcp, udp)
      }

      // Both transports open: the host shows 11211/tcp and 11211/udp with the service, and two findings.
      const first = await scan('both', true)
      t.equal(first.summary.openUdpPorts, 1)
      const host = await get(`/host/${address}`)
      const version = daemon.packageVersion.replace(/^\d+:/, '').replace(/[-+~].*$/, '')
      t.match(host.ports.map((p: Json) => [p.port, p.protocol, p.state, p.product, p.version]), [
        [PORT, 'tcp', 'open', 'memcached', version],
        [PORT, 'udp', 'open', 'memcached', version]
      ])
      const both = (await get(`/vulnerability?cveId=${CVE}&host=${address}`)).items as Json[]
      t.same(both.map((f) => [f.id, f.port, f.protocol, f.status]).sort(), [[tcpId, PORT, 'tcp', 'open'], [udpId, PORT, 'udp', 'open']].sort())
      t.not(tcpId, udpId)

      // UDP only now, and a TCP-only scan: TCP 11211 is closed, so its finding is fixed; the UDP one stands, and
      // the host keeps 11211/udp, which this scan did not cover.
      await restart(false, true)
      await scan('tcp-only', false)
      t.match(await finding(tcpId), { protocol: 'tcp', status: 'fixed' })
      t.match(await finding(udpId), { protocol: 'udp', status: 'open', lastScanId: 'both' })
      t.same((await get(`/host/${address}`)).ports.map((p: Json) => `${p.port}/${p.protocol} ${p.service}`), [`${PORT}/udp memcached`])
      const diff = await get('/app/scan/tcp-only/diff?against=both')
      // (The TCP exposure check's finding, VULNSCAN-MEMCACHED-NOAUTH, is fixed with its port too.)
      t.same(diff.findings.fixed.filter((f: Json) => f.cveId === CVE).map((f: Json) => [f.id, f.protocol]), [[tcpId, 'tcp']], 'the diff fixes the TCP finding only')
      t.same(diff.ports.closed.map((p: Json) => `${p.port}/${p.protocol}`), [`${PORT}/tcp`])

      // TCP only now, and a scan of both: the TCP finding reopens, the UDP one (UDP 11211 refused) is fixed.
      await restart(true, false)
      await scan('udp-closed', true)
      t.match(await finding(tcpId), { status: 'reopened', lastScanId: 'udp-closed' })
      t.match(await finding(udpId), { status: 'fixed', lastScanId: 'both' })
      const csv = await app.inject({ url: `/vulnerability?cveId=${CVE}&status=fixed`, headers: { ...auth, accept: 'text/csv' } })
      t.match(csv.body.split('\r\n')[0], /,remediation,protocol,confidenceScore$/, 'the CSV ends with the protocol and confidenceScore columns')
      t.match(csv.body.split('\r\n')[1], /,udp,\d+$/, 'then its score')
    })
  }
})
