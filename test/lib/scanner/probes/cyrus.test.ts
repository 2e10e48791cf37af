// Cyrus IMAP from its Debian packages, unpacked beside the installed Dovecot (the two conflict as packages).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { gunzipSync } from 'node:zlib'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { cyrusImapd, UNPACKED_DEBS } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

const master = path.join(UNPACKED_DEBS, 'cyrus-imapd/usr/lib/cyrus/bin/master')

/** The unpacked package's version (dpkg knows nothing of it), from the first entry of its Debian changelog. */
function unpackedVersion (): string {
  const log = gunzipSync(readFileSync(path.join(UNPACKED_DEBS, 'cyrus-imapd/usr/share/doc/cyrus-common/changelog.Debian.gz'))).toString('utf8')
  return /^cyrus-imapd \(([^)]+)\)/.exec(log)?.[1] ?? ''
}

test('Cyrus IMAP: product, upstream version and Debian tag from its greeting', { skip: daemonUnavailable(master, 'cyrus-imapd (unpacked with dpkg-deb -x by .ci/run)') }, async (t) => {
  const d = await startDaemon(cyrusImapd())
  t.teardown(d.stop)
  const pkg = unpackedVersion() // 3.6.1-4+deb12u5
  const want = pkg.replace(/^\d+:/, '').replace(/-.*$/, '')
  t.ok(want, 'the unpacked package names its version')
  // The greeting: `* OK [CAPABILITY …] imap.vulnscan.test Cyrus IMAP 3.6.1-4+deb12u5 server ready`.
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'imap', product: 'Cyrus imapd', version: want, banner: new RegExp(`Cyrus IMAP ${want.replace(/\./g, '\\.')}-`) })
  const deb = /deb\d+u\d+/.exec(pkg)
  if (deb) t.equal(r.distro, deb[0])
  t.same(r.cpe, [`cpe:2.3:a:cmu:cyrus_imap_server:${want}:*:*:*:*:*:*:*`, `cpe:2.3:a:cyrus:imap:${want}:*:*:*:*:*:*:*`])
})
