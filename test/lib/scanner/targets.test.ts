import { test } from 'tap'
import { expandTargets, inferTarget, isHostName, parseScope, scopeError, validateTarget } from '../../../lib/scanner/targets'
import type { Target } from '../../../lib/scanner/types'

const LIMIT = { maxHosts: 4096 }
const ip = (value: string): Target => ({ type: 'single_ip', value })
const range = (value: string): Target => ({ type: 'ip_range', value })
const cidr = (value: string): Target => ({ type: 'cidr', value })
const name = (value: string): Target => ({ type: 'dns_name', value })

test('validateTarget accepts well-formed targets of every type', async (t) => {
  for (const target of [ip('10.0.0.1'), ip('::1'), ip('2001:db8::1'), range('10.0.0.1-10.0.0.9'),
    range('10.0.0.1 - 10.0.0.1'), range('2001:db8::1-2001:db8::ff'), cidr('192.168.1.0/24'),
    cidr('10.0.0.7/29'), cidr('2001:db8::/116'), cidr('10.1.2.3/32'), name('scanme.example.org'),
    name('localhost'), name('a-b.c0.example.'), name('3com.com')]) {
    t.equal(validateTarget(target, LIMIT), null, `${target.type} ${target.value}`)
  }
})

test('validateTarget names the problem', async (t) => {
  t.equal(validateTarget(ip('10.0.0.300'), LIMIT), "'10.0.0.300' is not a valid IPv4 or IPv6 address")
  t.equal(validateTarget(ip('example.com'), LIMIT), "'example.com' is not a valid IPv4 or IPv6 address")
  t.equal(validateTarget(ip(''), LIMIT), 'the target value is empty')
  t.equal(validateTarget(range('10.0.0.9-10.0.0.1'), LIMIT), 'range start 10.0.0.9 is after end 10.0.0.1')
  t.equal(validateTarget(range('10.0.0.1-::1'), LIMIT), 'range start 10.0.0.1 and end ::1 are not of the same address family')
  t.equal(validateTarget(range('10.0.0.1'), LIMIT), "'10.0.0.1' is not a range of the form a.b.c.d-a.b.c.e")
  t.equal(validateTarget(range('10.0.0.1-10.0.0.256'), LIMIT), "'10.0.0.256' is not a valid IPv4 or IPv6 address")
  t.equal(validateTarget(range('10.0.0.0-10.0.255.255'), LIMIT), 'range covers 65536 hosts, more than the limit of 4096')
  t.equal(validateTarget(cidr('10.0.0.0/8'), LIMIT), 'cidr /8 covers 16777216 hosts, more than the limit of 4096')
  t.equal(validateTarget(cidr('2001:db8::/64'), LIMIT), 'cidr /64 covers 18446744073709551616 hosts, more than the limit of 4096')
  t.equal(validateTarget(cidr('10.0.0.0/33'), LIMIT), 'prefix /33 is out of range for IPv4')
  t.equal(validateTarget(cidr('10.0.0.0'), LIMIT), "'10.0.0.0' is not a CIDR block (address/prefix)")
  t.equal(validateTarget(cidr('10.0.0.0/x'), LIMIT), "'x' is not a prefix length")
  t.equal(validateTarget(name('exa_mple.com'), LIMIT), "'exa_mple.com' is not a valid host name")
  t.equal(validateTarget(name('-bad.example'), LIMIT), "'-bad.example' is not a valid host name")
  t.equal(validateTarget(name('a'.repeat(64) + '.com'), LIMIT), `'${'a'.repeat(64)}.com' is not a valid host name`)
  t.equal(validateTarget(name('10.0.0.300'), LIMIT), "'10.0.0.300' is not a valid host name")
  t.equal(validateTarget(name('10.0.0.3'), LIMIT), "'10.0.0.3' is an IP address, not a host name (use type single_ip)")
  t.equal(validateTarget({ type: 'url' as Target['type'], value: 'x' }, LIMIT), "unknown target type 'url'")
  t.match(validateTarget(name('a.'.repeat(200) + 'com'), LIMIT), /longer than 300/)
  t.notOk(isHostName('example.123'))
})

test('scope: deny wins, empty allow allows everything, entries are CIDRs or addresses', async (t) => {
  const open = parseScope('', '')
  t.ok(open.allows('203.0.113.9'))
  t.ok(open.allows('2001:db8::1'))
  const s = parseScope('10.0.0.0/16, 192.168.1.5', ['10.0.5.0/24', '10.0.9.9'])
  t.ok(s.allows('10.0.0.1'))
  t.ok(s.allows('192.168.1.5'))
  t.notOk(s.allows('192.168.1.6'))
  t.notOk(s.allows('10.0.5.77'))
  t.notOk(s.allows('10.0.9.9'))
  t.ok(s.allows('10.0.9.10'))
  t.notOk(s.allows('::ffff:10.0.5.1'), 'an IPv4-mapped IPv6 address is checked as the IPv4 address it is')
  t.equal(s.refusal('10.0.5.3'), '10.0.5.3 is in the denied block 10.0.5.0/24')
  t.equal(s.refusal('172.16.0.1'), '172.16.0.1 is outside the allowed scope')
  t.same(s.allow, ['10.0.0.0/16', '192.168.1.5'])
  t.throws(() => parseScope('10.0.0.0/40', ''), /scope entry '10.0.0.0\/40'/)
  t.throws(() => parseScope('', 'nonsense'), /scope entry 'nonsense'/)
})

test('scopeError refuses literal targets that touch a denied block or leave the allow list', async (t) => {
  const s = parseScope('10.0.0.0/16', '10.0.5.0/24')
  t.equal(scopeError(cidr('10.0.4.0/23'), s), '10.0.4.0/23 overlaps the denied block 10.0.5.0/24')
  t.equal(scopeError(range('10.0.4.250-10.0.5.1'), s), '10.0.4.250-10.0.5.1 overlaps the denied block 10.0.5.0/24')
  t.equal(scopeError(range('10.0.255.250-10.1.0.3'), s), '10.0.255.250-10.1.0.3 leaves the allowed scope at 10.1.0.0')
  t.equal(scopeError(ip('10.0.5.5'), s), '10.0.5.5 is in the denied block 10.0.5.0/24')
  t.equal(scopeError(ip('8.8.8.8'), s), '8.8.8.8 is outside the allowed scope')
  t.equal(scopeError(cidr('10.0.6.0/24'), s), null)
  t.equal(scopeError(name('example.com'), s), null, 'names are checked after resolution')
  const two = parseScope('10.0.0.0/25,10.0.0.128/25', '')
  t.equal(scopeError(cidr('10.0.0.0/24'), two), null, 'adjacent allow blocks cover a span together')
  t.equal(scopeError(cidr('2001:db8::/120'), two), '2001:db8::/120 leaves the allowed scope at 2001:db8::')
})

test('expandTargets dedupes across targets, merges host names and keeps first-seen order', async (t) => {
  const resolve = async (n: string): Promise<string[]> => {
    if (n === 'web.test') return ['10.0.0.2', '10.0.0.9', '2001:db8::1']
    if (n === 'alias.test') return ['10.0.0.2']
    throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
  }
  const { hosts, excluded } = await expandTargets(
    [cidr('10.0.0.0/30'), name('web.test'), ip('10.0.0.1'), range('10.0.0.3-10.0.0.4'), name('ALIAS.test.')],
    { maxHosts: 10, scope: parseScope('', ''), resolve })
  t.same(hosts.map((h) => h.address), ['10.0.0.0', '10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.9', '2001:db8::1', '10.0.0.4'])
  t.same(hosts.find((h) => h.address === '10.0.0.2')?.hostnames, ['web.test', 'alias.test'])
  t.same(hosts.find((h) => h.address === '10.0.0.0')?.hostnames, [])
  t.same(excluded, [])
})

test('expandTargets excludes resolved addresses outside the scope instead of scanning them', async (t) => {
  const resolve = async (): Promise<string[]> => ['10.0.0.2', '192.168.7.7', '10.9.0.1']
  const { hosts, excluded } = await expandTargets([name('mixed.test')],
    { maxHosts: 10, scope: parseScope('10.0.0.0/8', '10.9.0.0/16'), resolve })
  t.same(hosts, [{ address: '10.0.0.2', hostnames: ['mixed.test'] }])
  t.same(excluded, [
    { address: '192.168.7.7', reason: '192.168.7.7 is outside the allowed scope' },
    { address: '10.9.0.1', reason: '10.9.0.1 is in the denied block 10.9.0.0/16' }
  ])
})

test('expandTargets throws on the host cap, on names that do not resolve and on invalid targets', async (t) => {
  const scope = parseScope('', '')
  await t.rejects(expandTargets([cidr('10.0.0.0/29'), cidr('10.0.1.0/29')], { maxHosts: 12, scope }),
    /more than the limit of 12 hosts/)
  await t.resolves(expandTargets([cidr('10.0.0.0/29'), cidr('10.0.0.0/29')], { maxHosts: 8, scope }),
    'duplicates do not count twice against the cap')
  await t.rejects(expandTargets([name('nowhere.invalid')], {
    maxHosts: 8, scope, resolve: async () => { throw Object.assign(new Error('x'), { code: 'ENOTFOUND' }) }
  }), /nowhere.invalid: the name does not resolve \(ENOTFOUND\)/)
  await t.rejects(expandTargets([name('empty.test')], { maxHosts: 8, scope, resolve: async () => [] }),
    /does not resolve to any address/)
  await t.rejects(expandTargets([ip('300.1.1.1')], { maxHosts: 8, scope }), /300.1.1.1: '300.1.1.1' is not a valid/)
})

test('expandTargets resolves real names through the system resolver', async (t) => {
  const { hosts } = await expandTargets([name('localhost')], { maxHosts: 8, scope: parseScope('', '') })
  t.ok(hosts.some((h) => h.address === '127.0.0.1' || h.address === '::1'))
  t.ok(hosts.every((h) => h.hostnames.includes('localhost')))
})

test('expandTargets writes IPv6 addresses in canonical form and expands IPv6 blocks', async (t) => {
  const { hosts } = await expandTargets([ip('2001:0DB8:0:0::0001'), cidr('2001:db8::/126')], { maxHosts: 8, scope: parseScope('', '') })
  t.same(hosts.map((h) => h.address), ['2001:db8::1', '2001:db8::', '2001:db8::2', '2001:db8::3'])
  const zoned = await expandTargets([ip('fe80::1%lo')], { maxHosts: 8, scope: parseScope('', 'fe80::2') })
  t.same(zoned.hosts.map((h) => h.address), ['fe80::1%lo'], 'a link-local zone is kept')
  const denied = await expandTargets([ip('fe80::2%lo')], { maxHosts: 8, scope: parseScope('', 'fe80::/64') })
  t.same(denied.excluded, [{ address: 'fe80::2%lo', reason: 'fe80::2 is in the denied block fe80::/64' }])
})

test('inferTarget reads the type from the syntax', async (t) => {
  t.same(inferTarget('10.0.0.1'), ip('10.0.0.1'))
  t.same(inferTarget('::1'), ip('::1'))
  t.same(inferTarget('10.0.0.1-10.0.0.5'), range('10.0.0.1-10.0.0.5'))
  t.same(inferTarget('10.0.0.0/24'), cidr('10.0.0.0/24'))
  t.same(inferTarget('db-1.example.com'), name('db-1.example.com'))
  t.same(inferTarget('10.0.0.300'), ip('10.0.0.300'), 'a mistyped address is reported as an address')
  t.same(inferTarget('fe80::zz'), ip('fe80::zz'))
})
