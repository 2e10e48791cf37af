// Mosquitto from Debian on a loopback address of its own, over TLS on 8883: the handshake first,
// then MQTT inside it, with the certificate reported.

import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { mosquittoTls } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

const upstream = (v: string): string => v.replace(/^\d+:/, '').replace(/[-+~].*$/, '')

test('Mosquitto over TLS', { skip: daemonUnavailable('/usr/sbin/mosquitto', 'mosquitto') }, async (t) => {
  const d = await startDaemon(mosquittoTls())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: 8883, level: 'light' })
  t.match(r, { service: 'mqtt', product: 'Mosquitto', version: upstream(d.packageVersion), extraInfo: /anonymous access allowed/ })
  t.equal(r.tls?.subject, 'CN=broker.vulnscan.test')
  t.equal(r.tls?.selfSigned, true)
})
