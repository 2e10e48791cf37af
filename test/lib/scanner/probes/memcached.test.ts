import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { memcached } from '../../../../bench/support/daemon-specs'
import { parse, request } from '../../../../lib/scanner/probes/memcached'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

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

test('Debian\'s memcached, on its own port and found by the full fallbacks elsewhere', { skip: daemonUnavailable('/usr/bin/memcached', 'memcached') }, async (t) => {
  const d = await startDaemon(memcached())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'full' })
  t.match(r, { service: 'memcached', product: 'memcached', version: d.packageVersion.replace(/[-+~].*$/, '') })
})
