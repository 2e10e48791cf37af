import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { parse } from '../../../../lib/scanner/probes/telnet'
import { telnetd } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startInetd } from '../../../support/debian-daemon'

test('option negotiation says telnet and names the options, never a product', async (t) => {
  t.same(parse(Buffer.from([0xff, 0xfd, 0x18, 0xff, 0xfd, 0x20, 0xff, 0xfb, 0x01])), { service: 'telnet', extraInfo: 'negotiates terminal-type, terminal-speed, echo' })
  t.same(parse(Buffer.from([0xff, 0xfb, 0x25])), { service: 'telnet' })
  t.equal(parse(Buffer.from([0xff, 0x00, 0x01])), null)
  t.equal(parse(Buffer.from('SSH-2.0-x\r\n')), null)
})

test('Debian\'s inetutils telnetd, run per connection as inetd would', { skip: daemonUnavailable('/usr/sbin/telnetd', 'inetutils-telnetd') }, async (t) => {
  const d = await startInetd(telnetd)
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'telnet', extraInfo: /terminal-type/ })
  t.equal(r.product, undefined)
})
