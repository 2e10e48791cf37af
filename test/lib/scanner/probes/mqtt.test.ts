import fs from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { connectPacket, packets, parseConnack, parseVersion, subscribePacket } from '../../../../lib/scanner/probes/mqtt'

const fixture = (name: string): Buffer => fs.readFileSync(path.join(__dirname, '../../../fixtures/banners', name))

test('CONNECT and SUBSCRIBE packets are well formed', async (t) => {
  const c = connectPacket('vulnscan')
  t.equal(c[0], 0x10)
  t.equal(c[1], c.length - 2)
  t.same([...c.subarray(2, 10)], [0, 4, 0x4d, 0x51, 0x54, 0x54, 4, 2])
  const s = subscribePacket()
  t.equal(s[0], 0x82)
  t.match(s.toString('latin1'), /\$SYS\/broker\/version\0$/)
})

test('Mosquitto (captured): CONNACK accepted, then the $SYS version PUBLISH', async (t) => {
  const reply = fixture('mosquitto-connack-sys-version.bin')
  t.same(parseConnack(reply), { service: 'mqtt', extraInfo: 'anonymous access allowed', accepted: true })
  t.same(parseVersion(reply), { service: 'mqtt', product: 'Mosquitto', version: '2.0.11' })
  t.same(packets(reply).map((p) => p.type), [2, 9, 3], 'CONNACK, SUBACK, PUBLISH')
})

test('refused CONNACK still says MQTT', async (t) => {
  t.same(parseConnack(Buffer.from([0x20, 2, 0, 5])), { service: 'mqtt', extraInfo: 'CONNACK: not authorized', accepted: false })
  t.same(parseConnack(Buffer.from([0x20, 2, 0, 4])), { service: 'mqtt', extraInfo: 'CONNACK: bad user name or password', accepted: false })
})

test('truncated and foreign replies', async (t) => {
  t.equal(parseConnack(Buffer.from([0x20, 2, 0])), null)
  t.equal(parseConnack(Buffer.from([0x20, 2, 0, 9])), null)
  t.equal(parseConnack(Buffer.from('HTTP/1.1 400')), null)
  const reply = fixture('mosquitto-connack-sys-version.bin')
  t.equal(parseVersion(reply.subarray(0, reply.length - 5)), null)
})
