// Cassandra is not packaged by Debian: the server's answer is a SUPPORTED body recorded from real CQL traffic
// (test/fixtures/banners/cassandra-supported.bin, source beside it), framed as the native protocol v4
// specification says and replayed by a server that answers only an OPTIONS frame and closes on anything else.
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { complete, parse, parseSupported, request, STREAM, stringMultimap } from '../../../../lib/scanner/probes/cassandra'
import { REGISTRY } from '../../../../lib/scanner/probes/index'
import { replayServer, type Answer } from '../../../support/replay-server'

const FIXTURES = path.join(__dirname, '../../../fixtures/banners')
const fixture = (name: string): Buffer => fs.readFileSync(path.join(FIXTURES, name))

/** A v4 response frame (native_protocol_v4.spec section 2): 0x84, flags, stream, opcode, length, body. */
function frame (opcode: number, stream: number, body: Buffer, version = 0x84): Buffer {
  const h = Buffer.alloc(9)
  h[0] = version
  h.writeInt16BE(stream, 2)
  h[4] = opcode
  h.writeInt32BE(body.length, 5)
  return Buffer.concat([h, body])
}

/** The server side: a 9-byte request header of protocol v4 framing the body; OPTIONS (5) is answered. */
function cassandra (supported: Buffer) {
  return (bytes: Buffer): Answer => {
    if (bytes.length < 9) return undefined
    if (bytes[0] !== 0x04) return 'close'
    const len = bytes.readInt32BE(5)
    if (len < 0 || len > 1024 * 1024) return 'close'
    if (bytes.length < 9 + len) return undefined
    if (bytes[4] !== 0x05) return 'close'
    return { send: frame(0x06, bytes.readInt16BE(2), supported), rest: bytes.subarray(9 + len) }
  }
}

test('the request is OPTIONS in a v4 frame with an empty body', async (t) => {
  t.same([...request], [0x04, 0, STREAM >> 8, STREAM & 0xff, 0x05, 0, 0, 0, 0])
})

test('the recorded SUPPORTED answer: Cassandra, the CQL version as extra info, no version', async (t) => {
  const body = fixture('cassandra-supported.bin')
  const reply = frame(0x06, STREAM, body)
  t.ok(complete(reply))
  t.notOk(complete(reply.subarray(0, reply.length - 1)))
  t.same(parse(reply), {
    service: 'cassandra', product: 'Cassandra', extraInfo: 'CQL 3.4.4; protocol versions 3/v3, 4/v4, 5/v5-beta'
  })
  t.same(Object.fromEntries(stringMultimap(body) ?? []), {
    PROTOCOL_VERSIONS: ['3/v3', '4/v4', '5/v5-beta'], COMPRESSION: ['snappy', 'lz4'], CQL_VERSION: ['3.4.4']
  })
})

test('strict: another stream, a request frame, compression, other opcodes and a ragged body are refused', async (t) => {
  const body = fixture('cassandra-supported.bin')
  t.equal(parse(frame(0x06, 0, body)), null, 'stream 0 is not ours')
  t.equal(parse(frame(0x06, STREAM, body, 0x04)), null, 'no response bit')
  const compressed = frame(0x06, STREAM, body)
  compressed[1] = 0x01
  t.equal(parse(compressed), null, 'compressed frame')
  t.equal(parse(frame(0x08, STREAM, body)), null, 'RESULT is not SUPPORTED')
  t.equal(parse(frame(0x06, STREAM, Buffer.concat([body, Buffer.from([0])]))), null, 'a byte after the multimap')
  t.equal(parse(frame(0x06, STREAM, body.subarray(0, body.length - 2))), null, 'a string cut short')
  // The same recording's AUTHENTICATE body (pixie stitcher_test.cc kAuthenticateResp) put in a SUPPORTED frame.
  const authenticator = Buffer.concat([Buffer.from([0, 0x2f]), Buffer.from('org.apache.cassandra.auth.PasswordAuthenticator')])
  t.equal(parse(frame(0x06, STREAM, authenticator)), null, 'not a multimap naming CQL_VERSION')
  t.equal(parseSupported(frame(0x03, STREAM, authenticator)), null)
  for (const other of ['mariadb-greeting.bin', 'redis-info-server.bin', 'nats-info.bin', 'rabbitmq-connection-start.bin',
    'postgresql-unknown-role.bin', 'epmd-names.bin', 'mosquitto-connack-sys-version.bin', 'kafka-apiversions-v0.bin',
    'tls-openssl-server-hello.bin', 'cassandra-supported.bin']) {
    t.equal(parse(fixture(other)), null, `${other} (unframed) is not a SUPPORTED frame`)
  }
})

test('ScyllaDB, which adds SCYLLA_* options to the same answer, is not called Cassandra', async (t) => {
  // The recorded body with one more entry in the multimap: the count goes from 3 to 4.
  const body = fixture('cassandra-supported.bin')
  const key = Buffer.from('SCYLLA_SHARD')
  const entry = Buffer.concat([Buffer.from([0, key.length]), key, Buffer.from([0, 1, 0, 1]), Buffer.from('0')])
  const scylla = Buffer.concat([Buffer.from([0, 4]), body.subarray(2), entry])
  const m = parse(frame(0x06, STREAM, scylla))
  t.equal(m?.service, 'cassandra')
  t.notOk(m?.product, 'no product claimed')
  t.match(m?.extraInfo, /ScyllaDB/)
})

test('the detection engine finds the recorded server on an unknown port', async (t) => {
  const s = await replayServer(cassandra(fixture('cassandra-supported.bin')))
  t.teardown(s.close)
  const r = await detectService({ host: s.host, port: s.port, level: 'full' })
  t.match(r, { service: 'cassandra', product: 'Cassandra', extraInfo: 'CQL 3.4.4; protocol versions 3/v3, 4/v4, 5/v5-beta' })
  t.notOk('version' in r, 'no version: the wire shows none')
  t.same(r.cpe, ['cpe:2.3:a:apache:cassandra:*:*:*:*:*:*:*:*'])
  t.ok(s.seen.some((b) => b.equals(request)), 'the server was asked OPTIONS')
  t.equal(REGISTRY.byName.get('cassandra')?.ports[0], 9042)
})

test('a server answering every probe with the Cassandra frame is Cassandra: the Kafka probe, tried first, refuses it', async (t) => {
  const c = await replayServer((bytes) => bytes.length ? { send: frame(0x06, STREAM, fixture('cassandra-supported.bin')), end: true } : undefined)
  t.teardown(c.close)
  t.equal((await detectService({ host: c.host, port: c.port, level: 'full' })).service, 'cassandra')
})
