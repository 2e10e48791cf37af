import { test } from 'tap'
import { parse } from '../../../../lib/scanner/probes/pop3'

const b = (s: string): Buffer => Buffer.from(s, 'latin1')

test('POP3 greetings', async (t) => {
  t.same(parse(b('+OK Dovecot (Debian) ready.\r\n')), { service: 'pop3', product: 'Dovecot', distro: 'Debian' })
  t.same(parse(b('+OK Dovecot ready.\r\n')), { service: 'pop3', product: 'Dovecot' })
  t.same(parse(b('+OK The Microsoft Exchange POP3 service is ready.\r\n')), { service: 'pop3', product: 'Microsoft Exchange pop3d' })
  t.same(parse(b('+OK POP3 server ready <1896.697170952@dbc.mtview.ca.us>\r\n')), { service: 'pop3' })
})

test('a bare +OK (a Redis reply) is not POP3; truncation and garbage', async (t) => {
  t.equal(parse(b('+OK\r\n')), null)
  t.equal(parse(b('+OK Dovecot')), null)
  t.equal(parse(b('-ERR nope\r\n')), null)
})
