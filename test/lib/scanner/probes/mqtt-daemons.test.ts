// Mosquitto from Debian on a loopback address of its own, over TLS on 8883: the handshake first,
// then MQTT inside it, with the certificate reported.

import path from 'node:path'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { accepts, daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

const upstream = (v: string): string => v.replace(/^\d+:/, '').replace(/[-+~].*$/, '')

test('Mosquitto over TLS', { skip: daemonUnavailable('/usr/sbin/mosquitto', 'mosquitto') }, async (t) => {
  const d = await startDaemon({
    pkg: 'mosquitto',
    binary: '/usr/sbin/mosquitto',
    // Mosquitto drops to its own user and must still read its key.
    prepare: () => [['openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '5',
      '-subj', '/CN=broker.vulnscan.test']], ['chmod', ['755', '.']], ['chmod', ['644', 'key.pem']]],
    files: ({ host, dir }) => ({
      'mosquitto.conf': ['persistence false', 'log_dest stderr', `listener 8883 ${host}`, `certfile ${path.join(dir, 'cert.pem')}`,
        `keyfile ${path.join(dir, 'key.pem')}`, 'allow_anonymous true', ''].join('\n')
    }),
    args: ({ dir }) => ['-c', path.join(dir, 'mosquitto.conf')],
    // MQTT over TLS has its own port; the address is the test's alone.
    ready: async ({ host }) => await accepts(host, 8883)
  })
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: 8883, level: 'light' })
  t.match(r, { service: 'mqtt', product: 'Mosquitto', version: upstream(d.packageVersion), extraInfo: /anonymous access allowed/ })
  t.equal(r.tls?.subject, 'CN=broker.vulnscan.test')
  t.equal(r.tls?.selfSigned, true)
})
