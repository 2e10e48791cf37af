// The results-store contract for findings on UDP ports, on both backends: a port is its number and its transport,
// so a UDP service and a TCP service on the same number are two findings, and a scan of one transport never fixes
// (nor keeps) a finding of the other.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'tap'
import { findingId } from '../../../lib/store/results-merge'
import { MIGRATIONS_DIR } from '../../../lib/store/postgres/migrate'
import type { HostScanWrite } from '../../../lib/store/results-types'
import type { NewFinding } from '../../../lib/domain/findings'
import type { PortResult } from '../../../lib/domain/hosts'
import { backends, type Backend } from '../../helper'
import { finding, openResults, type OpenedResults } from '../../support/results'

type Opened = OpenedResults

const open = async (t: { teardown(fn: () => unknown): void }, backend: Backend): Promise<Opened> => await openResults(t, backend, 'results-udp')

const T0 = Date.parse('2026-02-01T00:00:00.000Z')
const H = 3600_000
const iso = (ms: number): string => new Date(ms).toISOString()
const CVE = 'CVE-2021-23017'
const DNS = { service: 'dns', product: 'dnsmasq', version: '2.85', cpe: ['cpe:2.3:a:thekelleys:dnsmasq:2.85:*:*:*:*:*:*:*'] }

function udp (nf: NewFinding): NewFinding {
  return { ...nf, protocol: 'udp' }
}

function port (n: number, protocol: 'tcp' | 'udp', state: PortResult['state'] = 'open'): PortResult {
  return state === 'open' ? { port: n, protocol, state, service: DNS } : { port: n, protocol, state }
}

function hostWrite (address: string, at: number, scanId: string, w: Partial<HostScanWrite>): HostScanWrite {
  return {
    scanId,
    at: iso(at),
    host: { address, hostnames: [], up: true, ports: [], closedCount: 0 },
    scannedPorts: [],
    findings: [],
    settledPorts: [],
    ...w
  }
}

test('UDP findings kept apart from TCP findings', async (t) => {
  for (const backend of await backends()) {
    t.test(`${backend}: a UDP and a TCP finding on one port number are two findings; a TCP-only re-scan fixes only the TCP one`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.0.3.5'
      const tcpF = finding(a, 53, CVE, 'dnsmasq', '2.85')
      const udpF = udp(finding(a, 53, CVE, 'dnsmasq', '2.85'))
      t.match(await store.recordHost(hostWrite(a, T0, 'both', {
        host: { address: a, hostnames: [], up: true, ports: [port(53, 'tcp'), port(53, 'udp')], closedCount: 0 },
        scannedPorts: [53],
        scannedUdpPorts: [53],
        findings: [tcpF, udpF],
        settledPorts: [53],
        settledUdpPorts: [53]
      })), { newFindings: 2, fixed: 0, reopened: 0 })

      const tcpId = findingId(a, 53, CVE)
      const udpId = findingId(a, 53, CVE, 'udp')
      t.not(tcpId, udpId, 'the protocol is part of a UDP finding\'s id')
      t.equal(findingId(a, 53, CVE, 'tcp'), tcpId, 'a TCP finding keeps the id it had before UDP was scanned')
      t.match(await store.getFinding(tcpId), { id: tcpId, port: 53, protocol: 'tcp', status: 'open' })
      t.match(await store.getFinding(udpId), { id: udpId, port: 53, protocol: 'udp', status: 'open' })
      const listed = (await store.listFindings({ limit: 10, offset: 0, host: a })).items
      t.same(listed.map((f) => `${f.port}/${f.protocol}`).sort(), ['53/tcp', '53/udp'])
      t.equal((await store.getHost(a))!.findingsCount, 2)

      // TCP 53 found closed by a TCP-only scan: the TCP finding is fixed, the UDP one stands.
      t.match(await store.recordHost(hostWrite(a, T0 + H, 'tcp-only', { scannedPorts: [53], settledPorts: [53] })),
        { newFindings: 0, fixed: 1, reopened: 0 })
      t.match(await store.getFinding(tcpId), { status: 'fixed', fixedAt: iso(T0 + H) })
      t.match(await store.getFinding(udpId), { status: 'open', fixedAt: null })
      const host = await store.getHost(a)
      t.equal(host!.findingsCount, 1)
      t.same(host!.ports.map((p) => `${p.port}/${p.protocol}`), ['53/udp'], 'the UDP port kept, the TCP one gone')

      // Then a UDP-only scan that finds UDP 53 closed: now the UDP finding is fixed, the TCP one untouched.
      t.match(await store.recordHost(hostWrite(a, T0 + 2 * H, 'udp-only', { scannedUdpPorts: [53], settledUdpPorts: [53] })),
        { newFindings: 0, fixed: 1, reopened: 0 })
      t.match(await store.getFinding(udpId), { status: 'fixed', fixedAt: iso(T0 + 2 * H) })
      t.match(await store.getFinding(tcpId), { status: 'fixed', fixedAt: iso(T0 + H) }, 'the TCP fix keeps its own time')
    })

    t.test(`${backend}: a UDP-only re-scan does not fix a TCP finding, and the UDP finding reopens on its own`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.0.3.6'
      const tcpId = findingId(a, 53, CVE)
      const udpId = findingId(a, 53, CVE, 'udp')
      await store.recordHost(hostWrite(a, T0, 's1', {
        host: { address: a, hostnames: [], up: true, ports: [port(53, 'tcp'), port(53, 'udp')], closedCount: 0 },
        scannedPorts: [53],
        scannedUdpPorts: [53],
        findings: [finding(a, 53, CVE, 'dnsmasq', '2.85'), udp(finding(a, 53, CVE, 'dnsmasq', '2.85'))],
        settledPorts: [53],
        settledUdpPorts: [53]
      }))
      await store.recordHost(hostWrite(a, T0 + H, 's2', { scannedUdpPorts: [53], settledUdpPorts: [53] }))
      t.match(await store.getFinding(tcpId), { status: 'open' }, 'the TCP finding stands')
      t.match(await store.getFinding(udpId), { status: 'fixed' })
      // Seen again on UDP: the UDP finding reopens, the TCP one is unchanged.
      t.match(await store.recordHost(hostWrite(a, T0 + 2 * H, 's3', {
        host: { address: a, hostnames: [], up: true, ports: [port(53, 'udp')], closedCount: 0 },
        scannedUdpPorts: [53],
        findings: [udp(finding(a, 53, CVE, 'dnsmasq', '2.85'))],
        settledUdpPorts: [53]
      })), { newFindings: 0, fixed: 0, reopened: 1 })
      t.match(await store.getFinding(udpId), { status: 'reopened', lastScanId: 's3' })
      t.match(await store.getFinding(tcpId), { status: 'open', lastScanId: 's1' })
    })

    t.test(`${backend}: exposure-check findings are settled per transport too`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.0.3.7'
      const check = (protocol: 'tcp' | 'udp'): NewFinding => ({
        ...finding(a, 11211, CVE, 'memcached', '1.6.18'),
        cveId: 'VULNSCAN-MEMCACHED-NOAUTH',
        source: 'vulnscan',
        protocol
      })
      await store.recordHost(hostWrite(a, T0, 'c1', {
        scannedPorts: [11211], scannedUdpPorts: [11211], findings: [check('tcp'), check('udp')], settledChecks: [11211], settledUdpChecks: [11211]
      }))
      // The TCP checks concluded on 11211 and found nothing: only the TCP check finding is fixed.
      t.match(await store.recordHost(hostWrite(a, T0 + H, 'c2', { scannedPorts: [11211], settledChecks: [11211] })), { newFindings: 0, fixed: 1, reopened: 0 })
      t.match(await store.getFinding(findingId(a, 11211, 'VULNSCAN-MEMCACHED-NOAUTH')), { status: 'fixed', protocol: 'tcp' })
      t.match(await store.getFinding(findingId(a, 11211, 'VULNSCAN-MEMCACHED-NOAUTH', 'udp')), { status: 'open', protocol: 'udp' })
      // CVE settling on UDP 11211 leaves the UDP check finding alone (checks settle by their own list).
      await store.recordHost(hostWrite(a, T0 + 2 * H, 'c3', { scannedUdpPorts: [11211], settledUdpPorts: [11211] }))
      t.match(await store.getFinding(findingId(a, 11211, 'VULNSCAN-MEMCACHED-NOAUTH', 'udp')), { status: 'open' })
    })

    t.test(`${backend}: the per-scan snapshot keeps (port, protocol) pairs`, async (t) => {
      const { store } = await open(t, backend)
      const a = '10.0.3.8'
      await store.recordHost(hostWrite(a, T0, 'snap', {
        host: { address: a, hostnames: [], up: true, ports: [port(53, 'tcp'), port(53, 'udp'), port(161, 'udp', 'open|filtered')], closedCount: 0 },
        scannedPorts: [22, 53],
        scannedUdpPorts: [53, 161],
        findings: [finding(a, 53, CVE, 'dnsmasq', '2.85'), udp(finding(a, 53, CVE, 'dnsmasq', '2.85'))],
        settledPorts: [22, 53],
        settledUdpPorts: [53]
      }))
      // A second write of the same scan covering only TCP (a re-match) keeps what the scan said of UDP.
      await store.recordHost(hostWrite(a, T0, 'snap', {
        host: { address: a, hostnames: [], up: true, ports: [port(53, 'tcp')], closedCount: 0 },
        scannedPorts: [53],
        findings: [finding(a, 53, CVE, 'dnsmasq', '2.85')],
        settledPorts: [53]
      }))
      const [snap] = await store.scanHosts('snap')
      t.equal(snap.scanned, '22,53')
      t.equal(snap.scannedUdp, '53,161')
      t.equal(snap.settledUdp, '53')
      t.same(snap.ports.map((p) => `${p.port}/${p.protocol ?? 'tcp'} ${p.state}`), ['53/tcp open', '53/udp open', '161/udp filtered'])
      t.same(snap.findings.map((f) => [f.id, f.port, f.protocol]).sort(), [
        [findingId(a, 53, CVE), 53, 'tcp'], [findingId(a, 53, CVE, 'udp'), 53, 'udp']
      ].sort())
      const scanFindings = await store.listFindings({ limit: 10, offset: 0, scanId: 'snap' })
      t.equal(scanFindings.total, 2, 'both findings are the scan\'s')
      // A TCP-only scan's snapshot carries no UDP fields (snapshots from before UDP read the same).
      await store.recordHost(hostWrite(a, T0 + H, 'tcp', { scannedPorts: [53], settledPorts: [53] }))
      const [tcp] = await store.scanHosts('tcp')
      t.notOk('scannedUdp' in tcp)
      t.notOk('settledUdp' in tcp)
    })

    if (backend === 'redis') {
      t.test('redis: the migration gives stored TCP findings their protocol in the text the store writes', async (t) => {
        const { store, db, schema } = await open(t, backend)
        const a = '10.0.3.9'
        await store.recordHost(hostWrite(a, T0, 'm1', { scannedPorts: [53], findings: [finding(a, 53, CVE, 'dnsmasq', '2.85')], settledPorts: [53] }))
        const id = findingId(a, 53, CVE)
        const table = `"${schema}".findings`
        const written = (await db!.query<{ text: string }>(`SELECT record::text AS text FROM ${table} WHERE id = $1`, [id])).rows[0].text
        t.match(written, /"port":53,"protocol":"tcp","cveId":/)
        // As a finding stored before this version reads: no protocol.
        await db!.query(`UPDATE ${table} SET record = replace(record::text, '"protocol":"tcp",', '')::json WHERE id = $1`, [id])
        t.equal((await db!.query(`SELECT record->>'protocol' AS p FROM ${table} WHERE id = $1`, [id])).rows[0].p, null)
        const sql = readFileSync(join(MIGRATIONS_DIR, '1767398400000_finding_protocol.sql'), 'utf8')
        const up = sql.slice(0, sql.indexOf('-- Down Migration'))
        await db!.query(`SET search_path TO "${schema}"`)
        await db!.query(up)
        const after = (await db!.query<{ text: string }>(`SELECT record::text AS text FROM ${table} WHERE id = $1`, [id])).rows[0].text
        t.equal(after, written, 'byte for byte what the store writes: the next scan does not rewrite it')
        t.match(await store.getFinding(id), { protocol: 'tcp' })
      })
    }
  }
})
