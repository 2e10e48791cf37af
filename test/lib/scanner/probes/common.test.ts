import { test } from 'tap'
import { distroTag, firstLine, printable } from '../../../../lib/scanner/probes/common'

test('distro tags', async (t) => {
  t.same(distroTag('Debian-2+deb12u3'), { distro: 'deb12u3', revision: '2+deb12u3' })
  t.same(distroTag('10.11.19-MariaDB-0+deb12u1'), { distro: 'deb12u1', revision: '0+deb12u1' })
  t.same(distroTag('Ubuntu-3ubuntu0.10'), { distro: 'Ubuntu', revision: '3ubuntu0.10' })
  t.same(distroTag('(Ubuntu)'), { distro: 'Ubuntu' })
  t.same(distroTag('(Debian)'), { distro: 'Debian' })
  t.same(distroTag('3.0.7-27.el9'), { distro: 'el9' })
  t.equal(distroTag('protocol 2.0'), undefined)
})

test('printable banners are bounded and escaped', async (t) => {
  t.equal(printable(Buffer.from('ab\r\n\x00\xff\\', 'latin1')), 'ab\\r\\n\\x00\\xff\\\\')
  t.equal(printable(Buffer.alloc(10000, 0x41)).length, 512)
  t.equal(printable(Buffer.alloc(10000, 0)).length, 512)
  t.equal(firstLine(Buffer.from('no newline')), null)
  t.equal(firstLine(Buffer.from('one\r\ntwo\r\n')), 'one')
})
