import net from 'node:net'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { ejabberd, prosody } from '../../../../bench/support/daemon-specs'
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

/** What an XMPP server answers to a client stream opened to `domain` (and `then`, sent with it), read until `done` holds. */
async function openStream (host: string, port: number, domain: string, then = '', done = complete): Promise<Buffer> {
  return await new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const sock = net.connect({ host, port }, () => sock.write(Buffer.concat([request(domain), Buffer.from(then)])))
    sock.setTimeout(10_000, () => { sock.destroy(); reject(new Error(`no complete answer: ${Buffer.concat(chunks).toString()}`)) })
    sock.on('data', (d: Buffer) => {
      chunks.push(d)
      if (done(Buffer.concat(chunks))) { sock.destroy(); resolve(Buffer.concat(chunks)) }
    })
    sock.on('error', reject)
  })
}

// ejabberd 23.01 names itself only in the entity capabilities of the features after authentication
// (its mod_caps hooks c2s_post_auth_features); a version query before it ends the stream (here, with STARTTLS required,
// policy-violation; not-authorized where TLS is optional).
test('Debian\'s ejabberd: XMPP, no product or version since none shows before authentication', { skip: daemonUnavailable('/usr/sbin/ejabberdctl', 'ejabberd') }, async (t) => {
  const d = await startDaemon(ejabberd())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'full' })
  t.equal(r.service, 'xmpp')
  t.equal(r.product, undefined)
  t.equal(r.version, undefined)
  t.same(r.cpe, [])
  t.match(r.banner, /xmlns:stream='http:\/\/etherx\.jabber\.org\/streams'/)
  // Its own domain: the features Debian's configuration gives (STARTTLS required), still no product.
  const reply = await openStream(d.host, d.port, 'vulnscan.test')
  t.match(reply.toString(), /<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required\/><\/starttls>/)
  t.same(parse(reply), { service: 'xmpp', extraInfo: 'domain vulnscan.test; STARTTLS offered' })
  const version = await openStream(d.host, d.port, 'vulnscan.test', "<iq type='get' id='v1' to='vulnscan.test'><query xmlns='jabber:iq:version'/></iq>",
    (b) => b.toString().includes('</stream:stream>'))
  t.match(version.toString(), /<\/stream:features><stream:error><(?:policy-violation|not-authorized) /)
  t.notMatch(version.toString(), /jabber:iq:version/)
})
