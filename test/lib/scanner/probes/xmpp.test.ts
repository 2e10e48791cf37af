import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { prosody } from '../../../../bench/support/daemon-specs'
import { complete, parse, request } from '../../../../lib/scanner/probes/xmpp'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

test('stream header and features; a product only from an entity-capabilities node', async (t) => {
  t.match(request('example.org').toString(), /^<\?xml version='1\.0'\?><stream:stream to='example\.org' /)
  // Prosody 0.12 (Debian 12) without TLS, encryption not required.
  const prosody = Buffer.from("<?xml version='1.0'?><stream:stream xmlns:stream='http://etherx.jabber.org/streams' xmlns='jabber:client' version='1.0' xml:lang='en' id='42aae705' from='vulnscan.test'>" +
    "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>SCRAM-SHA-1</mechanism><mechanism>PLAIN</mechanism></mechanisms></stream:features>")
  t.ok(complete(prosody))
  t.same(parse(prosody), { service: 'xmpp', extraInfo: 'domain vulnscan.test; SASL SCRAM-SHA-1, PLAIN' })
  const ejabberd = Buffer.from("<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='1' from='example.org' version='1.0'>" +
    "<stream:features><c xmlns='http://jabber.org/protocol/caps' hash='sha-1' node='https://www.process-one.net/en/ejabberd/' ver='x'/>" +
    "<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/></stream:features>")
  t.same(parse(ejabberd), { service: 'xmpp', product: 'ejabberd', extraInfo: 'domain example.org; STARTTLS offered' })
  t.equal(parse(Buffer.from('<html><body>hello</body></html>')), null)
})

test('Debian\'s Prosody: XMPP, and no product since it names none', { skip: daemonUnavailable('/usr/bin/prosody', 'prosody') }, async (t) => {
  const d = await startDaemon(prosody())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'full' })
  t.equal(r.service, 'xmpp')
  t.equal(r.product, undefined)
  t.match(r.banner, /xmlns:stream='http:\/\/etherx\.jabber\.org\/streams'/)
})
