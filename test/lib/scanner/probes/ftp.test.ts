import { test } from 'tap'
import { complete, parse } from '../../../../lib/scanner/probes/ftp'

const b = (s: string): Buffer => Buffer.from(s, 'latin1')

test('vsftpd and ProFTPD greetings', async (t) => {
  t.same(parse(b('220 (vsFTPd 3.0.3)\r\n')), { service: 'ftp', product: 'vsftpd', version: '3.0.3' })
  t.same(parse(b('220 (vsFTPd 2.3.4)\r\n')), { service: 'ftp', product: 'vsftpd', version: '2.3.4' })
  t.same(parse(b('220 ProFTPD 1.3.5 Server (ProFTPD Default Installation) [::ffff:10.0.0.5]\r\n')),
    { service: 'ftp', product: 'ProFTPD', version: '1.3.5' })
  t.same(parse(b('220 ProFTPD 1.3.5a Server (Debian) [::ffff:10.0.0.5]\r\n')),
    { service: 'ftp', product: 'ProFTPD', version: '1.3.5a', distro: 'Debian' })
  t.same(parse(b('220 ProFTPD Server (Debian) [::ffff:10.0.0.5]\r\n')), { service: 'ftp', product: 'ProFTPD', distro: 'Debian' })
})

test('multi-line Pure-FTPd greeting is complete only at the final line', async (t) => {
  const partial = b('220---------- Welcome to Pure-FTPd [privsep] [TLS] ----------\r\n220-You are user number 1 of 50 allowed.\r\n')
  t.notOk(complete(partial))
  const whole = Buffer.concat([partial, b('220 You will be disconnected after 15 minutes of inactivity.\r\n')])
  t.ok(complete(whole))
  t.same(parse(whole), { service: 'ftp', product: 'Pure-FTPd' })
})

test('Microsoft and FileZilla', async (t) => {
  t.same(parse(b('220 Microsoft FTP Service\r\n')), { service: 'ftp', product: 'Microsoft ftpd' })
  t.same(parse(b('220-FileZilla Server 0.9.60 beta\r\n220 Welcome\r\n')), { service: 'ftp', product: 'FileZilla ftpd', version: '0.9.60' })
})

test('a bare 220 is FTP only on an FTP port; SMTP greetings are never FTP', async (t) => {
  t.same(parse(b('220 Service ready\r\n'), 21), { service: 'ftp' })
  t.equal(parse(b('220 Service ready\r\n'), 9999), null)
  t.equal(parse(b('220 mail.example.com ESMTP Postfix (Debian/GNU)\r\n'), 21), null)
})

test('garbage and truncation', async (t) => {
  t.equal(parse(b('220 (vsFTPd 3.0')), null)
  t.equal(parse(b('HTTP/1.1 200 OK\r\n')), null)
  t.equal(parse(Buffer.alloc(0)), null)
})
