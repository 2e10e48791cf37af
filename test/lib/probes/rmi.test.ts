// JRMP against the ProtocolAck recorded from Debian's rmiregistry (fixture's .source.txt).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { complete, parse, request } from '../../../lib/scanner/probes/rmi'

const ack = readFileSync(path.join(__dirname, '../../fixtures/banners/rmiregistry-17-protocol-ack.bin'))

t.test('JRMI, version 2, stream protocol', async (t) => {
  t.equal(request.toString('hex'), '4a524d4900024b')
})

t.test('rmiregistry 17: ProtocolAck with the endpoint it sees', async (t) => {
  t.ok(complete(ack))
  t.notOk(complete(ack.subarray(0, 6)))
  t.same(parse(ack), { service: 'java-rmi', extraInfo: 'JRMP ProtocolAck; sees the client as 127.0.0.1:57932' })
  t.same(parse(Buffer.from([0x4f])), { service: 'java-rmi', extraInfo: 'stream protocol not supported' })
  t.equal(parse(Buffer.from('N\x00\x05hello')), null, 'truncated')
  t.equal(parse(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n')), null)
  t.equal(parse(Buffer.concat([ack, Buffer.from('x')])), null, 'trailing bytes: not an ack')
})
