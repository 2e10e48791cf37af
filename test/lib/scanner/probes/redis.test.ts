import fs from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { complete, parse } from '../../../../lib/scanner/probes/redis'

const fixture = (name: string): Buffer => fs.readFileSync(path.join(__dirname, '../../../fixtures/banners', name))

test('INFO server from the local Redis (captured)', async (t) => {
  const reply = fixture('redis-info-server.bin')
  t.ok(complete(reply))
  const m = parse(reply)
  t.equal(m?.service, 'redis')
  t.equal(m?.product, 'Redis')
  t.equal(m?.version, '7.0.15')
  t.match(m?.extraInfo, /mode standalone/)
  t.notOk(complete(reply.subarray(0, 100)), 'bulk string not complete until its length arrived')
})

test('errors name the product without a version', async (t) => {
  t.same(parse(Buffer.from('-NOAUTH Authentication required.\r\n')), { service: 'redis', product: 'Redis', extraInfo: 'authentication required' })
  t.same(parse(Buffer.from('-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user.\r\n')),
    { service: 'redis', product: 'Redis', extraInfo: 'protected mode' })
  t.equal(parse(Buffer.from("-ERR unknown command 'INFO', with args beginning with: 'server' \r\n"))?.product, 'Redis')
})

test('Valkey keeps redis_version for clients and names itself', async (t) => {
  const text = '# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\nredis_mode:standalone\r\n'
  const m = parse(Buffer.from(`$${text.length}\r\n${text}\r\n`))
  t.equal(m?.product, 'Valkey')
  t.equal(m?.version, '8.0.1')
})

test('garbage', async (t) => {
  t.equal(parse(Buffer.from('$5\r\nhello\r\n')), null)
  t.equal(parse(Buffer.from('+OK\r\n')), null)
  t.equal(parse(Buffer.from('HTTP/1.1 200 OK\r\n')), null)
})
