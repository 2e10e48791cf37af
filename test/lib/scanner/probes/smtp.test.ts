import { test } from 'tap'
import { parse, parseEhlo } from '../../../../lib/scanner/probes/smtp'

const b = (s: string): Buffer => Buffer.from(s, 'latin1')

test('Postfix, Exim, Sendmail, Microsoft greetings', async (t) => {
  t.same(parse(b('220 mail.example.com ESMTP Postfix (Debian/GNU)\r\n')),
    { service: 'smtp', product: 'Postfix', distro: 'Debian', extraInfo: 'host mail.example.com' })
  t.same(parse(b('220 mx.example.org ESMTP Exim 4.96 Sun, 22 Nov 2026 10:00:00 +0000\r\n')),
    { service: 'smtp', product: 'Exim', version: '4.96', extraInfo: 'host mx.example.org' })
  t.same(parse(b('220 mx.example.org ESMTP Exim 4.92.3 #3 Sun, 22 Nov 2026 10:00:00 +0000\r\n'))?.version, '4.92.3')
  t.equal(parse(b('220 h.example.net ESMTP Sendmail 8.15.2/8.15.2; Sun, 22 Nov 2026 10:00:00 GMT\r\n'))?.version, '8.15.2')
  t.equal(parse(b('220 EX01.corp.example Microsoft ESMTP MAIL Service ready at Sun, 22 Nov 2026 10:00:00 +0000\r\n'))?.product, 'Microsoft ESMTP')
})

test('bare greeting only on SMTP ports; EHLO tells SMTP from FTP', async (t) => {
  t.same(parse(b('220 ready\r\n'), 25), { service: 'smtp' })
  t.equal(parse(b('220 ready\r\n'), 2100), null)
  t.ok(parseEhlo(b('250-mail.example.com\r\n250-PIPELINING\r\n250 STARTTLS\r\n')))
  t.notOk(parseEhlo(b("500 'EHLO vulnscan.invalid': command not understood\r\n")))
})

test('refusals and garbage', async (t) => {
  t.same(parse(b('554 mail.example.com ESMTP not accepting connections\r\n')), { service: 'smtp', extraInfo: 'mail.example.com ESMTP not accepting connections' })
  t.equal(parse(b('SSH-2.0-OpenSSH_9.2p1\r\n')), null)
  t.equal(parse(b('220 mail.exa')), null)
})
