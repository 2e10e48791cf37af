import { test } from 'tap'
import { InvalidAddressError, normalizeAddress, parseAddress, sortAddresses } from '../../lib/addresses'

test('addresses are taken in one canonical form', async (t) => {
  t.equal(parseAddress('2001:DB8:0:0::1'), '2001:db8::1')
  t.equal(parseAddress('::ffff:127.0.0.1'), '::ffff:127.0.0.1')
  t.equal(parseAddress('10.0.0.1'), '10.0.0.1')
  t.equal(normalizeAddress('example.org'), null)
})

test('a value that is not an address is a plain error naming the field, with no HTTP status', async (t) => {
  const err = t.throws(() => parseAddress('10.0.0.300', 'host')) as Error & { statusCode?: number }
  t.type(err, InvalidAddressError)
  t.equal(err.message, 'host must be an IPv4 or IPv6 address')
  t.equal(err.statusCode, undefined, 'the HTTP layer decides the status')
})

test('addresses sort by value, IPv4 before IPv6', async (t) => {
  t.same(sortAddresses(['::1', '10.0.0.10', '10.0.0.9', '9.0.0.1']), ['9.0.0.1', '10.0.0.9', '10.0.0.10', '::1'])
})
