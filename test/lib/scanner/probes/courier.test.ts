// Courier-IMAP from its Debian packages, unpacked beside the installed Dovecot (the two conflict as packages).
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { courierImap } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startInetd } from '../../../support/debian-daemon'

const spec = courierImap()

test('Courier-IMAP: product from its greeting, no version (the greeting shows none)', { skip: daemonUnavailable(spec.imaplogin, 'courier-imap (unpacked with dpkg-deb -x by .ci/run)') }, async (t) => {
  const d = await startInetd(spec)
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'imap', product: 'Courier Imapd', banner: /^\* OK \[CAPABILITY IMAP4rev1 [^\]]*\] Courier-IMAP ready\./ })
  t.equal(r.version, undefined)
  t.same(r.cpe, ['cpe:2.3:a:courier-mta:courier-imap:*:*:*:*:*:*:*:*', 'cpe:2.3:a:courier-mta:courier_mail_server:*:*:*:*:*:*:*:*'])
})
