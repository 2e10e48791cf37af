import { test } from 'tap'
import { diffScans } from '../../lib/scan-diff'
import type { ScanFindingRef, ScanHostRecord } from '../../lib/store/results-types'

const AT = '2026-03-01T00:00:00.000Z'

function host (address: string, opts: Partial<ScanHostRecord> = {}): ScanHostRecord {
  return { address, up: true, at: AT, scanned: '1-1024,6379', settled: '1-1024,6379', ports: [], findings: [], ...opts }
}

function ref (id: string, port: number, cveId: string, severity: ScanFindingRef['severity'], cvss: number | null): ScanFindingRef {
  return { id, port, protocol: 'tcp', cveId, severity, cvss, status: 'open' }
}

const SSH = { port: 22, state: 'open' as const, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const REDIS = { port: 6379, state: 'open' as const, service: 'redis', product: 'Redis', version: '6.0.5' }
const HTTP = { port: 80, state: 'open' as const, service: 'http', product: 'nginx', version: '1.22.1' }

test('a diff compares only what both scans covered', async (t) => {
  const sshF = ref('a1', 22, 'CVE-2024-6387', 'high', 8.1)
  const redisF = ref('a2', 6379, 'CVE-2022-0543', 'critical', 10)
  const httpF = ref('a3', 80, 'CVE-2023-44487', 'high', 7.5)
  const old = [
    host('10.0.0.2', { ports: [SSH, REDIS], findings: [sshF, redisF] }),
    host('10.0.0.10', { ports: [SSH] }),
    host('10.0.0.3', { ports: [HTTP] }),
    host('10.0.0.4', { up: false })
  ]
  const now = [
    // Redis stopped; SSH upgraded, its finding no longer there; a new HTTP server with a finding.
    host('10.0.0.2', { ports: [{ ...SSH, version: '9.6p1' }, HTTP], findings: [httpF] }),
    // Port 22 not covered this time: neither closed nor its findings fixed.
    host('10.0.0.10', { scanned: '80', settled: '80' }),
    host('10.0.0.3', { up: false, settled: '1-1024' }),
    host('10.0.0.4', { ports: [SSH] }),
    host('10.0.0.5', { ports: [HTTP] })
  ]
  const d = await diffScans(now, old)
  t.same(d.findings.new.map((f) => [f.address, f.cveId, f.product, f.version]), [['10.0.0.2', 'CVE-2023-44487', 'nginx', '1.22.1']])
  t.same(d.findings.fixed.map((f) => [f.cveId, f.product, f.version]), [['CVE-2022-0543', 'Redis', '6.0.5'], ['CVE-2024-6387', 'OpenSSH', '9.2p1']], 'most severe first, with what the other scan saw')
  t.same(d.findings.unchanged, [])
  t.same(d.ports.opened, [{ address: '10.0.0.2', port: 80, protocol: 'tcp', service: 'http', product: 'nginx', version: '1.22.1' }])
  t.same(d.ports.closed, [{ address: '10.0.0.2', port: 6379, protocol: 'tcp', service: 'redis', product: 'Redis', version: '6.0.5' }])
  t.same(d.services.changed, [{ address: '10.0.0.2', port: 22, protocol: 'tcp', before: { service: 'ssh', product: 'OpenSSH', version: '9.2p1' }, after: { service: 'ssh', product: 'OpenSSH', version: '9.6p1' } }])
  t.same(d.hosts.appeared, [{ address: '10.0.0.4', openPorts: [22] }, { address: '10.0.0.5', openPorts: [80] }], 'up again, or never seen: in address order')
  t.same(d.hosts.down, [{ address: '10.0.0.3', openPorts: [80] }])

  const same = await diffScans(old, old)
  t.same(same.findings.unchanged.map((f) => f.id), ['a2', 'a1'])
  t.same([same.findings.new, same.findings.fixed, same.ports.opened, same.ports.closed, same.services.changed, same.hosts.appeared, same.hosts.down],
    [[], [], [], [], [], [], []], 'a scan against itself: nothing changed')
})

test('a finding on a port this scan could not settle is not fixed', async (t) => {
  const f = ref('b1', 6379, 'CVE-2022-0543', 'critical', 10)
  const d = await diffScans([host('10.0.0.2', { ports: [REDIS], settled: '1-1024' })], [host('10.0.0.2', { ports: [REDIS], findings: [f] })])
  t.same(d.findings.fixed, [])
  t.same(d.findings.new, [])
})

test('a port is its number and its transport: UDP and TCP 53 compared apart', async (t) => {
  const tcpDns = { port: 53, state: 'open' as const, service: 'dns', product: 'dnsmasq', version: '2.85' }
  const udpDns = { ...tcpDns, protocol: 'udp' as const }
  const tcpF = ref('t53', 53, 'CVE-2021-23017', 'high', 7.7)
  const udpF: ScanFindingRef = { ...ref('u53', 53, 'CVE-2021-23017', 'high', 7.7), protocol: 'udp' }
  const old = [host('10.0.0.2', { scannedUdp: '53', settledUdp: '53', ports: [tcpDns, udpDns], findings: [tcpF, udpF] })]
  // A TCP-only scan that found TCP 53 closed: only the TCP side is closed and fixed; UDP 53 was not covered.
  const tcpOnly = await diffScans([host('10.0.0.2')], old)
  t.same(tcpOnly.findings.fixed.map((f) => [f.id, f.protocol]), [['t53', 'tcp']])
  t.same(tcpOnly.ports.closed.map((p) => `${p.port}/${p.protocol}`), ['53/tcp'])
  // A UDP scan (TCP 53 not covered) that found UDP 53 closed, and a new UDP port open.
  const udpNow = [host('10.0.0.2', { scanned: '', settled: '', scannedUdp: '53,123', settledUdp: '53,123', ports: [{ port: 123, protocol: 'udp', state: 'open', service: 'ntp' }] })]
  const udpOnly = await diffScans(udpNow, old)
  t.same(udpOnly.findings.fixed.map((f) => [f.id, f.protocol]), [['u53', 'udp']])
  t.same(udpOnly.ports.closed.map((p) => `${p.port}/${p.protocol}`), ['53/udp'])
  t.same(udpOnly.ports.opened, [], 'UDP 123 was not covered by the other scan: not "opened"')
  // The host appearing lists its UDP ports apart.
  const appeared = await diffScans(old, [])
  t.same(appeared.hosts.appeared, [{ address: '10.0.0.2', openPorts: [53], openUdpPorts: [53] }])
  // Both seen, a service change on UDP only.
  const changed = await diffScans([host('10.0.0.2', { scannedUdp: '53', settledUdp: '53', ports: [tcpDns, { ...udpDns, version: '2.90' }], findings: [tcpF] })], old)
  t.same(changed.services.changed.map((c) => [c.port, c.protocol, c.after.version]), [[53, 'udp', '2.90']])
  t.same(changed.findings.fixed.map((f) => f.id), ['u53'])
})
