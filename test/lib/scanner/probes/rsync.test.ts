import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { rsyncd } from '../../../../bench/support/daemon-specs'
import { parse } from '../../../../lib/scanner/probes/rsync'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

test('the greeting gives the protocol version, never a product version', async (t) => {
  t.same(parse(Buffer.from('@RSYNCD: 31.0 sha512 sha256 sha1 md5 md4\n')), { service: 'rsync', extraInfo: 'protocol 31.0; digests sha512 sha256 sha1 md5 md4' })
  t.same(parse(Buffer.from('@RSYNCD: 30.0\n')), { service: 'rsync', extraInfo: 'protocol 30.0' })
  t.equal(parse(Buffer.from('@RSYNCD: OK\n')), null)
  t.equal(parse(Buffer.from('220 ready\r\n')), null)
})

test('Debian\'s rsync daemon', { skip: daemonUnavailable('/usr/bin/rsync', 'rsync') }, async (t) => {
  const d = await startDaemon(rsyncd())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.equal(r.service, 'rsync')
  t.match(r.extraInfo, /^protocol \d+\.\d+/)
  t.equal(r.product, undefined, 'the greeting names no product')
  t.equal(r.version, undefined, '@RSYNCD: is the protocol version, not rsync\'s')
})
