import { test } from 'tap'
import { parse } from '../../../../lib/scanner/probes/imap'

const b = (s: string): Buffer => Buffer.from(s, 'latin1')

test('IMAP greetings', async (t) => {
  t.same(parse(b('* OK [CAPABILITY IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE LITERAL+ STARTTLS AUTH=PLAIN] Dovecot (Debian) ready.\r\n')),
    { service: 'imap', product: 'Dovecot', distro: 'Debian', extraInfo: 'STARTTLS offered' })
  t.same(parse(b('* OK mail.example.com Cyrus IMAP v2.4.17-Debian-2.4.17+nocaldav-0+deb8u2 server ready\r\n')),
    { service: 'imap', product: 'Cyrus imapd', version: '2.4.17', distro: 'deb8u2' })
  t.equal(parse(b('* OK The Microsoft Exchange IMAP4 service is ready.\r\n'))?.product, 'Microsoft Exchange imapd')
  t.same(parse(b('* PREAUTH IMAP4rev1 server logged in as guest\r\n')), { service: 'imap', extraInfo: 'pre-authenticated' })
})

test('not IMAP', async (t) => {
  t.equal(parse(b('* OK [CAPABILITY FOO BAR] hello\r\n')), null)
  t.equal(parse(b('+OK Dovecot ready.\r\n')), null)
  t.equal(parse(b('* OK [CAPABILITY IMAP4rev1')), null)
})
