import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { activemq } from '../../../../bench/support/daemon-specs'
import { complete, parse, readMap } from '../../../../lib/scanner/probes/openwire'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

// Debian 12's ActiveMQ 5.17.2 greeting a client on its OpenWire connector: WireFormatInfo, protocol 12.
const WIREFORMAT = Buffer.from('00000152014163746976654d510000000c01000001400000000d0011537461636b5472616365456e61626c65640101000f506c6174666f726d44657461696c730900044a617661000c4361636865456e61626c6564010100115463704e6f44656c6179456e61626c65640101001253697a6550726566697844697361626c656401000009436163686553697a650500000400000c50726f76696465724e616d650900084163746976654d5100145469676874456e636f64696e67456e61626c65640101000c4d61784672616d6553697a65067fffffffffffffff00154d6178496e61637469766974794475726174696f6e06000000000000753000204d6178496e61637469766974794475726174696f6e496e6974616c44656c617906000000000000271000134d61784672616d6553697a65456e61626c65640101000f50726f766964657256657273696f6e090006352e31372e32', 'hex')

test('WireFormatInfo: the provider, its version and the protocol; anything else is not OpenWire', async (t) => {
  t.ok(complete(WIREFORMAT))
  t.notOk(complete(WIREFORMAT.subarray(0, 100)))
  t.same(parse(WIREFORMAT), { service: 'openwire', product: 'Apache ActiveMQ', version: '5.17.2', extraInfo: 'OpenWire 12; platform Java' })
  const map = readMap(WIREFORMAT.subarray(22))
  t.match(map, { ProviderName: 'ActiveMQ', ProviderVersion: '5.17.2', CacheSize: 1024, TightEncodingEnabled: true, MaxInactivityDuration: 30000 })
  // An older broker sends no provider: OpenWire, the protocol version, no product guessed.
  const old = Buffer.from(WIREFORMAT.subarray(0, 18))
  old.writeUInt32BE(14, 0)
  old[17] = 0
  t.same(parse(old), { service: 'openwire', extraInfo: 'OpenWire 12' })
  t.equal(parse(Buffer.from('AMQP\x00\x00\x09\x01')), null)
  t.equal(parse(Buffer.from('SSH-2.0-OpenSSH_9.2p1\r\n')), null)
})

test('ActiveMQ from Debian: product and version from its WireFormatInfo', { skip: daemonUnavailable('/usr/share/activemq/bin/activemq.jar', 'activemq') }, async (t) => {
  const d = await startDaemon(activemq())
  t.teardown(d.stop)
  const want = d.packageVersion.replace(/^\d+:/, '').replace(/[-+~].*$/, '')
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'openwire', product: 'Apache ActiveMQ', version: want, extraInfo: /^OpenWire \d+/ })
  t.same(r.cpe, [`cpe:2.3:a:apache:activemq:${want}:*:*:*:*:*:*:*`])
})
