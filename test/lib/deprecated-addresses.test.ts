// IPv4-compatible IPv6 addresses (::a.b.c.d, deprecated) are refused wherever an address comes from a client.
import { test } from 'tap'
import { normalizeAddress } from '../../lib/addresses'
import { parseScope, validateTarget } from '../../lib/scanner/targets'
import { build, SERVICE_KEY } from '../helper'

const auth = { 'x-api-key': SERVICE_KEY }

test('targets and address parameters refuse ::/96 except :: and ::1', async (t) => {
  for (const value of ['::127.0.0.1', '::7f00:1', '::2', '0:0:0:0:0:0:a00:1']) {
    t.match(validateTarget({ type: 'single_ip', value }, { maxHosts: 10 }), /IPv4-compatible/, value)
    t.equal(normalizeAddress(value), null, `${value} is not an address parameter`)
  }
  t.match(validateTarget({ type: 'cidr', value: '::127.0.0.0/124' }, { maxHosts: 100 }), /IPv4-compatible/)
  t.match(validateTarget({ type: 'ip_range', value: '::1-::3' }, { maxHosts: 100 }), /IPv4-compatible/)
  for (const value of ['::1', '::ffff:127.0.0.1', '2001:db8::1', '::1:0:0']) {
    t.equal(validateTarget({ type: 'single_ip', value }, { maxHosts: 10 }), null, `${value} is fine`)
    t.not(normalizeAddress(value), null)
  }
  t.equal(normalizeAddress('::'), '::')
  t.doesNotThrow(() => parseScope('', '::/0'), 'a scope block may still cover everything')

  const { app } = await build(t, 'memory')
  const post = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { targets: [{ type: 'single_ip', value: '::127.0.0.1' }] } })
  t.equal(post.statusCode, 400)
  t.match(post.json(), { code: 'VULNSCAN_SCAN_INVALID_TARGET', error: /IPv4-compatible/ })
  const host = await app.inject({ url: '/host/%3A%3A127.0.0.1', headers: auth })
  t.equal(host.statusCode, 400)
  t.equal(host.json().code, 'VULNSCAN_BAD_REQUEST')
})
