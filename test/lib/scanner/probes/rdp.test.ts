import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { xrdp } from '../../../../bench/support/daemon-specs'
import { complete, connectionRequest, parse } from '../../../../lib/scanner/probes/rdp'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

test('the Connection Request: TPKT, X.224 CR, RDP_NEG_REQ for TLS and CredSSP', async (t) => {
  t.equal(connectionRequest().toString('hex'), '030000130e' + 'e00000000000' + '010008000b000000')
})

test('Connection Confirms: the security the server picked or its refusal; anything else is not RDP', async (t) => {
  // Debian 12's xrdp 0.9.21 answering connectionRequest() with TLS, and a Connection Request without negotiation.
  const tls = Buffer.from('030000130ed000001234000201080001000000', 'hex')
  t.ok(complete(tls))
  t.notOk(complete(tls.subarray(0, 10)))
  t.same(parse(tls), { service: 'rdp', extraInfo: 'security TLS' })
  t.same(parse(Buffer.from('0300000b06d00000123400', 'hex')), { service: 'rdp', extraInfo: 'no security negotiation (standard RDP security)' })
  const nla = Buffer.from(tls)
  nla.writeUInt32LE(2, 15)
  t.same(parse(nla), { service: 'rdp', extraInfo: 'security CredSSP (NLA)' })
  const refused = Buffer.from(tls)
  refused[11] = 3
  refused.writeUInt32LE(5, 15)
  t.same(parse(refused), { service: 'rdp', extraInfo: 'negotiation refused: CredSSP (NLA) required by server' })
  t.equal(parse(Buffer.from('030000130ee000001234000201080001000000', 'hex')), null, 'a Connection Request is no confirm')
  t.equal(parse(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n')), null)
})

test('xrdp from Debian: RDP and the security it picked, no product (the confirm names none)', { skip: daemonUnavailable('/usr/sbin/xrdp', 'xrdp') }, async (t) => {
  const d = await startDaemon(xrdp())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'full' })
  t.match(r, { service: 'rdp', extraInfo: 'security TLS', cpe: [] })
  t.equal(r.product, undefined)
})
