import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { dnsmasq } from '../../../../bench/support/daemon-specs'
import { complete, identify, parse, versionQuery } from '../../../../lib/scanner/probes/dns'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

const upstream = (v: string): string => v.replace(/^\d+:/, '').replace(/[-+~].*$/, '')

test('the version.bind query: CHAOS TXT, framed for TCP', async (t) => {
  const q = versionQuery()
  t.equal(q.readUInt16BE(0), q.length - 2)
  t.match(q.subarray(14).toString('latin1'), /^\x07version\x04bind\x00\x00\x10\x00\x03$/)
})

test('answers: dnsmasq (captured from Debian\'s dnsmasq 2.90), BIND\'s packaging, refusals', async (t) => {
  // dnsmasq 2.90 (Debian 12 dnsmasq-base) answering versionQuery() over TCP.
  const dnsmasq = Buffer.from('00377653848000010001000000000776657273696f6e0462696e640000100003c00c0010000300000000000d0c646e736d6173712d322e3930', 'hex')
  t.ok(complete(dnsmasq))
  t.same(parse(dnsmasq), { service: 'dns', product: 'dnsmasq', version: '2.90' })
  t.same(identify('9.18.49-1~deb12u3-Debian'), { service: 'dns', product: 'ISC BIND', version: '9.18.49', distro: 'deb12u3', extraInfo: 'packaging 1~deb12u3-Debian' })
  t.same(identify('9.16.50'), { service: 'dns', product: 'ISC BIND', version: '9.16.50' })
  t.same(identify('unbound 1.17.1'), { service: 'dns', product: 'Unbound', version: '1.17.1' })
  t.same(identify('none of your business'), { service: 'dns', extraInfo: 'version.bind "none of your business"' }, 'no product guessed')
  const refused = Buffer.from(dnsmasq.subarray(0, 2 + 30))
  refused.writeUInt16BE(30, 0)
  refused.writeUInt16BE(0x8485, 4)
  refused.writeUInt16BE(0, 8)
  t.same(parse(refused), { service: 'dns', extraInfo: 'version query REFUSED' })
  t.equal(parse(Buffer.from('SSH-2.0-OpenSSH_9.2p1\r\n')), null)
})

test('dnsmasq from Debian over TCP', { skip: daemonUnavailable('/usr/sbin/dnsmasq', 'dnsmasq-base') }, async (t) => {
  const d = await startDaemon(dnsmasq())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'full' })
  t.match(r, { service: 'dns', product: 'dnsmasq', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:thekelleys:dnsmasq:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})
