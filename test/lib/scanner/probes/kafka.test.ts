// Kafka is not packaged by Debian: the broker's answer is the ApiVersions v0 response a Kafka client recorded
// from a real broker (test/fixtures/banners/kafka-apiversions-v0.bin, source beside it), replayed by a server
// that answers only a well-formed ApiVersions v0 request and closes on anything else, as a broker does.
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { CORRELATION_ID, complete, parse, parseApiVersions, request } from '../../../../lib/scanner/probes/kafka'
import { REGISTRY } from '../../../../lib/scanner/probes/index'
import { replayServer, type Answer } from '../../../support/replay-server'

const FIXTURES = path.join(__dirname, '../../../fixtures/banners')
const fixture = (name: string): Buffer => fs.readFileSync(path.join(FIXTURES, name))

/** A broker's response frame: size prefix, the request's correlation id, then the recorded body. */
function response (recorded: Buffer, correlationId: number): Buffer {
  const head = Buffer.alloc(8)
  head.writeInt32BE(recorded.length, 0)
  head.writeInt32BE(correlationId, 4)
  return Buffer.concat([head, recorded.subarray(4)])
}

/** The broker side: frame by the size prefix; ApiVersions (18) version 0 is answered, anything else closed. */
function broker (recorded: Buffer) {
  return (bytes: Buffer): Answer => {
    if (bytes.length < 4) return undefined
    const size = bytes.readInt32BE(0)
    if (size < 8 || size > 1024 * 1024) return 'close'
    if (bytes.length < 4 + size) return undefined
    if (bytes.readInt16BE(4) !== 18 || bytes.readInt16BE(6) !== 0) return 'close'
    return { send: response(recorded, bytes.readInt32BE(8)), rest: bytes.subarray(4 + size) }
  }
}

test('the request is ApiVersions v0 with a client id, framed by its size', async (t) => {
  t.equal(request.readInt32BE(0), request.length - 4)
  t.equal(request.readInt16BE(4), 18, 'api key ApiVersions')
  t.equal(request.readInt16BE(6), 0, 'version 0, which every broker answers')
  t.equal(request.readInt32BE(8), CORRELATION_ID)
  t.equal(request.subarray(14).toString(), 'vulnscan')
  t.equal(request.readInt16BE(12), 8)
})

test('the recorded broker answer: Kafka, no version (ApiVersions names none)', async (t) => {
  const reply = response(fixture('kafka-apiversions-v0.bin'), CORRELATION_ID)
  t.ok(complete(reply))
  t.notOk(complete(reply.subarray(0, reply.length - 1)))
  t.same(parse(reply), { service: 'kafka', product: 'Kafka', extraInfo: 'ApiVersions: 10 API keys' })
  t.same(parseApiVersions(reply)?.apis.slice(0, 2), [{ key: 0, min: 0, max: 9 }, { key: 1, min: 0, max: 13 }])
})

test('an UNSUPPORTED_VERSION answer still says Kafka', async (t) => {
  // Kayrock's "deserializes error response" frame (same file and commit as the fixture): error 35, no keys.
  const refused = response(Buffer.from([0, 0, 0, 1, 0, 35, 0, 0, 0, 0]), CORRELATION_ID)
  t.same(parse(refused), { service: 'kafka', product: 'Kafka', extraInfo: 'ApiVersions v0 refused (UNSUPPORTED_VERSION)' })
})

test('strict: another correlation id, a short frame, impossible ranges and other protocols are not Kafka', async (t) => {
  const recorded = fixture('kafka-apiversions-v0.bin')
  t.equal(parse(response(recorded, 0)), null, 'the captured id 0 is not ours')
  const reply = response(recorded, CORRELATION_ID)
  t.equal(parse(reply.subarray(0, reply.length - 6)), null, 'truncated')
  const longer = Buffer.from(reply)
  longer.writeInt32BE(longer.readInt32BE(0) + 4, 0)
  t.equal(parse(Buffer.concat([longer, Buffer.alloc(4)])), null, 'array and frame size disagree (a v1 throttle field)')
  const noError = Buffer.from(reply)
  noError.writeInt16BE(-1, 8)
  t.equal(parse(noError), null, 'UNKNOWN_SERVER_ERROR is not an ApiVersions answer')
  // IBM/sarama api_versions_response_test.go (commit 0b241929e687bc4ab1e7718c1d9162753f82f30b), apiVersionResponse:
  // a decoder test vector, key 3 with min 2 above max 1, which no broker sends.
  t.equal(parse(response(Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 3, 0, 2, 0, 1]), CORRELATION_ID)), null)
  for (const other of ['mariadb-greeting.bin', 'redis-info-server.bin', 'nats-info.bin', 'rabbitmq-connection-start.bin',
    'postgresql-unknown-role.bin', 'epmd-names.bin', 'mosquitto-connack-sys-version.bin', 'cassandra-supported.bin',
    'tls-openssl-server-hello.bin']) {
    t.equal(parse(fixture(other)), null, `${other} is not Kafka`)
  }
})

test('the detection engine finds the recorded broker on an unknown port', async (t) => {
  const s = await replayServer(broker(fixture('kafka-apiversions-v0.bin')))
  t.teardown(s.close)
  const r = await detectService({ host: s.host, port: s.port, level: 'full' })
  t.match(r, { service: 'kafka', product: 'Kafka', extraInfo: 'ApiVersions: 10 API keys' })
  t.notOk('version' in r, 'no version: the wire shows none')
  t.same(r.cpe, ['cpe:2.3:a:apache:kafka:*:*:*:*:*:*:*:*'])
  t.ok(s.seen.some((b) => b.equals(request)), 'the broker was asked ApiVersions v0')
  const light = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.equal(light.service, 'unknown', 'light detection does not try Kafka on a port that is not its own')
})

test('Kafka is a port-9092 probe and the protocol inside TLS on 9093', async (t) => {
  t.ok(REGISTRY.byName.get('kafka')?.ports.includes(9092))
  t.equal(REGISTRY.insideTls.get(9093)?.name, 'kafka')
  t.ok(REGISTRY.tlsFirstPorts.has(9093))
})

test('a server that answers every request with a Kafka frame of another id is not Kafka', async (t) => {
  const s = await replayServer((bytes) => bytes.length ? { send: response(fixture('kafka-apiversions-v0.bin'), 7) } : undefined)
  t.teardown(s.close)
  const r = await detectService({ host: s.host, port: s.port, level: 'full' })
  t.not(r.service, 'kafka')
})
