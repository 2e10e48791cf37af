import fs from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { complete, parse, parseFieldTable, request } from '../../../../lib/scanner/probes/amqp'

const fixture = (name: string): Buffer => fs.readFileSync(path.join(__dirname, '../../../fixtures/banners', name))

test('the probe is the AMQP 0-9-1 protocol header', async (t) => {
  t.same([...request], [0x41, 0x4d, 0x51, 0x50, 0, 0, 9, 1])
})

test('Connection.Start from the local RabbitMQ (captured)', async (t) => {
  const reply = fixture('rabbitmq-connection-start.bin')
  t.ok(complete(reply))
  const m = parse(reply)
  t.equal(m?.product, 'RabbitMQ')
  t.equal(m?.version, '3.10.8')
  t.match(m?.extraInfo, /^protocol 0-9; Erlang\/OTP \d+/)
})

test('field table decoding: nested tables, booleans, strings', async (t) => {
  const reply = fixture('rabbitmq-connection-start.bin')
  const tableLen = reply.readUInt32BE(13)
  const props = parseFieldTable(reply.subarray(17, 17 + tableLen))
  t.equal(props.product, 'RabbitMQ')
  t.equal(typeof props.capabilities, 'object')
  t.equal((props.capabilities as Record<string, unknown>).publisher_confirms, true)
  t.throws(() => parseFieldTable(Buffer.from([3, 0x61, 0x62, 0x63, 0x53, 0, 0, 0, 9, 0x41])), RangeError, 'truncated long string')
  t.throws(() => parseFieldTable(Buffer.from([1, 0x61, 0x3f])), RangeError, 'unknown field type')
})

test('a protocol-header reply (captured: RabbitMQ answering an HTTP probe)', async (t) => {
  t.same(parse(fixture('rabbitmq-http-probe.bin')), { service: 'amqp', extraInfo: 'server speaks AMQP 0-9-1' })
  t.same(parse(Buffer.from([0x41, 0x4d, 0x51, 0x50, 0, 1, 0, 0])), { service: 'amqp', extraInfo: 'server speaks AMQP 1.0' })
})

test('truncated and corrupted frames', async (t) => {
  const reply = fixture('rabbitmq-connection-start.bin')
  t.notOk(complete(reply.subarray(0, 100)))
  t.equal(parse(reply.subarray(0, 100)), null)
  const bad = Buffer.from(reply)
  bad[bad.length - 1] = 0
  t.equal(parse(bad), null, 'frame-end octet checked')
  const corrupt = Buffer.from(reply)
  corrupt[16] = 0xff
  t.match(parse(corrupt)?.extraInfo, /malformed server properties/)
  t.equal(parse(Buffer.from('garbage garbage garbage')), null)
})
