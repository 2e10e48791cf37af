import fs from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { parse } from '../../../../lib/scanner/probes/nats'

const fixture = (name: string): Buffer => fs.readFileSync(path.join(__dirname, '../../../fixtures/banners', name))

test('INFO from the local nats-server (captured)', async (t) => {
  t.same(parse(fixture('nats-info.bin')), {
    service: 'nats', product: 'NATS Server', version: '2.9.10', extraInfo: 'go go1.19.8; JetStream'
  })
})

test('auth and TLS flags', async (t) => {
  const m = parse(Buffer.from('INFO {"server_id":"X","version":"2.10.7","go":"go1.21.5","auth_required":true,"tls_required":true} \r\n'))
  t.equal(m?.extraInfo, 'go go1.21.5; authentication required; TLS required')
})

test('truncated and malformed', async (t) => {
  const reply = fixture('nats-info.bin')
  t.equal(parse(reply.subarray(0, 50)), null)
  t.same(parse(Buffer.from('INFO {"version": \r\n')), { service: 'nats', extraInfo: 'malformed INFO' })
  t.equal(parse(Buffer.from('+OK\r\n')), null)
})
