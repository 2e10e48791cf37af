import { test } from 'tap'
import { parse, request } from '../../../../lib/scanner/probes/memcached'

test('version reply', async (t) => {
  t.equal(request.toString(), 'version\r\n')
  t.same(parse(Buffer.from('VERSION 1.6.18\r\n')), { service: 'memcached', product: 'memcached', version: '1.6.18' })
  t.same(parse(Buffer.from('VERSION 1.4.25-dev\r\n')), { service: 'memcached', product: 'memcached', version: '1.4.25', extraInfo: 'dev' })
})

test('errors, truncation, garbage', async (t) => {
  t.equal(parse(Buffer.from('ERROR\r\n')), null)
  t.equal(parse(Buffer.from('VERSION \r\n')), null)
  t.equal(parse(Buffer.from('VERSION 1.6')), null, 'no line end: the number may be cut')
  t.equal(parse(Buffer.from([0xff, 0xfe, 0x0d, 0x0a])), null)
})
