// Sendmail from its Debian package, unpacked beside the installed Exim (the two conflict as packages).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { sendmail, UNPACKED_DEBS } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

const root = path.join(UNPACKED_DEBS, 'sendmail')

/** The upstream version of the unpacked package, from its Debian changelog (dpkg does not know an unpacked package). */
function upstreamVersion (): string {
  const first = gunzipSync(readFileSync(path.join(root, 'usr/share/doc/sendmail-bin/changelog.Debian.gz'))).toString('utf8').split('\n')[0]
  const version = /^sendmail \((?:\d+:)?([^-)]+)/.exec(first)?.[1]
  if (!version) throw new Error(`no version in the changelog's first line: ${first}`)
  return version
}

test('Sendmail: product and version from its SMTP greeting', { skip: daemonUnavailable(path.join(root, 'usr/libexec/sendmail/sendmail'), 'sendmail-bin (unpacked with dpkg-deb -x by .ci/run)') }, async (t) => {
  const d = await startDaemon(sendmail())
  t.teardown(d.stop)
  const want = upstreamVersion()
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'smtp', product: 'Sendmail', version: want, distro: /^deb\d+u\d+$/, extraInfo: 'host mx.vulnscan.test' })
  // The greeting as Debian's sendmail.cf words it: the binary's version, then the configuration's.
  t.match(r.banner, new RegExp(`^220 mx\\.vulnscan\\.test ESMTP Sendmail ${want.replace(/\./g, '\\.')}/${want.replace(/\./g, '\\.')}/Debian-`))
  t.same(r.cpe, [`cpe:2.3:a:sendmail:sendmail:${want}:*:*:*:*:*:*:*`])
})
