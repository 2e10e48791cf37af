import { test } from 'tap'
import { hostFacets, mergeHostRecord } from '../../../lib/store/results-merge'
import type { HostScanWrite } from '../../../lib/store/results-types'
import type { PortResult } from '../../../lib/domain/hosts'

const tallies = { findingsCount: 0, maxSeverity: null }

function write (at: string, ports: PortResult[], scannedPorts: number[], scannedUdpPorts?: number[]): HostScanWrite {
  return {
    scanId: `s-${at}`, at, findings: [], settledPorts: [], scannedPorts, ...(scannedUdpPorts ? { scannedUdpPorts } : {}),
    host: { address: '192.0.2.7', hostnames: [], up: true, ports, closedCount: 0 }
  }
}

test('a port is its number and its transport: TCP and UDP 53 side by side, each replaced only by its own scan', async (t) => {
  const dns = { service: 'dns', product: 'dnsmasq', version: '2.90', cpe: ['cpe:2.3:a:thekelleys:dnsmasq:2.90:*:*:*:*:*:*:*'] }
  const first = mergeHostRecord(null, write('2026-01-01T00:00:00.000Z', [
    { port: 53, protocol: 'tcp', state: 'open', service: dns },
    { port: 53, protocol: 'udp', state: 'open', service: dns },
    { port: 161, protocol: 'udp', state: 'open|filtered' }
  ], [53], [53, 161]), '192.0.2.7', tallies)
  t.same(first.ports.map((p) => `${p.port}/${p.protocol} ${p.state}`), ['53/tcp open', '53/udp open', '161/udp open|filtered'])
  t.same(hostFacets(first).ports, [53], 'the port filter reads TCP ports')
  // A TCP-only scan finding TCP 53 closed removes TCP 53 and keeps the UDP ports it did not cover.
  const second = mergeHostRecord(first, write('2026-01-02T00:00:00.000Z', [], [53]), '192.0.2.7', tallies)
  t.same(second.ports.map((p) => `${p.port}/${p.protocol} ${p.state}`), ['53/udp open', '161/udp open|filtered'])
  t.equal(second.ports[0].product, 'dnsmasq')
  // A UDP scan that found 161 closed removes it and leaves TCP alone.
  const third = mergeHostRecord(second, write('2026-01-03T00:00:00.000Z', [{ port: 53, protocol: 'udp', state: 'open', service: dns }], [], [53, 161]), '192.0.2.7', tallies)
  t.same(third.ports.map((p) => `${p.port}/${p.protocol}`), ['53/udp'])
})
