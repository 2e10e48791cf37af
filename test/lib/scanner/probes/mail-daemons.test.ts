// Mail servers from Debian's packages, each started on a loopback address of its own.

import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { dovecot, exim, neighbourPort } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

test('Dovecot IMAP and POP3: product and distribution, no version (the greeting shows none), STARTTLS at full level', { skip: daemonUnavailable('/usr/sbin/dovecot', 'dovecot-imapd') }, async (t) => {
  const d = await startDaemon(dovecot())
  t.teardown(d.stop)
  const imap = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(imap, { service: 'imap', product: 'Dovecot', distro: 'Debian' })
  t.equal(imap.version, undefined)
  t.same(imap.cpe, ['cpe:2.3:a:dovecot:dovecot:*:*:*:*:*:*:*:*'])
  const pop3 = await detectService({ host: d.host, port: neighbourPort(d.port), level: 'light' })
  t.match(pop3, { service: 'pop3', product: 'Dovecot', distro: 'Debian' })
  const full = await detectService({ host: d.host, port: d.port, level: 'full' })
  t.match(full, { service: 'imap', product: 'Dovecot', extraInfo: /STARTTLS/ })
  t.equal(full.tls?.subject, 'CN=mail.vulnscan.test')
  t.equal(full.tls?.selfSigned, true)
})

test('Exim: product and version from its SMTP banner', { skip: daemonUnavailable('/usr/sbin/exim4', 'exim4-daemon-light') }, async (t) => {
  const d = await startDaemon(exim())
  t.teardown(d.stop)
  const want = d.packageVersion.replace(/^\d+:/, '').replace(/-.*$/, '')
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'smtp', product: 'Exim', version: want, extraInfo: 'host mx.vulnscan.test' })
  t.same(r.cpe, [`cpe:2.3:a:exim:exim:${want}:*:*:*:*:*:*:*`])
})
