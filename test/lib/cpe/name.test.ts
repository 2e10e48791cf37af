import { test } from 'tap'
import { escapeCpeValue, formatCpe, parseCpe, unescapeCpeValue } from '../../../lib/cpe/name'

test('formats a product name with defaults for the unset fields', async (t) => {
  t.equal(formatCpe({ vendor: 'redis', product: 'redis', version: '7.0.15' }),
    'cpe:2.3:a:redis:redis:7.0.15:*:*:*:*:*:*:*')
  t.equal(formatCpe({ vendor: 'openbsd', product: 'openssh', version: '9.2', update: 'p1' }),
    'cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*')
})

test('escapes characters that are special in the formatted string', async (t) => {
  t.equal(escapeCpeValue('1.0:beta'), '1.0\\:beta')
  t.equal(escapeCpeValue('a+b'), 'a\\+b')
  t.equal(escapeCpeValue('Windows Server'), 'windows_server')
  t.equal(escapeCpeValue('*'), '*')
  t.equal(escapeCpeValue('-'), '-')
  t.equal(escapeCpeValue(''), '*')
  t.equal(unescapeCpeValue('1.0\\:beta'), '1.0:beta')
})

test('parses what it formats, escaped colons included', async (t) => {
  const s = formatCpe({ vendor: 'acme', product: 'widget', version: '2.0:rc1' })
  const p = parseCpe(s)
  t.ok(p)
  t.equal(p?.vendor, 'acme')
  t.equal(p?.version, '2.0\\:rc1')
  t.equal(formatCpe({ ...p!, version: unescapeCpeValue(p!.version) }), s)
})

test('parses NVD criteria and rejects malformed names', async (t) => {
  const p = parseCpe('cpe:2.3:o:microsoft:windows_server_2003:r2:*:*:*:*:*:*:*')
  t.same(p && [p.part, p.vendor, p.product, p.version], ['o', 'microsoft', 'windows_server_2003', 'r2'])
  t.equal(parseCpe('cpe:/a:redis:redis:7.0'), null, 'CPE 2.2 URI form is not a 2.3 name')
  t.equal(parseCpe('cpe:2.3:x:redis:redis:1:*:*:*:*:*:*:*'), null, 'unknown part')
  t.equal(parseCpe('cpe:2.3:a:redis:redis'), null, 'too few fields')
})
