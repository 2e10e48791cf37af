// ISC BIND 9 from Debian over TCP: `version.bind` as shipped.
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { DNS_PORT, named } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

test('Debian\'s BIND 9: product, upstream version and Debian tag from version.bind', { skip: daemonUnavailable('/usr/sbin/named', 'bind9') }, async (t) => {
  const d = await startDaemon(named())
  t.teardown(d.stop)
  // dpkg says 1:9.18.49-1~deb12u3; the wire says 9.18.49-1~deb12u3-Debian.
  const want = d.packageVersion.replace(/^\d+:/, '').replace(/-.*$/, '')
  const r = await detectService({ host: d.host, port: DNS_PORT, level: 'light' })
  t.match(r, { service: 'dns', product: 'ISC BIND', version: want, extraInfo: /^packaging / })
  t.same(r.cpe, [`cpe:2.3:a:isc:bind:${want}:*:*:*:*:*:*:*`])
  const deb = /deb\d+u\d+/.exec(d.packageVersion)
  if (deb) t.equal(r.distro, deb[0])
})
