import fs from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { complete, parse, parseServerVersion, startupMessage } from '../../../../lib/scanner/probes/postgresql'

const fixture = (name: string): Buffer => fs.readFileSync(path.join(__dirname, '../../../fixtures/banners', name))

function msg (type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5)
  head.write(type, 0, 'latin1')
  head.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([head, body])
}

test('startup message layout: length, protocol 3.0, user postgres', async (t) => {
  const m = startupMessage()
  t.equal(m.readInt32BE(0), m.length)
  t.equal(m.readInt32BE(4), 196608)
  t.match(m.toString('latin1'), /user\0postgres\0database\0postgres\0/)
})

test('trust authentication (captured from the local server): exact version and distro', async (t) => {
  const reply = fixture('postgresql-trust-startup.bin')
  t.ok(complete(reply))
  t.same(parse(reply), {
    service: 'postgresql', product: 'PostgreSQL', version: '15.20', distro: 'deb12u1',
    extraInfo: '15.20-0+deb12u1; no authentication required for user postgres'
  })
})

test('an error (captured) bounds the version: the V field came in 9.6', async (t) => {
  const m = parse(fixture('postgresql-unknown-role.bin'))
  t.equal(m?.product, 'PostgreSQL')
  t.equal(m?.version, undefined)
  t.match(m?.extraInfo, /^version 9\.6 or later; 28000: role "vulnscan_no_such_role" does not exist/)
})

test('protocol negotiation error says 14 or later when 2.0 is no longer offered', async (t) => {
  const body = Buffer.from('SFATAL\0VFATAL\0C0A000\0Munsupported frontend protocol 65363.19778: server supports 3.0 to 3.0\0Fpostmaster.c\0L2220\0RProcessStartupPacket\0\0', 'latin1')
  t.match(parse(msg('E', body))?.extraInfo, /^version 14 or later/)
  const old = Buffer.from('SFATAL\0VFATAL\0C0A000\0Munsupported frontend protocol 65363.19778: server supports 2.0 to 3.0\0\0', 'latin1')
  t.match(parse(msg('E', old))?.extraInfo, /^version 9\.6 to 13/)
})

test('password and SCRAM challenges', async (t) => {
  const md5 = msg('R', Buffer.from([0, 0, 0, 5, 1, 2, 3, 4]))
  t.same(parse(md5), { service: 'postgresql', product: 'PostgreSQL', extraInfo: 'authentication: MD5 password' })
  const sasl = msg('R', Buffer.concat([Buffer.from([0, 0, 0, 10]), Buffer.from('SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0')]))
  t.ok(complete(sasl))
  t.same(parse(sasl), { service: 'postgresql', product: 'PostgreSQL', extraInfo: 'version 10 or later; authentication: SASL SCRAM-SHA-256-PLUS SCRAM-SHA-256' })
})

test('a refused protocol version (captured) narrows the range of a password-protected server', async (t) => {
  const neg = fixture('postgresql-protocol-negotiation.bin')
  const md5 = msg('R', Buffer.from([0, 0, 0, 5, 1, 2, 3, 4]))
  t.same(parse(md5, neg), { service: 'postgresql', product: 'PostgreSQL', extraInfo: 'version 14 or later; authentication: MD5 password' })
  const sasl = msg('R', Buffer.concat([Buffer.from([0, 0, 0, 10]), Buffer.from('SCRAM-SHA-256\0\0')]))
  const old = msg('E', Buffer.from('SFATAL\0VFATAL\0C0A000\0Munsupported frontend protocol 32767.0: server supports 2.0 to 3.0\0\0', 'latin1'))
  t.same(parse(sasl, old), { service: 'postgresql', product: 'PostgreSQL', extraInfo: 'version 10 to 13; authentication: SASL SCRAM-SHA-256' })
  t.same(parse(md5), { service: 'postgresql', product: 'PostgreSQL', extraInfo: 'authentication: MD5 password' }, 'no range without evidence')
})

test('server_version forms', async (t) => {
  t.same(parseServerVersion('16.2'), { version: '16.2' })
  t.same(parseServerVersion('14.11 (Ubuntu 14.11-0ubuntu0.22.04.1)'), { version: '14.11', distro: 'Ubuntu', extraInfo: '14.11-0ubuntu0.22.04.1' })
  t.same(parseServerVersion('16.1 (Debian 16.1-1.pgdg120+1)'), { version: '16.1', distro: 'PGDG', extraInfo: '16.1-1.pgdg120+1' })
})

test('SSLRequest answer, truncation and garbage are not identified', async (t) => {
  t.equal(parse(fixture('postgresql-sslrequest.bin')), null)
  const reply = fixture('postgresql-trust-startup.bin')
  t.notOk(complete(reply.subarray(0, 40)))
  t.equal(parse(Buffer.from('RFB 003.008\n')), null)
  t.equal(parse(msg('E', Buffer.from('garbage\0\0'))), null)
})
