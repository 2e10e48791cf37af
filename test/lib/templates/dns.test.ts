// The dns protocol of templates against DNS servers on loopback: a small one this test writes (real DNS bytes built
// with dns-packet, over UDP and TCP), and dnsmasq and BIND themselves where they are installed. The question goes to
// the scanned server with the name, type, class and RD flag the template gives; what it answers is matched through
// the parts Nuclei names; a server that never answers is a miss; names drawn from the target are refused.
import { test, type Test } from 'tap'
import dgram from 'node:dgram'
import net from 'node:net'
import path from 'node:path'
import * as dnsPacket from 'dns-packet'
import { loadTemplate, isRefusal, loadTemplateSet } from '../../../lib/templates/index'
import { runTemplates, templatesFor } from '../../../lib/templates/run'
import { reverseName } from '../../../lib/templates/dns'
import { loopbackAddress, freePort } from '../../support/loopback'
import { dnsmasq } from '../../../bench/support/daemon-specs'
import { accepts, daemonUnavailable, startDaemon, type DaemonSpec } from '../../support/debian-daemon'
import type { LoadedTemplate } from '../../../lib/templates/types'

const SET = loadTemplateSet({ TEMPLATES_DIR: '', TEMPLATES_SIGNING_CERT: '', TEMPLATES_REQUIRE_SIGNED: false }, path.join(__dirname, '..', '..', '..', 'templates'))
const byId = (id: string): LoadedTemplate => SET.templates.find((t) => t.id === id) as LoadedTemplate
const OPTS = { origin: 'user' as const, key: null, requireSigned: false }

interface Seen { name: string, type: string, qclass: number, rd: boolean, tcp: boolean }
/** What the fake server answers to a question: a reply packet, or null to stay silent. */
type Answer = (q: Seen, query: dnsPacket.DecodedPacket) => dnsPacket.Packet | null

/** A DNS server on a random loopback address answering over UDP and TCP on one port; `seen` lists every question. */
async function dnsServer (t: Test, answer: Answer, opts: { udp?: boolean, tcp?: boolean } = {}): Promise<{ host: string, port: number, seen: Seen[] }> {
  const host = loopbackAddress()
  const port = await freePort(host)
  const seen: Seen[] = []
  const reply = (msg: Buffer, tcp: boolean): Buffer | null => {
    const query = dnsPacket.decode(msg)
    const q = query.questions?.[0]
    if (q === undefined) return null
    // The class as sent: dns-packet names only IN, CS, CH, HS and ANY.
    const qclass = msg.readUInt16BE(msg.length - 2)
    const s: Seen = { name: q.name, type: q.type, qclass, rd: query.flag_rd, tcp }
    seen.push(s)
    const out = answer(s, query)
    if (out === null) return null
    return dnsPacket.encode({ type: 'response', id: query.id, questions: query.questions, ...out })
  }
  if (opts.udp !== false) {
    const sock = dgram.createSocket('udp4')
    sock.on('message', (msg, rinfo) => {
      const out = reply(msg, false)
      if (out !== null) sock.send(out, rinfo.port, rinfo.address)
    })
    await new Promise<void>((resolve) => sock.bind(port, host, resolve))
    t.teardown(() => new Promise<void>((resolve) => sock.close(() => resolve())))
  }
  if (opts.tcp !== false) {
    const srv = net.createServer((c) => {
      c.on('error', () => {})
      let buf = Buffer.alloc(0)
      c.on('data', (d) => {
        buf = Buffer.concat([buf, d])
        while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          const msg = buf.subarray(2, 2 + buf.readUInt16BE(0))
          buf = buf.subarray(2 + msg.length)
          const out = reply(msg, true)
          if (out !== null) {
            const len = Buffer.alloc(2)
            len.writeUInt16BE(out.length)
            c.write(Buffer.concat([len, out]))
          }
        }
      })
    })
    await new Promise<void>((resolve) => srv.listen(port, host, resolve))
    t.teardown(() => new Promise<void>((resolve) => srv.close(() => resolve())))
  }
  return { host, port, seen }
}

async function run (where: { host: string, port: number }, templates: LoadedTemplate[], udp: boolean, service = 'dns'): Promise<Awaited<ReturnType<typeof runTemplates>>> {
  return await runTemplates({ ...where, service, secure: false, udp, intrusive: false, timeoutMs: 6000 }, templates)
}

const VERSION: Answer = (q) => q.name === 'version.bind' && q.qclass === 3
  ? { flags: dnsPacket.AUTHORITATIVE_ANSWER, answers: [{ type: 'TXT', class: 'CH', name: 'version.bind', ttl: 0, data: '9.18.99-fake' }] }
  : { flags: 5 }

function template (t: Test, dns: string, id = 'user-dns'): LoadedTemplate {
  const r = loadTemplate(`id: ${id}\ninfo:\n  name: D\n  severity: low\n  tags: dns\ndns:\n${dns}`, 'x.yaml', OPTS)
  if (isRefusal(r)) t.fail(r.reason)
  return r as LoadedTemplate
}

function refused (dns: string, variables = ''): string {
  const r = loadTemplate(`id: user-dns\ninfo:\n  name: D\n  severity: low\n${variables}dns:\n${dns}`, 'x.yaml', OPTS)
  return isRefusal(r) ? r.reason : 'loaded'
}

test('the project\'s dns templates load and bind to DNS servers only', async (t) => {
  t.same(SET.refused, [])
  for (const id of ['dns-version-disclosure', 'dns-open-recursion']) {
    const tp = byId(id)
    t.ok(tp.tags.includes('dns'), `${id} is tagged dns`)
    t.same(tp.services, ['dns'])
    t.equal(templatesFor([tp], 5353, 'dns', false).length, 1, `${id} on a DNS server on any port`)
    t.equal(templatesFor([tp], 53, 'http', false).length, 0, `${id} never on another service`)
  }
})

test('dns-version-disclosure: a CHAOS TXT version.bind answer is a hit with the version, over UDP and over TCP', async (t) => {
  const s = await dnsServer(t, VERSION)
  t.match(await run(s, [byId('dns-version-disclosure')], true), { concluded: true, ran: 1, hits: [{ id: 'dns-version-disclosure', severity: 'info', extracted: ['9.18.99-fake'] }] })
  t.same(s.seen, [{ name: 'version.bind', type: 'TXT', qclass: 3, rd: false, tcp: false }], 'one CHAOS question, no recursion asked')
  t.match(await run(s, [byId('dns-version-disclosure')], false), { concluded: true, hits: [{ extracted: ['9.18.99-fake'] }] })
  t.equal(s.seen[1].tcp, true, 'a TCP port is asked over TCP')
})

test('dns-version-disclosure: REFUSED, an empty answer or silence are misses, never hits', async (t) => {
  const refusing = await dnsServer(t, () => ({ flags: 5 }))
  t.match(await run(refusing, [byId('dns-version-disclosure')], true), { concluded: true, hits: [] })
  const empty = await dnsServer(t, () => ({ flags: dnsPacket.AUTHORITATIVE_ANSWER }))
  t.match(await run(empty, [byId('dns-version-disclosure')], true), { concluded: true, hits: [] })
  const silent = await dnsServer(t, () => null)
  const started = Date.now()
  t.match(await run(silent, [byId('dns-version-disclosure')], true), { concluded: true, ran: 1, hits: [] })
  t.equal(silent.seen.length, 2, 'sent once more after no answer (retries: 1)')
  t.ok(Date.now() - started < 5000, 'within the tries, not the whole budget')
  t.match(await run(silent, [byId('dns-version-disclosure')], false), { concluded: true, ran: 1, hits: [] }, 'silent over TCP too')
  t.equal(silent.seen.filter((x) => x.tcp).length, 1, 'asked once over TCP')
})

test('dns-open-recursion: RA with a non-authoritative answer is a hit; REFUSED or an authoritative answer is none', async (t) => {
  const answer = (flags: number): Answer => (q) => q.name === 'example.com' && q.type === 'A'
    ? { flags, answers: [{ type: 'A', name: 'example.com', ttl: 300, data: '192.0.2.7' }] }
    : { flags: 5 }
  const open = await dnsServer(t, answer(dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE))
  t.match(await run(open, [byId('dns-open-recursion')], true), { concluded: true, hits: [{ id: 'dns-open-recursion', severity: 'medium', extracted: ['192.0.2.7'] }] })
  t.match(open.seen, [{ name: 'example.com', type: 'A', qclass: 1, rd: true }])
  const own = await dnsServer(t, answer(dnsPacket.RECURSION_AVAILABLE | dnsPacket.AUTHORITATIVE_ANSWER))
  t.match(await run(own, [byId('dns-open-recursion')], true), { concluded: true, hits: [] }, 'its own zone')
  const closed = await dnsServer(t, () => ({ flags: 5 }))
  t.match(await run(closed, [byId('dns-open-recursion')], true), { concluded: true, hits: [] })
  const noRa = await dnsServer(t, answer(0))
  t.match(await run(noRa, [byId('dns-open-recursion')], true), { concluded: true, hits: [] }, 'no RA flag')
})

test('parts and variables: raw as dig prints it, question, answer, ns, extra, rcode as a number', async (t) => {
  const s = await dnsServer(t, () => ({
    flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_DESIRED | 3,
    authorities: [{ type: 'SOA', name: 'example.org', ttl: 60, data: { mname: 'ns1.example.org', rname: 'hostmaster.example.org', serial: 7, refresh: 1, retry: 2, expire: 3, minimum: 4 } }],
    additionals: [{ type: 'A', name: 'ns1.example.org', ttl: 60, data: '192.0.2.53' }]
  }))
  const tp = template(t, [
    '  - name: "{{to_lower(\'NoSuch\')}}.example.org"', '    type: MX', '    matchers-condition: and', '    matchers:',
    '      - type: dsl', '        dsl: ["rcode == 3", "rcode > 2"]', '        condition: and',
    '      - type: word', '        part: question', '        words: [";nosuch.example.org.\\t\\tIN\\tMX"]',
    '      - type: word', '        part: ns', '        words: ["example.org.\\t60\\tIN\\tSOA\\tns1.example.org. hostmaster.example.org. 7 1 2 3 4"]',
    '      - type: word', '        part: extra', '        words: ["ns1.example.org.\\t60\\tIN\\tA\\t192.0.2.53"]',
    '      - type: regex', '        regex: ["status: NXDOMAIN", "(?m)^;; flags: qr aa rd;"]', '        condition: and',
    '      - type: dsl', '        dsl: ["answer == \'\'", "contains(request, \'MX\')"]', '        condition: and',
    ''].join('\n'))
  const r = await run(s, [tp], true)
  t.match(r, { concluded: true, hits: [{ id: 'user-dns' }] })
  t.match(s.seen, [{ name: 'nosuch.example.org', type: 'MX', rd: true }], 'recursion desired by default')
})

test('class none and any go on the wire as 254 and 255; PTR of {{FQDN}} asks the address\'s reverse name', async (t) => {
  const s = await dnsServer(t, (q) => ({ flags: 0, answers: [{ type: 'TXT', name: q.name, ttl: 1, data: `class ${q.qclass}` }] }))
  const none = template(t, '  - name: probe.test\n    type: TXT\n    class: none\n    matchers:\n      - type: word\n        part: answer\n        words: ["class 254"]\n')
  t.match(await run(s, [none], true), { hits: [{ id: 'user-dns' }] })
  const any = template(t, '  - name: probe.test\n    type: ANY\n    class: any\n    matchers:\n      - type: word\n        words: ["class 255"]\n')
  t.match(await run(s, [any], true), { hits: [{ id: 'user-dns' }] })
  const ptr = template(t, '  - name: "{{FQDN}}"\n    type: PTR\n    matchers:\n      - type: word\n        part: answer\n        words: ["TXT"]\n')
  await run(s, [ptr], true)
  t.equal(s.seen[s.seen.length - 1].name, reverseName(s.host))
  t.equal(reverseName('192.0.2.1'), '1.2.0.192.in-addr.arpa')
  t.equal(reverseName('2001:db8::1'), '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa')
})

test('a truncated UDP reply is asked again over TCP', async (t) => {
  const s = await dnsServer(t, (q) => q.tcp
    ? { flags: 0, answers: [{ type: 'TXT', class: 'CH', name: 'version.bind', ttl: 0, data: 'whole-over-tcp' }] }
    : { flags: dnsPacket.TRUNCATED_RESPONSE })
  t.match(await run(s, [byId('dns-version-disclosure')], true), { hits: [{ extracted: ['whole-over-tcp'] }] })
  t.same(s.seen.map((x) => x.tcp), [false, true])
})

test('reaching nothing: a closed TCP port is no verdict; on a UDP port only dns templates run', async (t) => {
  const host = loopbackAddress()
  const port = await freePort(host)
  t.match(await run({ host, port }, [byId('dns-version-disclosure')], false), { concluded: false, hits: [] })
  const nats = SET.templates.find((x) => x.id === 'nats-no-auth') as LoadedTemplate
  const s = await dnsServer(t, VERSION)
  t.match(await run(s, [nats], true, 'nats'), { ran: 0, hits: [] })
})

test('what the dns protocol refuses at load, with a reason', async (t) => {
  const M = '    matchers:\n      - type: word\n        words: [x]\n'
  t.match(refused(`  - name: example.org\n    type: AXFR\n${M}`), /AXFR is not supported/)
  t.match(refused(`  - name: "{{FQDN}}"\n    type: A\n${M}`), /drawn from the target, which here is an address/)
  t.match(refused(`  - name: "www.{{Hostname}}"\n    type: A\n${M}`), /drawn from the target/)
  t.match(refused(`  - name: "{{zone}}"\n    type: TXT\n${M}`, 'variables:\n  zone: "{{to_lower(Host)}}"\n'), /drawn from the target/, 'through a variable too')
  t.match(refused(`  - name: x.test\n    type: HINFO2\n${M}`), /type "HINFO2" is not supported/)
  t.match(refused(`  - name: x.test\n    class: internet\n${M}`), /class "internet" is not one of/)
  t.match(refused(`  - name: x.test\n    resolvers: [192.0.2.1]\n${M}`), /resolvers is not supported/)
  t.match(refused(`  - name: x.test\n    trace: true\n${M}`), /trace is not supported/)
  t.match(refused('  - name: x.test\n    matchers:\n      - type: word\n        part: header\n        words: [x]\n'), /part "header" does not exist in a dns exchange/)
  t.match(refused('  - name: x.test\n    matchers:\n      - type: word\n        part: answer\n        words: [x]\n        negative: true\n'), /match an empty or absent reply/)
  t.match(refused('  - name: x.test\n    retries: 9\n' + M), /retries must be 0-5/)
  t.match(refused('  - type: A\n' + M), /name is missing/)
  t.match(refused(`  - name: x.test\n${M}`, 'tcp:\n  - inputs: [{data: x}]\n'), /dns and tcp requests in one template/)
})

/** Ready when a question over UDP gets an answer: accepting TCP alone does not show the UDP listener answers yet. */
async function answersUdp ({ host, port }: { host: string, port: number }): Promise<boolean> {
  const sock = dgram.createSocket('udp4')
  try {
    return await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 500)
      sock.on('error', () => resolve(false))
      sock.on('message', () => { clearTimeout(timer); resolve(true) })
      sock.send(dnsPacket.encode({ type: 'query', id: 7, questions: [{ type: 'TXT', class: 'CH', name: 'version.bind' }] }), port, host)
    })
  } finally {
    sock.close()
  }
}

/** BIND 9 with a configuration of its own: a free port, no recursion, a version string this test knows. */
function namedSpec (version: string): DaemonSpec {
  return {
    pkg: 'bind9',
    binary: '/usr/sbin/named',
    interfaceAddress: true,
    files: ({ host, port, dir }) => ({
      'named.conf': ['options {', `  directory "${dir}";`, `  listen-on port ${port} { ${host}; };`, '  listen-on-v6 { none; };',
        '  pid-file none;', '  session-keyfile none;', '  recursion no;', '  dnssec-validation no;', `  version "${version}";`, '};',
        'controls { };', ''].join('\n')
    }),
    args: ({ dir }) => ['-g', '-c', path.join(dir, 'named.conf')],
    ready: async (ctx) => await accepts(ctx.host, ctx.port) && await answersUdp(ctx),
    startMs: 20_000
  }
}

test('BIND 9: the configured version is disclosed over UDP and TCP; without recursion it is no open resolver', { skip: daemonUnavailable('/usr/sbin/named', 'bind9') }, async (t) => {
  const d = await startDaemon(namedSpec('vulnscan-test-9.9'))
  t.teardown(d.stop)
  const tps = [byId('dns-version-disclosure'), byId('dns-open-recursion')]
  t.match(await run(d, tps, true), { concluded: true, ran: 2, hits: [{ id: 'dns-version-disclosure', extracted: ['vulnscan-test-9.9'] }] })
  const tcp = await run(d, tps, false)
  t.match(tcp, { concluded: true, hits: [{ id: 'dns-version-disclosure', extracted: ['vulnscan-test-9.9'] }] })
  t.equal(tcp.hits.length, 1, 'recursion no: no open-recursion hit')
})

test('dnsmasq: its version is disclosed; with no upstream servers it resolves nothing for anyone', { skip: daemonUnavailable('/usr/sbin/dnsmasq', 'dnsmasq-base') }, async (t) => {
  // --no-resolv and no --server: dnsmasq has nowhere to forward, so no question ever leaves the machine.
  const d = await startDaemon({ ...dnsmasq(), ready: answersUdp })
  t.teardown(d.stop)
  const want = `dnsmasq-${d.packageVersion.replace(/-.*$/, '')}`
  const tps = [byId('dns-version-disclosure'), byId('dns-open-recursion')]
  for (const udp of [true, false]) {
    const r = await run(d, tps, udp)
    t.match(r, { concluded: true, ran: 2, hits: [{ id: 'dns-version-disclosure', extracted: [want] }] }, udp ? 'UDP' : 'TCP')
    t.equal(r.hits.length, 1, 'no open-recursion hit')
  }
})
