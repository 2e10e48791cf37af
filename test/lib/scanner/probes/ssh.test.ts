import { test } from 'tap'
import { complete, parse } from '../../../../lib/scanner/probes/ssh'

const b = (s: string): Buffer => Buffer.from(s, 'latin1')

test('OpenSSH on Debian: upstream version, deb tag, packaging kept in extraInfo', async (t) => {
  const m = parse(b('SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n'))
  t.same(m, { service: 'ssh', product: 'OpenSSH', version: '9.2p1', distro: 'deb12u3', extraInfo: 'Debian-2+deb12u3; protocol 2.0' })
})

test('OpenSSH on Ubuntu names the distribution', async (t) => {
  const m = parse(b('SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.10\r\n'))
  t.equal(m?.product, 'OpenSSH')
  t.equal(m?.version, '8.9p1')
  t.equal(m?.distro, 'Ubuntu')
  t.match(m?.extraInfo, /Ubuntu-3ubuntu0\.10/)
})

test('other servers and comment-less banners', async (t) => {
  t.same(parse(b('SSH-2.0-OpenSSH_7.4\r\n')), { service: 'ssh', product: 'OpenSSH', version: '7.4', extraInfo: 'protocol 2.0' })
  t.equal(parse(b('SSH-2.0-dropbear_2022.83\r\n'))?.product, 'Dropbear sshd')
  t.equal(parse(b('SSH-2.0-dropbear_2022.83\r\n'))?.version, '2022.83')
  t.equal(parse(b('SSH-1.99-Cisco-1.25\r\n'))?.product, 'Cisco SSH')
  t.match(parse(b('SSH-1.99-Cisco-1.25\r\n'))?.extraInfo, /protocol 1\.99/)
  t.equal(parse(b('SSH-2.0-OpenSSH_9.3 FreeBSD-20230316\r\n'))?.distro, 'FreeBSD')
  t.same(parse(b('SSH-2.0-SomethingElse\r\n')), { service: 'ssh', extraInfo: 'protocol 2.0' })
})

test('lines before the identification string are allowed (RFC 4253)', async (t) => {
  t.equal(parse(b('Welcome\r\nSSH-2.0-OpenSSH_9.6\r\n'))?.version, '9.6')
})

test('truncated, malformed and foreign replies', async (t) => {
  t.equal(parse(b('SSH-2.0-OpenSSH_9.2p1 Deb')), null, 'no line end yet')
  t.notOk(complete(b('SSH-2.0-OpenSSH_9.2p1 Deb')))
  t.ok(complete(b('SSH-2.0-OpenSSH_9.2p1\r\n')))
  t.same(parse(b('SSH-garbage\r\n')), { service: 'ssh', extraInfo: 'malformed identification string' })
  t.equal(parse(b('220 (vsFTPd 3.0.3)\r\n')), null)
  t.equal(parse(Buffer.from([0, 1, 2, 0xff, 0x0a])), null)
})
