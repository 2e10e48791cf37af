// The CLI's UDP options and tables against the real app on both backends: scan --udp, --udp-ports and
// --no-discovery reach the API as options.udp, options.udpPorts and options.discovery; a UDP port a scan found open
// shows as <port>/udp in host and hosts tables; findings show their port with its transport.
import dgram from 'node:dgram'
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import { finding, write } from '../support/results'
import { cli, listen } from '../support/cli'
import { freePort, loopbackAddress } from '../support/loopback'

test('scan --help lists the UDP and discovery options; a bad --udp-ports is a usage error', async (t) => {
  const env = { VULNSCAN_URL: 'http://127.0.0.1:9', VULNSCAN_API_KEY: 'k' }
  const help = await cli(['scan', '--help'], env)
  t.equal(help.code, 0)
  t.match(help.stdout, /--udp +also scan UDP/)
  t.match(help.stdout, /--udp-ports <list> +UDP ports instead of the template's/)
  t.match(help.stdout, /--no-discovery +scan every address/)
  const bad = await cli(['scan', '127.0.0.2', '--udp-ports', '53;123'], env)
  t.equal(bad.code, 2)
  t.match(bad.stderr, /--udp-ports must be a port list such as 53,123,161-162, not '53;123'/)
})

/** A UDP server on a loopback address that answers every datagram: an open UDP port. */
async function udpResponder (t: { teardown(fn: () => unknown): void }, host: string): Promise<number> {
  const sock = dgram.createSocket('udp4')
  sock.on('message', (_msg, rinfo) => sock.send('hello', rinfo.port, rinfo.address))
  await new Promise<void>((resolve) => sock.bind(0, host, resolve))
  t.teardown(() => new Promise<void>((resolve) => sock.close(() => resolve())))
  return sock.address().port
}

for (const backend of ['memory', 'redis'] as const) {
  test(`scan with UDP from the CLI, and the protocol in its tables (${backend})`, async (t) => {
    if (!(await backends()).includes(backend)) return t.pass('skipped: Redis or PostgreSQL does not answer (required under CI=true)')
    const { app } = await build(t, backend, { WORKER_ENABLED: true })
    const { url } = await listen(app)
    const env = { VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY }
    const target = loopbackAddress()
    const udpPort = await udpResponder(t, target)
    // Nothing listens there: the TCP port is closed (refused), and the scan covers it.
    const tcpPort = await freePort(target)
    const id = `cli-udp-${backend}`

    const r = await cli(['scan', target, '--template', 'discovery', '--ports', String(tcpPort), '--udp-ports', String(udpPort), '--no-discovery', '--id', id, '--wait'], env)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, `Scan ${id} completed: 1 host up, 1 open port.`)
    const scan = (await app.inject({ url: `/app/scan/${id}`, headers: { 'x-api-key': SERVICE_KEY } })).json() as Record<string, any>
    t.match(scan, { udp: true, udpPorts: String(udpPort), discovery: false, summary: { openUdpPorts: 1 } }, 'the options reached the API')

    const host = await cli(['host', target], env)
    t.equal(host.code, 0, host.stderr)
    t.match(host.stdout, new RegExp(`${udpPort}/udp +│? *open`), 'the UDP port in the host\'s port table')
    t.notMatch(host.stdout, new RegExp(`${tcpPort}/tcp`), 'the closed TCP port is not listed')
    const hosts = await cli(['hosts', '--search', target], env)
    t.equal(hosts.code, 0, hosts.stderr)
    t.match(hosts.stdout, `${udpPort}/udp`, 'the open ports column names the transport')

    // --udp alone asks for the template's UDP ports; without it no UDP is asked for.
    const plain = JSON.parse((await cli(['scan', '192.0.2.40', '--template', 'discovery', '--udp', '--id', `${id}-template`, '--json'], env)).stdout) as { id: string }
    const posted = (await app.inject({ url: `/app/scan/${plain.id}`, headers: { 'x-api-key': SERVICE_KEY } })).json() as Record<string, any>
    t.equal(posted.udp, true)
    t.equal(posted.udpPorts, undefined)
    t.not(posted.discovery, false, 'discovery stays on without --no-discovery')

    // Findings tables: TCP 53 and UDP 53 on one host are two rows, each with its transport.
    const a = '192.0.2.41'
    const w = write({ address: a, at: Date.now(), scanId: 'cli-udp-seed', services: [{ port: 53, service: 'dns', product: 'dnsmasq', version: '2.85' }], findings: [finding(a, 53, 'CVE-2021-23017', 'dnsmasq', '2.85')] })
    await app.results.recordHost({ ...w, scannedUdpPorts: [53], settledUdpPorts: [53], findings: [...w.findings, { ...finding(a, 53, 'CVE-2021-23017', 'dnsmasq', '2.85'), protocol: 'udp' }] })
    const vulns = await cli(['vulns', '--host', a], env)
    t.equal(vulns.code, 0, vulns.stderr)
    t.match(vulns.stdout, /CVE-2021-23017 .*53\/tcp/)
    t.match(vulns.stdout, /CVE-2021-23017 .*53\/udp/)
  })
}
