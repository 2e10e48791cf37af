// Postfix from its Debian package, unpacked beside the installed Exim (the two conflict as packages).
import path from 'node:path'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { postfix, UNPACKED_DEBS } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

test('Postfix: product from its SMTP greeting, no version (the greeting shows none)', { skip: daemonUnavailable(path.join(UNPACKED_DEBS, 'postfix/usr/lib/postfix/sbin/master'), 'postfix (unpacked with dpkg-deb -x by .ci/run)') }, async (t) => {
  const d = await startDaemon(postfix())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'smtp', product: 'Postfix', extraInfo: 'host mx.vulnscan.test', banner: '220 mx.vulnscan.test ESMTP Postfix\\r\\n' })
  t.equal(r.version, undefined)
  t.same(r.cpe, ['cpe:2.3:a:postfix:postfix:*:*:*:*:*:*:*:*'])
})
