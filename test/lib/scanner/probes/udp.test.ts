import { test } from 'tap'
import { aliasesFor } from '../../../../lib/cpe/aliases'
import { buildUdpRegistry, UDP_PROBES, UDP_REGISTRY } from '../../../../lib/scanner/probes/udp/index'
import * as dns from '../../../../lib/scanner/probes/udp/dns'
import * as ntp from '../../../../lib/scanner/probes/udp/ntp'
import * as snmp from '../../../../lib/scanner/probes/udp/snmp'
import * as memcached from '../../../../lib/scanner/probes/udp/memcached'

test('every product a UDP probe can report has a CPE mapping; names are unique', async (t) => {
  const missing = UDP_PROBES.flatMap((p) => p.products.filter((product) => aliasesFor(product).length === 0).map((x) => `${p.name}: ${x}`))
  t.same(missing, [])
  t.throws(() => buildUdpRegistry([UDP_PROBES[0], UDP_PROBES[0]]), /two UDP probes are named/)
  t.equal(UDP_REGISTRY.forPort(53)?.name, 'dns')
  t.equal(UDP_REGISTRY.forPort(123)?.name, 'ntp')
  t.equal(UDP_REGISTRY.forPort(161)?.name, 'snmp')
  t.equal(UDP_REGISTRY.forPort(11211)?.name, 'memcached')
  t.equal(UDP_REGISTRY.forPort(9), undefined, 'no probe: an empty datagram')
})

test('SNMP GetRequest bytes, and a response read back', async (t) => {
  // A v2c GetRequest of sysDescr.0 with community public and request id 1, as RFC 3416 encodes it.
  t.equal(snmp.getRequest([snmp.SYS_DESCR], 'public', 1).toString('hex'),
    '302602010104067075626c6963a019020101020100020100300e300c06082b060102010101000500')
  t.equal(snmp.getRequest([snmp.VERSION_TAG]).subarray(-14).toString('hex'), '060a2b060104018f656402000500', 'sub-identifiers above 127 take two bytes')
  // A response built the same way (tag 0xa2), with sysDescr, a Net-SNMP sysObjectID and versionTag.
  const req = snmp.request()
  t.equal(req[0], 0x30)
  const oct = (s: string): Buffer => Buffer.concat([Buffer.from([0x04, s.length]), Buffer.from(s)])
  const oidBytes = Buffer.from('06082b06010201010100', 'hex')
  const objIdName = Buffer.from('06082b06010201010200', 'hex')
  const tagName = Buffer.from('060a2b060104018f65640200', 'hex')
  const vb = (name: Buffer, value: Buffer): Buffer => Buffer.concat([Buffer.from([0x30, name.length + value.length]), name, value])
  const netSnmpOid = Buffer.from('060a2b06010401bf0803020a', 'hex')
  const varbinds = Buffer.concat([vb(oidBytes, oct('Linux box 6.1.0 x86_64')), vb(objIdName, netSnmpOid), vb(tagName, oct('5.9.3'))])
  const pdu = Buffer.concat([Buffer.from('020101020100020100', 'hex'), Buffer.from([0x30, varbinds.length]), varbinds])
  const body = Buffer.concat([Buffer.from('020101', 'hex'), oct('public'), Buffer.from([0xa2, pdu.length]), pdu])
  const msg = Buffer.concat([Buffer.from([0x30, body.length]), body])
  t.same(snmp.parse(msg), {
    service: 'snmp', product: 'Net-SNMP', version: '5.9.3',
    extraInfo: 'SNMPv2c community public; sysDescr "Linux box 6.1.0 x86_64"; sysObjectID 1.3.6.1.4.1.8072.3.2.10'
  })
  // Another agent's sysObjectID: no product, whatever sysDescr says.
  const cisco = Buffer.from(msg.toString('hex').replace('2b06010401bf0803020a', '2b06010401090c0c0c0c'), 'hex')
  t.same(snmp.parse(cisco), { service: 'snmp', extraInfo: 'SNMPv2c community public; sysDescr "Linux box 6.1.0 x86_64"; sysObjectID 1.3.6.1.4.1.9.12.12.12.12' })
  t.equal(snmp.parse(req), null, 'a request is not a response')
  t.equal(snmp.parse(msg.subarray(0, 20)), null, 'truncated')
  t.equal(snmp.parse(Buffer.from('hello')), null)
})

test('NTP: request header, a server reply, and what is not one', async (t) => {
  const req = ntp.request(0)
  t.equal(req.length, 48)
  t.equal(req[0], 0x23, 'LI 0, version 4, mode 3')
  const reply = Buffer.alloc(48)
  reply[0] = (0 << 6) | (4 << 3) | 4
  reply[1] = 2
  Buffer.from([192, 0, 2, 1]).copy(reply, 12)
  t.same(ntp.parse(reply), { service: 'ntp', extraInfo: 'NTPv4, stratum 2, refid 192.0.2.1' })
  reply[1] = 1
  Buffer.from('GPS\0').copy(reply, 12)
  t.same(ntp.parse(reply), { service: 'ntp', extraInfo: 'NTPv4, stratum 1, refid GPS' })
  reply[0] = (3 << 6) | (4 << 3) | 4
  reply[1] = 0
  Buffer.from('RATE').copy(reply, 12)
  t.same(ntp.parse(reply), { service: 'ntp', extraInfo: 'NTPv4, stratum 0, kiss code RATE, unsynchronised' })
  t.equal(ntp.parse(req), null, 'a client request is not an answer')
  t.equal(ntp.parse(reply.subarray(0, 40)), null)
})

test('DNS and memcached over UDP: framing', async (t) => {
  const q = dns.request()
  t.equal(q.readUInt16BE(4), 1, 'one question, no TCP length prefix')
  // dnsmasq 2.90's answer (the TCP capture of probes/dns.test.ts without its length prefix).
  const answer = Buffer.from('7653848000010001000000000776657273696f6e0462696e640000100003c00c0010000300000000000d0c646e736d6173712d322e3930', 'hex')
  t.same(dns.parse(answer), { service: 'dns', product: 'dnsmasq', version: '2.90' })
  t.equal(dns.parse(Buffer.from('nope')), null)
  const m = memcached.request()
  t.same([...m.subarray(0, 8)], [0x56, 0x53, 0, 0, 0, 1, 0, 0])
  t.same(memcached.parse(Buffer.concat([m.subarray(0, 8), Buffer.from('VERSION 1.6.18\r\n')])), { service: 'memcached', product: 'memcached', version: '1.6.18' })
  t.equal(memcached.parse(Buffer.concat([Buffer.from([1, 2, 0, 0, 0, 1, 0, 0]), Buffer.from('VERSION 1.6.18\r\n')])), null, 'another request id')
})
