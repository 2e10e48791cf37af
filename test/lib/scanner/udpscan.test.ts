// The UDP scan against real daemons from Debian's packages on random loopback addresses: dnsmasq
// (DNS), chrony (NTP, with -x so the system clock is never touched), snmpd (SNMP v2c) and memcached
// (UDP enabled with -U); plus a closed port (ICMP port unreachable) and a bound socket that never
// answers (open|filtered).

import dgram from 'node:dgram'
import { test } from 'tap'
import { scanUdp, type UdpScanHost } from '../../../lib/scanner/udpscan'
import { buildUdpRegistry, UDP_PROBES, type UdpRegistry } from '../../../lib/scanner/probes/udp/index'
import { daemonUnavailable, startDaemon, type DaemonContext } from '../../support/debian-daemon'
import { loopbackAddress } from '../../support/loopback'

const upstream = (v: string): string => v.replace(/^\d+:/, '').replace(/[-+~].*$/, '')

/** The registry with one probe moved to the test daemon's port (daemons here never get their usual one). */
function registryFor (name: string, port: number): UdpRegistry {
  return buildUdpRegistry(UDP_PROBES.map((p) => p.name === name ? { ...p, ports: [port] } : p))
}

/** Ready when the probe's request gets an answer on the daemon's UDP port. */
function answers (name: string): (c: DaemonContext) => Promise<boolean> {
  return async ({ host, port }) => {
    const [r] = await scanUdp({ hosts: [host], ports: [port], registry: registryFor(name, port), retries: 0, initialTimeoutMs: 300, minTimeoutMs: 300 })
    return r.open.length === 1
  }
}

async function scanOne (name: string, host: string, port: number): Promise<UdpScanHost> {
  const [r] = await scanUdp({ hosts: [host], ports: [port], registry: registryFor(name, port) })
  return r
}

test('dnsmasq over UDP: version.bind names the product and version', { skip: daemonUnavailable('/usr/sbin/dnsmasq', 'dnsmasq-base') }, async (t) => {
  const d = await startDaemon({
    pkg: 'dnsmasq-base',
    binary: '/usr/sbin/dnsmasq',
    args: ({ host, port }) => ['-k', '--conf-file=/dev/null', `--listen-address=${host}`, `--port=${port}`, '--bind-interfaces',
      '--no-resolv', '--no-hosts', '-u', 'root', '--pid-file='],
    ready: answers('dns')
  })
  t.teardown(d.stop)
  const r = await scanOne('dns', d.host, d.port)
  t.equal(r.up, true)
  t.same(r.openFiltered, [])
  t.equal(r.open.length, 1)
  t.match(r.open[0], { port: d.port, service: { service: 'dns', product: 'dnsmasq', version: upstream(d.packageVersion) } })
  t.same(r.open[0].service.cpe, [`cpe:2.3:a:thekelleys:dnsmasq:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('chrony over UDP: an NTP server with its stratum, and no product (the wire names none)', { skip: daemonUnavailable('/usr/sbin/chronyd', 'chrony') }, async (t) => {
  const d = await startDaemon({
    pkg: 'chrony',
    binary: '/usr/sbin/chronyd',
    files: ({ host, port, dir }) => ({
      'chrony.conf': [`port ${port}`, `bindaddress ${host}`, 'allow 127.0.0.0/8', 'local stratum 8', 'cmdport 0',
        `pidfile ${dir}/chronyd.pid`, `driftfile ${dir}/drift`, ''].join('\n')
    }),
    // -d: foreground; -x: never adjust the system clock; -u root: no switch to the _chrony user.
    args: ({ dir }) => ['-d', '-x', '-f', `${dir}/chrony.conf`, '-u', 'root'],
    ready: answers('ntp')
  })
  t.teardown(d.stop)
  const r = await scanOne('ntp', d.host, d.port)
  t.equal(r.open.length, 1)
  const s = r.open[0].service
  t.equal(s.service, 'ntp')
  t.equal(s.product, undefined, 'chrony does not name itself in a mode 4 reply')
  t.equal(s.version, undefined)
  t.same(s.cpe, [])
  t.match(s.extraInfo, /^NTPv4, stratum 8, refid /)
})

test('snmpd over UDP: Net-SNMP by its sysObjectID, version by versionTag, the system in sysDescr', { skip: daemonUnavailable('/usr/sbin/snmpd', 'snmpd') }, async (t) => {
  const d = await startDaemon({
    pkg: 'snmpd',
    binary: '/usr/sbin/snmpd',
    files: ({ host, port }) => ({ 'snmpd.conf': `agentaddress udp:${host}:${port}\nrocommunity public\n` }),
    // -f: foreground; -C: no configuration but ours; -Lo: log to stdout.
    args: ({ dir }) => ['-f', '-Lo', '-C', '-c', `${dir}/snmpd.conf`, '-p', `${dir}/snmpd.pid`, '-u', 'root'],
    env: ({ dir }) => ({ SNMP_PERSISTENT_DIR: dir, MIBS: '', MIBDIRS: dir }),
    ready: answers('snmp')
  })
  t.teardown(d.stop)
  const r = await scanOne('snmp', d.host, d.port)
  t.equal(r.open.length, 1)
  const s = r.open[0].service
  t.match(s, { service: 'snmp', product: 'Net-SNMP', version: upstream(d.packageVersion) })
  t.same(s.cpe, [`cpe:2.3:a:net-snmp:net-snmp:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
  t.match(s.extraInfo, /SNMPv2c community public; sysDescr "Linux /, 'sysDescr is the system, reported as extra information')
  t.match(s.extraInfo, /sysObjectID 1\.3\.6\.1\.4\.1\.8072\./)
})

test('memcached over UDP (-U): the version command in a UDP frame', { skip: daemonUnavailable('/usr/bin/memcached', 'memcached') }, async (t) => {
  const d = await startDaemon({
    pkg: 'memcached',
    binary: '/usr/bin/memcached',
    args: ({ host, port }) => ['-l', host, '-p', '0', '-U', String(port), '-u', 'root', '-m', '8'],
    ready: answers('memcached')
  })
  t.teardown(d.stop)
  const r = await scanOne('memcached', d.host, d.port)
  t.equal(r.open.length, 1)
  t.match(r.open[0].service, { service: 'memcached', product: 'memcached', version: upstream(d.packageVersion) })
  t.same(r.open[0].service.cpe, [`cpe:2.3:a:memcached:memcached:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('closed (port unreachable), open|filtered (bound, never answers) and open (echo) on one host', async (t) => {
  const host = loopbackAddress()
  const bind = async (onMessage?: (s: dgram.Socket, m: Buffer, r: dgram.RemoteInfo) => void): Promise<{ sock: dgram.Socket, port: number }> => {
    const sock = dgram.createSocket('udp4')
    if (onMessage) sock.on('message', (m, r) => onMessage(sock, m, r))
    await new Promise<void>((resolve) => sock.bind(0, host, resolve))
    return { sock, port: sock.address().port }
  }
  const silent = await bind()
  const echo = await bind((s, m, r) => s.send(Buffer.concat([Buffer.from('echo:'), m]), r.port, r.address))
  // A port nobody holds: bound once for its number, then released.
  const gone = await bind()
  const closed = gone.port
  await new Promise<void>((resolve) => gone.sock.close(resolve))
  t.teardown(() => { silent.sock.close(); echo.sock.close() })

  const hosts: unknown[] = []
  const t0 = Date.now()
  const [r] = await scanUdp({ hosts: [host], ports: [closed, silent.port, echo.port], retries: 1, initialTimeoutMs: 300, minTimeoutMs: 300, maxTimeoutMs: 300, onHost: (h) => hosts.push(h) })
  const ms = Date.now() - t0
  t.equal(r.up, true)
  t.equal(r.closedCount, 1, 'the released port is refused')
  t.same(r.openFiltered, [silent.port], 'the silent socket is open|filtered')
  t.same(r.open.map((o) => o.port), [echo.port])
  t.match(r.open[0].service, { service: 'unknown', banner: 'echo:', cpe: [] }, 'an unknown reply is kept as the banner')
  t.same(hosts, [r], 'the host is reported once')
  t.ok(ms >= 500 && ms < 3000, `open|filtered took the two waits of 300 ms (${ms} ms)`)
})

test('a host where nothing answers: not up, every port open|filtered; aborting rejects', async (t) => {
  const host = loopbackAddress()
  const sock = dgram.createSocket('udp4')
  await new Promise<void>((resolve) => sock.bind(0, host, resolve))
  t.teardown(() => sock.close())
  const [r] = await scanUdp({ hosts: [host], ports: [sock.address().port], retries: 0, initialTimeoutMs: 200 })
  t.equal(r.up, false)
  t.same(r.openFiltered, [sock.address().port])
  const ac = new AbortController()
  const p = scanUdp({ hosts: [host], ports: [sock.address().port], retries: 3, initialTimeoutMs: 1000, signal: ac.signal })
  setTimeout(() => ac.abort(new Error('stop')), 100)
  await t.rejects(p, /stop/)
  await t.rejects(scanUdp({ hosts: [host], ports: [0] }), /not in 1\.\.65535/)
})
