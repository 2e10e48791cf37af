import fs from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { clientHello, complete, looksLikeTls, parse } from '../../../../lib/scanner/probes/tls'

const fixture = (name: string): Buffer => fs.readFileSync(path.join(__dirname, '../../../fixtures/banners', name))

test('ClientHello record layout, with and without SNI', async (t) => {
  const hello = clientHello('example.com')
  t.equal(hello[0], 0x16)
  t.equal(hello.readUInt16BE(3), hello.length - 5)
  t.equal(hello[5], 1, 'handshake type client_hello')
  t.ok(hello.includes(Buffer.from('example.com')))
  t.notOk(clientHello().includes(Buffer.from('example.com')))
})

test('ServerHello from openssl s_server (captured answer to our ClientHello)', async (t) => {
  const reply = fixture('tls-openssl-server-hello.bin')
  t.ok(looksLikeTls(reply))
  t.ok(complete(reply))
  t.same(parse(reply), { service: 'tls', extraInfo: 'TLSv1.2; cipher 0xc02f' })
})

test('alerts', async (t) => {
  t.same(parse(Buffer.from([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x46])), { service: 'tls', extraInfo: 'alert protocol_version' })
  t.same(parse(Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28])), { service: 'tls', extraInfo: 'alert handshake_failure' })
})

test('truncated and foreign bytes', async (t) => {
  const reply = fixture('tls-openssl-server-hello.bin')
  t.notOk(complete(reply.subarray(0, 30)))
  t.same(parse(reply.subarray(0, 30)), { service: 'tls', extraInfo: 'truncated ServerHello' })
  t.equal(parse(Buffer.from('HTTP/1.1 400 Bad Request\r\n')), null)
  t.equal(parse(Buffer.from([0x16, 0x03, 0x09, 0, 5, 2, 0, 0, 1, 3])), null)
  t.equal(parse(Buffer.from([0x15, 0x03, 0x01, 0x00, 0x02, 0x07, 0x46])), null, 'bad alert level')
})
