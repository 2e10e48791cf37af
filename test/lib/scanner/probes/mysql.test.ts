import fs from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { complete, parse, parseServerVersion } from '../../../../lib/scanner/probes/mysql'

const fixture = (name: string): Buffer => fs.readFileSync(path.join(__dirname, '../../../fixtures/banners', name))

/** A handshake v10 packet as servers send it, for version strings we have no daemon for. */
function greeting (version: string): Buffer {
  const body = Buffer.concat([Buffer.from([0x0a]), Buffer.from(version + '\0', 'latin1'),
    Buffer.from([1, 0, 0, 0]), Buffer.from('abcdefgh\0'), Buffer.from([0xff, 0xf7, 0x08, 0x02, 0x00, 0xff, 0xc1, 0x15]),
    Buffer.alloc(10), Buffer.from('ijklmnopqrst\0'), Buffer.from('caching_sha2_password\0')])
  const head = Buffer.from([body.length & 0xff, (body.length >> 8) & 0xff, 0, 0])
  return Buffer.concat([head, body])
}

test('the local MariaDB greeting (captured): 5.5.5- prefix removed, distro tag', async (t) => {
  const reply = fixture('mariadb-greeting.bin')
  t.ok(complete(reply))
  t.same(parse(reply), {
    service: 'mysql', product: 'MariaDB', version: '10.11.19', distro: 'deb12u1',
    extraInfo: '0+deb12u1; auth mysql_native_password'
  })
})

test('MySQL version strings', async (t) => {
  t.same(parse(greeting('8.0.36-0ubuntu0.22.04.1')),
    { service: 'mysql', product: 'MySQL', version: '8.0.36', distro: 'Ubuntu', extraInfo: '0ubuntu0.22.04.1; auth caching_sha2_password' })
  t.same(parse(greeting('8.0.35')), { service: 'mysql', product: 'MySQL', version: '8.0.35', extraInfo: 'auth caching_sha2_password' })
  t.same(parseServerVersion('5.7.44-log'), { service: 'mysql', product: 'MySQL', version: '5.7.44', extraInfo: 'binary log on' })
  t.same(parseServerVersion('11.4.2-MariaDB'), { service: 'mysql', product: 'MariaDB', version: '11.4.2' })
  t.equal(parseServerVersion('8.0.34-26').product, 'MySQL')
  t.equal(parseServerVersion('5.7.43-47-log Percona Server').product, 'Percona Server')
})

test('an error packet from a refused host still names the product', async (t) => {
  const msg = Buffer.from("Host '10.0.0.9' is not allowed to connect to this MariaDB server", 'latin1')
  const body = Buffer.concat([Buffer.from([0xff, 0x6a, 0x04]), msg])
  const reply = Buffer.concat([Buffer.from([body.length, 0, 0, 0]), body])
  t.same(parse(reply), { service: 'mysql', product: 'MariaDB', extraInfo: `refused: ${msg.toString()}` })
})

test('truncated and garbage replies', async (t) => {
  const reply = fixture('mariadb-greeting.bin')
  t.notOk(complete(reply.subarray(0, 20)))
  t.equal(parse(reply.subarray(0, 3)), null)
  t.equal(parse(Buffer.from('HTTP/1.1 400 Bad Request\r\n\r\n')), null)
  t.equal(parse(Buffer.from([5, 0, 0, 0, 0x0a, 0x41, 0x42, 0, 0])), null, 'version must start with digits')
})
