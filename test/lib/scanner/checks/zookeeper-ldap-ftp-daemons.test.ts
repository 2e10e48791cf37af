// ZooKeeper, LDAP and FTP access checks against the real daemons from Debian's packages (ZooKeeper, OpenLDAP's
// slapd, vsftpd), each started on a loopback address of its own and configured both ways: exposed (a finding)
// and fixed (none, and a conclusion).

import path from 'node:path'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { zookeeper } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

async function check (host: string, port: number): Promise<{ service: string, ids: string[], evidence: string[], concluded: boolean }> {
  const service = await detectService({ host, port, level: 'full' })
  const r = await runChecks({ host, port, service, hostnames: [] })
  return { service: service.service, ids: r.exposures.map((e) => e.check), evidence: r.exposures.map((e) => e.evidence), concluded: r.concluded }
}

const zkBin = '/usr/share/zookeeper/bin/zkServer.sh'
// Exposed by default: anyone opens a session and reads the tree. Restricting the four-letter words is no fix (srvr
// stays allowed in every ZooKeeper since 3.5, and the tree stays readable); enforcing authentication is.
const ZK_CASES = [
  { name: 'the default configuration', extra: [], exposed: true },
  { name: '4lw.commands.whitelist=ruok (four-letter words restricted, the tree still open)', extra: ['4lw.commands.whitelist=ruok'], exposed: true },
  { name: 'enforce.auth.enabled=true', extra: ['enforce.auth.enabled=true', 'enforce.auth.schemes=digest'], exposed: false }
]
for (const c of ZK_CASES) {
  test(`ZooKeeper with ${c.name}`, { skip: daemonUnavailable(zkBin, 'zookeeper'), timeout: 180_000 }, async (t) => {
    const spec = zookeeper()
    const d = await startDaemon({
      ...spec,
      files: (ctx) => {
        const files = spec.files?.(ctx) ?? {}
        files['zoo.cfg'] += c.extra.map((l) => l + '\n').join('')
        return files
      }
    })
    t.teardown(d.stop)
    const r = await check(d.host, d.port)
    t.equal(r.service, 'zookeeper')
    t.ok(r.concluded)
    t.same(r.ids, c.exposed ? ['VULNSCAN-ZOOKEEPER-NOAUTH'] : [])
    if (c.exposed) t.match(r.evidence[0], /^a session without credentials listed the root znode: .*\bzookeeper\b/)
  })
}

const slapdBin = '/usr/sbin/slapd'
const SUFFIX = 'dc=vulnscan,dc=test'
const LDIF = [
  `dn: ${SUFFIX}`, 'objectClass: dcObject', 'objectClass: organization', 'dc: vulnscan', 'o: vulnscan test', '',
  `dn: ou=people,${SUFFIX}`, 'objectClass: organizationalUnit', 'ou: people', '',
  `dn: cn=alice,ou=people,${SUFFIX}`, 'objectClass: inetOrgPerson', 'cn: alice', 'sn: Example', 'mail: alice@vulnscan.test', ''
].join('\n')
// slapd's default ACL (none written) is `access to * by * read`: anyone reads the populated suffix. The fixes:
// anonymous clients may only authenticate (the root DSE stays public, as clients need it), or anonymous binds
// are refused and every operation needs an authenticated identity.
const LDAP_CASES = [
  { name: 'the default ACL', acl: [], exposed: true },
  { name: 'access to * by anonymous auth', acl: ['access to dn.base="" by * read', 'access to * by anonymous auth by users read'], exposed: false },
  { name: 'disallow bind_anon and require authc', acl: ['disallow bind_anon', 'require authc'], exposed: false }
]
for (const c of LDAP_CASES) {
  test(`slapd with ${c.name} and a populated suffix`, { skip: daemonUnavailable(slapdBin, 'slapd') }, async (t) => {
    const conf = (dir: string): string => [
      'include /etc/ldap/schema/core.schema', 'include /etc/ldap/schema/cosine.schema', 'include /etc/ldap/schema/inetorgperson.schema',
      `pidfile ${path.join(dir, 'slapd.pid')}`, `argsfile ${path.join(dir, 'slapd.args')}`, 'modulepath /usr/lib/ldap', 'moduleload back_mdb',
      // Global directives (disallow, require) come before the first database.
      ...c.acl.filter((l) => !l.startsWith('access')),
      'database mdb', `suffix "${SUFFIX}"`, `rootdn "cn=admin,${SUFFIX}"`, `directory ${path.join(dir, 'db')}`, 'maxsize 10485760',
      ...c.acl.filter((l) => l.startsWith('access')), ''
    ].join('\n')
    const d = await startDaemon({
      pkg: 'slapd',
      binary: slapdBin,
      files: ({ dir }) => ({ 'slapd.conf': conf(dir), 'data.ldif': LDIF }),
      prepare: ({ dir }) => [['mkdir', ['db']], ['/usr/sbin/slapadd', ['-f', path.join(dir, 'slapd.conf'), '-l', path.join(dir, 'data.ldif')]]],
      args: ({ host, port, dir }) => ['-d', '0', '-f', path.join(dir, 'slapd.conf'), '-h', `ldap://${host}:${port}/`]
    })
    t.teardown(d.stop)
    const r = await check(d.host, d.port)
    t.equal(r.service, 'ldap')
    t.ok(r.concluded)
    t.same(r.ids, c.exposed ? ['VULNSCAN-LDAP-ANONYMOUS-READ'] : [])
    if (c.exposed) t.match(r.evidence[0], `anonymous one-level search of ${SUFFIX} returned entries: ou=people,${SUFFIX}`)
  })
}

const vsftpdBin = '/usr/sbin/vsftpd'
for (const anonymous of [true, false]) {
  test(`vsftpd with anonymous_enable=${anonymous ? 'YES' : 'NO'}`, { skip: daemonUnavailable(vsftpdBin, 'vsftpd') }, async (t) => {
    const d = await startDaemon({
      pkg: 'vsftpd',
      binary: vsftpdBin,
      // The anonymous root must not be writable by the ftp user; the chroot directory must exist and be empty.
      prepare: () => [['mkdir', ['-m', '755', 'pub', 'empty']]],
      files: ({ host, port, dir }) => ({
        'vsftpd.conf': [
          'listen=YES', 'listen_ipv6=NO', `listen_address=${host}`, `listen_port=${port}`, 'background=NO',
          `anonymous_enable=${anonymous ? 'YES' : 'NO'}`,
          // vsftpd refuses to start with both anonymous and local logins off: the fixed server takes local users.
          `local_enable=${anonymous ? 'NO' : 'YES'}`, 'pam_service_name=vsftpd', 'write_enable=NO',
          `anon_root=${path.join(dir, 'pub')}`, `secure_chroot_dir=${path.join(dir, 'empty')}`, 'nopriv_user=nobody',
          'xferlog_enable=NO', 'seccomp_sandbox=NO', 'delay_failed_login=0', ''
        ].join('\n')
      }),
      args: ({ dir }) => [path.join(dir, 'vsftpd.conf')]
    })
    t.teardown(d.stop)
    const r = await check(d.host, d.port)
    t.equal(r.service, 'ftp')
    t.ok(r.concluded)
    t.same(r.ids, anonymous ? ['VULNSCAN-FTP-ANONYMOUS'] : [])
    if (anonymous) t.match(r.evidence[0], /^USER anonymous accepted: 230 /)
  })
}
