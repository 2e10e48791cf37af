import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { clickhouse } from '../../../../bench/support/daemon-specs'
import { CLIENT_REVISION, complete, helloRequest, parse, parseHello } from '../../../../lib/scanner/probes/clickhouse'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

// Debian 12's ClickHouse 18.16.1 (host name vm) answering helloRequest(), and refusing the same Hello from user
// `nobody1` (the Exception cut after its message: the stack trace that follows is not read).
const HELLO = Buffer.from('000a436c69636b486f75736512108ca903074574632f55544302766d01', 'hex')
const REFUSED = Buffer.from('02c00000000d44423a3a457863657074696f6e2344423a3a457863657074696f6e3a20556e6b6e6f776e2075736572206e6f626f647931', 'hex')

test('the client Hello: packet 0, our name, version 1.1 and the revision whose reply carries the patch', async (t) => {
  const h = helloRequest()
  t.equal(h[0], 0)
  t.equal(h.subarray(2, 10).toString(), 'vulnscan')
  t.ok(h.includes(Buffer.from([0x81, 0xa9, 0x03])), `revision ${CLIENT_REVISION} as a varint`)
})

test('server replies: Hello with the whole version, an older Hello with major.minor only, a refusal', async (t) => {
  t.ok(complete(HELLO))
  t.notOk(complete(HELLO.subarray(0, 10)))
  t.same(parseHello(HELLO), { name: 'ClickHouse', major: 18, minor: 16, revision: 54412, timezone: 'Etc/UTC', displayName: 'vm', patch: 1 })
  t.same(parse(HELLO), { service: 'clickhouse', product: 'ClickHouse', version: '18.16.1', extraInfo: 'protocol revision 54412; name vm' })
  // A server of revision 54060 stops after the time zone.
  const old = Buffer.concat([Buffer.from('000a436c69636b486f7573650101ac', 'hex'), Buffer.from([0xa6, 0x03]), Buffer.from('074574632f555443', 'hex')])
  t.same(parse(old), { service: 'clickhouse', product: 'ClickHouse', version: '1.1', versionPrefix: true, extraInfo: 'protocol revision 54060' })
  t.ok(complete(REFUSED))
  t.same(parse(REFUSED), { service: 'clickhouse', product: 'ClickHouse', extraInfo: 'refused: DB::Exception: Unknown user nobody1' })
  t.equal(parse(Buffer.from('SSH-2.0-OpenSSH_9.2p1\r\n')), null)
  t.equal(parse(Buffer.from('HTTP/1.0 400 Bad Request\r\n\r\n')), null)
})

test('ClickHouse from Debian: product and version from its native Hello', { skip: daemonUnavailable('/usr/sbin/clickhouse-server', 'clickhouse-server') }, async (t) => {
  const d = await startDaemon(clickhouse())
  t.teardown(d.stop)
  const want = d.packageVersion.replace(/^\d+:/, '').replace(/[-+~].*$/, '')
  const r = await detectService({ host: d.host, port: d.port, level: 'full' })
  t.match(r, { service: 'clickhouse', product: 'ClickHouse', version: want, extraInfo: /^protocol revision \d+/ })
  t.same(r.cpe, [`cpe:2.3:a:clickhouse:clickhouse:${want}:*:*:*:*:*:*:*`])
})
