import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { distroPackageOf, releaseFromRevision, SOURCE_PACKAGES, sourceRuleFor } from '../../../lib/distro/package'
import { printable } from '../../../lib/scanner/probes/common'
import * as ftp from '../../../lib/scanner/probes/ftp'
import * as http from '../../../lib/scanner/probes/http'
import * as imap from '../../../lib/scanner/probes/imap'
import * as mysql from '../../../lib/scanner/probes/mysql'
import * as postgresql from '../../../lib/scanner/probes/postgresql'
import * as redis from '../../../lib/scanner/probes/redis'
import * as smtp from '../../../lib/scanner/probes/smtp'
import * as ssh from '../../../lib/scanner/probes/ssh'
import type { ProbeMatch } from '../../../lib/scanner/probes/common'
import type { ServiceInfo } from '../../../lib/domain/services'

const BANNERS = path.join(__dirname, '..', '..', 'fixtures', 'banners')

/** What detection hands on: the parser's match plus the printable banner. */
function seen (match: ProbeMatch | null, reply: Buffer): ServiceInfo {
  if (!match) throw new Error('the probe did not recognise the reply')
  return { ...match, cpe: [], banner: printable(reply) }
}

const sshInfo = (line: string): ServiceInfo => {
  const reply = Buffer.from(line + '\r\n')
  return seen(ssh.parse(reply), reply)
}

t.test('OpenSSH on Debian: release and full package version from the identification comment', async (t) => {
  const p = distroPackageOf(sshInfo('SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u10'))
  t.match(p, { family: 'debian', release: 'bookworm', source: 'openssh', version: '1:9.2p1-2+deb12u10' })
  t.match(p?.evidence, /Debian-2\+deb12u10/)
  t.match(distroPackageOf(sshInfo('SSH-2.0-OpenSSH_8.4p1 Debian-5+deb11u3')), { release: 'bullseye', version: '1:8.4p1-5+deb11u3' })
  t.match(distroPackageOf(sshInfo('SSH-2.0-OpenSSH_7.9p1 Debian-10+deb10u4')), { release: 'buster', version: '1:7.9p1-10+deb10u4' })
  t.match(distroPackageOf(sshInfo('SSH-2.0-OpenSSH_10.0p2 Debian-7+deb13u1')), { release: 'trixie', version: '1:10.0p2-7+deb13u1' })
  t.match(distroPackageOf(sshInfo('SSH-2.0-OpenSSH_9.2p1 Debian-2')), { release: 'bookworm', version: '1:9.2p1-2' },
    'a release-day revision names no release: the OpenSSH version the release ships does')
  t.match(distroPackageOf(sshInfo('SSH-2.0-OpenSSH_8.4p1 Raspbian-5+deb11u3')), { family: 'debian', release: 'bullseye', version: '1:8.4p1-5+deb11u3' })
})

t.test('OpenSSH on Ubuntu: release from the OpenSSH version when the revision does not name it', async (t) => {
  const p = distroPackageOf(sshInfo('SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.13'))
  t.match(p, { family: 'ubuntu', release: 'jammy', source: 'openssh', version: '1:8.9p1-3ubuntu0.13' })
  t.match(p?.evidence, /8\.9p1/)
  t.match(distroPackageOf(sshInfo('SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13.5')), { release: 'noble', version: '1:9.6p1-3ubuntu13.5' })
  t.match(distroPackageOf(sshInfo('SSH-2.0-OpenSSH_8.2p1 Ubuntu-4ubuntu0.11')), { release: 'focal' })
  t.match(distroPackageOf(sshInfo('SSH-2.0-OpenSSH_9.8p1 Ubuntu-1ubuntu1')), { family: 'ubuntu', release: null, version: '1:9.8p1-1ubuntu1' },
    'an OpenSSH version no release shipped leaves the release unknown')
  t.equal(distroPackageOf(sshInfo('SSH-2.0-OpenSSH_9.6')), null, 'an upstream build names no distribution')
})

t.test('PostgreSQL: source package per major version, revision from server_version', async (t) => {
  const reply = readFileSync(path.join(BANNERS, 'postgresql-trust-startup.bin'))
  const p = distroPackageOf(seen(postgresql.parse(reply), reply))
  t.match(p, { family: 'debian', release: 'bookworm', source: 'postgresql-15', version: '15.20-0+deb12u1' })
  const ub = { service: 'postgresql', product: 'PostgreSQL', version: '14.11', cpe: [], extraInfo: '14.11-0ubuntu0.22.04.1' }
  t.match(distroPackageOf(ub), { family: 'ubuntu', release: 'jammy', source: 'postgresql-14', version: '14.11-0ubuntu0.22.04.1' })
  const old = { service: 'postgresql', product: 'PostgreSQL', version: '9.6.24', cpe: [], extraInfo: '9.6.24-0+deb9u1' }
  t.match(distroPackageOf(old), { release: 'stretch', source: 'postgresql-9.6', version: '9.6.24-0+deb9u1' })
  const pgdg = { service: 'postgresql', product: 'PostgreSQL', version: '16.2', cpe: [], banner: 'server_version\\x0016.2 (Debian 16.2-1.pgdg120+2)\\x00' }
  t.equal(distroPackageOf(pgdg), null, 'PGDG builds are not Debian archive packages')
})

t.test('MariaDB and MySQL: revision from the handshake server version', async (t) => {
  const reply = readFileSync(path.join(BANNERS, 'mariadb-greeting.bin'))
  t.match(distroPackageOf(seen(mysql.parse(reply), reply)),
    { family: 'debian', release: 'bookworm', source: 'mariadb', version: '1:10.11.19-0+deb12u1' })
  t.match(distroPackageOf({ ...mysql.parseServerVersion('5.5.5-10.5.26-MariaDB-0+deb11u2'), cpe: [] }),
    { release: 'bullseye', source: 'mariadb-10.5', version: '1:10.5.26-0+deb11u2' })
  t.match(distroPackageOf({ ...mysql.parseServerVersion('5.5.5-10.6.16-MariaDB-0ubuntu0.22.04.1'), cpe: [] }),
    { family: 'ubuntu', release: 'jammy', source: 'mariadb-10.6', version: '1:10.6.16-0ubuntu0.22.04.1' })
  t.match(distroPackageOf({ ...mysql.parseServerVersion('8.0.36-0ubuntu0.22.04.1'), cpe: [] }),
    { family: 'ubuntu', release: 'jammy', source: 'mysql-8.0', version: '8.0.36-0ubuntu0.22.04.1' })
})

t.test('BIND version.bind', async (t) => {
  t.match(distroPackageOf({ service: 'dns', product: 'ISC BIND', version: '9.18.33-1~deb12u2-Debian', cpe: [] }),
    { family: 'debian', release: 'bookworm', source: 'bind9', version: '1:9.18.33-1~deb12u2' })
  t.match(distroPackageOf({ service: 'dns', product: 'ISC BIND', version: '9.18.28-0ubuntu0.22.04.1-Ubuntu', cpe: [] }),
    { family: 'ubuntu', release: 'jammy', source: 'bind9', version: '1:9.18.28-0ubuntu0.22.04.1' })
})

t.test('products that show only the family', async (t) => {
  const httpReply = (server: string): Buffer => Buffer.from(`HTTP/1.1 200 OK\r\nServer: ${server}\r\nContent-Length: 0\r\n\r\n`)
  for (const [server, family, source] of [['Apache/2.4.62 (Debian)', 'debian', 'apache2'], ['Apache/2.4.52 (Ubuntu)', 'ubuntu', 'apache2'],
    ['nginx/1.18.0 (Ubuntu)', 'ubuntu', 'nginx']] as const) {
    const reply = httpReply(server)
    t.match(distroPackageOf(seen(http.parse(reply), reply)), { family, release: null, source, version: null }, server)
  }
  const dovecot = Buffer.from('* OK [CAPABILITY IMAP4rev1 SASL-IR LOGIN-REFERRALS ID ENABLE IDLE LITERAL+ STARTTLS AUTH=PLAIN] Dovecot (Debian) ready.\r\n')
  t.match(distroPackageOf(seen(imap.parse(dovecot), dovecot)), { family: 'debian', source: 'dovecot', version: null })
  const proftpd = Buffer.from('220 ProFTPD Server (Debian) [::ffff:127.0.0.1]\r\n')
  t.match(distroPackageOf(seen(ftp.parse(proftpd, 21), proftpd)), { family: 'debian', source: 'proftpd-dfsg', version: null })
  const postfix = Buffer.from('220 mail.example.org ESMTP Postfix (Debian/GNU)\r\n')
  t.match(distroPackageOf(seen(smtp.parse(postfix, 25), postfix)), { family: 'debian', source: 'postfix', version: null })
  const exim = Buffer.from('220 mail.example.org ESMTP Exim 4.95 Ubuntu Tue, 14 May 2024 10:00:00 +0000\r\n')
  t.match(distroPackageOf(seen(smtp.parse(exim, 25), exim)), { family: 'ubuntu', source: 'exim4', version: null })
})

t.test('Debian redis says nothing about its packaging on the wire', async (t) => {
  const reply = readFileSync(path.join(BANNERS, 'redis-info-server.bin'))
  t.equal(distroPackageOf(seen(redis.parse(reply), reply)), null)
})

t.test('release from a revision', async (t) => {
  const cases: Array<[string, string | null]> = [
    ['2+deb12u10', 'bookworm'], ['1~deb12u2', 'bookworm'], ['5+deb11u3', 'bullseye'], ['7+deb13u1', 'trixie'],
    ['10+deb10u4', 'buster'], ['1~bpo12+1', 'bookworm'], ['0ubuntu0.24.04.1', 'noble'], ['0ubuntu0.22.04.1', 'jammy'],
    ['1~22.04.1', 'jammy'], ['3ubuntu0.13', null], ['3ubuntu13.3', null], ['2', null], ['1+b2', null]
  ]
  for (const [rev, release] of cases) t.equal(releaseFromRevision(rev)?.release ?? null, release, rev)
})

t.test('the source-package table', async (t) => {
  const epochs: Record<string, number> = { openssh: 1, redis: 5, mariadb: 1, bind9: 1, dovecot: 1, apache2: 0, 'postgresql-15': 0, 'proftpd-dfsg': 0 }
  for (const [product, version, source] of [['OpenSSH', '9.2p1', 'openssh'], ['Redis', '7.0.15', 'redis'], ['MariaDB', '10.11.19', 'mariadb'],
    ['ISC BIND', '9.18.33', 'bind9'], ['Dovecot', '2.3.19', 'dovecot'], ['Apache httpd', '2.4.62', 'apache2'],
    ['PostgreSQL', '15.20', 'postgresql-15'], ['ProFTPD', '1.3.8', 'proftpd-dfsg']]) {
    const rule = sourceRuleFor(product)
    t.equal(rule?.source(version, 'debian', 'bookworm'), source, `${product} → ${source}`)
    t.equal(rule?.epoch, epochs[source], `${source} epoch`)
  }
  const names = SOURCE_PACKAGES.flatMap((r) => r.products.map((p) => p.toLowerCase()))
  t.equal(new Set(names).size, names.length, 'each product appears once')
  t.equal(sourceRuleFor('Unheard-of httpd'), undefined)
})
