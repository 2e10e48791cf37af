// Certificate and protocol checks on certificates reached through STARTTLS: Dovecot (IMAP STARTTLS, POP3 STLS)
// and Exim (SMTP STARTTLS) from Debian's packages on loopback addresses of their own, each with a certificate the
// test makes with openssl, configured both ways: everything right (no finding) and everything wrong (expired,
// self-signed, 1024-bit, for another name, TLS 1.0 accepted).

import path from 'node:path'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'
import { ca, caFiles, csr, expired, sign, valid } from '../../../support/test-certificates'

const other = (port: number): number => port < 65535 ? port + 1 : port - 1

const ALL_WRONG = ['VULNSCAN-TLS-EXPIRED', 'VULNSCAN-TLS-HOSTNAME-MISMATCH', 'VULNSCAN-TLS-LEGACY-PROTOCOL', 'VULNSCAN-TLS-SELF-SIGNED', 'VULNSCAN-TLS-WEAK-KEY']

const CASES = [
  { name: 'a CA-issued 2048-bit certificate for the name scanned, TLS 1.2 and later', good: true, expect: [] as string[] },
  { name: 'an expired, self-signed 1024-bit certificate for another name, TLS 1.0 accepted', good: false, expect: ALL_WRONG }
]
const HOSTNAME = 'mail.vulnscan.test'
const make = (good: boolean): Array<[string, string[]]> => good
  ? [...ca, ...csr(2048, HOSTNAME), ...sign(...valid)]
  : [...csr(1024, 'other.vulnscan.test'), ...sign(...expired, true)]

/** Detect as a full scan does (which upgrades and reports the certificate), then run the checks for the name scanned. */
async function check (host: string, port: number): Promise<{ service: string, starttls: boolean, ids: string[], evidence: string[], concluded: boolean }> {
  const service = await detectService({ host, port, level: 'full' })
  const r = await runChecks({ host, port, service, hostnames: [HOSTNAME] })
  return {
    service: service.service,
    starttls: service.tls !== undefined && /\bSTARTTLS\b/.test(service.extraInfo ?? ''),
    ids: r.exposures.map((e) => e.check).sort(),
    evidence: r.exposures.map((e) => e.evidence),
    concluded: r.concluded
  }
}

for (const c of CASES) {
  test(`Dovecot IMAP and POP3 with STARTTLS: ${c.name}`, { skip: daemonUnavailable('/usr/sbin/dovecot', 'dovecot-imapd') }, async (t) => {
    const d = await startDaemon({
      pkg: 'dovecot-core',
      binary: '/usr/sbin/dovecot',
      files: ({ host, port, dir }) => ({
        ...caFiles(),
        'dovecot.conf': [
          'protocols = imap pop3', `listen = ${host}`, `base_dir = ${path.join(dir, 'run')}`, `state_dir = ${path.join(dir, 'state')}`,
          'log_path = /dev/stderr', 'ssl = yes', `ssl_cert = <${path.join(dir, 'srv.pem')}`, `ssl_key = <${path.join(dir, 'srv.key')}`,
          // The wrong server takes what old servers took: TLS 1.0 and every cipher and key size.
          ...(c.good ? ['ssl_min_protocol = TLSv1.2'] : ['ssl_min_protocol = TLSv1', 'ssl_cipher_list = ALL:@SECLEVEL=0']),
          'disable_plaintext_auth = yes',
          'passdb {', '  driver = static', '  args = password=unused', '}',
          'userdb {', '  driver = static', '  args = uid=65534 gid=65534 home=/nonexistent', '}',
          'service imap-login {', `  inet_listener imap {\n    port = ${port}\n  }`, '  inet_listener imaps {\n    port = 0\n  }', '}',
          'service pop3-login {', `  inet_listener pop3 {\n    port = ${other(port)}\n  }`, '  inet_listener pop3s {\n    port = 0\n  }', '}', ''
        ].join('\n')
      }),
      prepare: () => make(c.good),
      args: ({ dir }) => ['-F', '-c', path.join(dir, 'dovecot.conf')]
    })
    t.teardown(d.stop)
    for (const [proto, port] of [['imap', d.port], ['pop3', other(d.port)]] as const) {
      const r = await check(d.host, port)
      t.equal(r.service, proto)
      t.ok(r.starttls, `${proto}: detection upgraded with STARTTLS`)
      t.ok(r.concluded, `${proto}: the checks concluded`)
      t.same(r.ids, c.expect, `${proto}: ${c.expect.length === 0 ? 'no finding' : 'every wrong thing found'}`)
      for (const e of r.evidence) t.match(e, /\(after STARTTLS\)$/, `${proto}: ${e}`)
    }
  })
}

for (const c of CASES) {
  test(`Exim SMTP with STARTTLS: ${c.name}`, { skip: daemonUnavailable('/usr/sbin/exim4', 'exim4-daemon-light') }, async (t) => {
    const d = await startDaemon({
      pkg: 'exim4-daemon-light',
      binary: '/usr/sbin/exim4',
      files: ({ host, port, dir }) => ({
        ...caFiles(),
        'exim.conf': ['primary_hostname = mx.vulnscan.test', `local_interfaces = <; ${host}.${port}`, `spool_directory = ${path.join(dir, 'spool')}`,
          'log_file_path = syslog', 'keep_environment =', `pid_file_path = ${path.join(dir, 'exim.pid')}`,
          'tls_advertise_hosts = *', `tls_certificate = ${path.join(dir, 'srv.pem')}`, `tls_privatekey = ${path.join(dir, 'srv.key')}`,
          // Debian's Exim uses GnuTLS: the wrong server adds TLS 1.0 and 1.1 to its defaults.
          ...(c.good ? ['tls_require_ciphers = NORMAL:-VERS-TLS1.0:-VERS-TLS1.1'] : ['tls_require_ciphers = NORMAL:+VERS-TLS1.0:+VERS-TLS1.1']),
          'begin acl', 'begin routers', 'begin transports', ''].join('\n')
      }),
      // Exim reads its key after dropping to its own user.
      prepare: () => [...make(c.good), ['chmod', ['755', '.']], ['chmod', ['644', 'srv.key']]],
      args: ({ dir }) => ['-C', path.join(dir, 'exim.conf'), '-bdf']
    })
    t.teardown(d.stop)
    const r = await check(d.host, d.port)
    t.equal(r.service, 'smtp')
    t.ok(r.starttls, 'detection upgraded with STARTTLS')
    t.ok(r.concluded)
    t.same(r.ids, c.expect)
    for (const e of r.evidence) t.match(e, /\(after STARTTLS\)$/, e)
  })
}

test('Exim without TLS: STARTTLS is not offered, so no certificate check has anything to say, and they conclude', { skip: daemonUnavailable('/usr/sbin/exim4', 'exim4-daemon-light') }, async (t) => {
  const d = await startDaemon({
    pkg: 'exim4-daemon-light',
    binary: '/usr/sbin/exim4',
    files: ({ host, port, dir }) => ({
      'exim.conf': ['primary_hostname = mx.vulnscan.test', `local_interfaces = <; ${host}.${port}`, `spool_directory = ${path.join(dir, 'spool')}`,
        'log_file_path = syslog', 'keep_environment =', `pid_file_path = ${path.join(dir, 'exim.pid')}`, 'tls_advertise_hosts =',
        'begin acl', 'begin routers', 'begin transports', ''].join('\n')
    }),
    args: ({ dir }) => ['-C', path.join(dir, 'exim.conf'), '-bdf']
  })
  t.teardown(d.stop)
  const r = await check(d.host, d.port)
  t.equal(r.service, 'smtp')
  t.notOk(r.starttls)
  t.ok(r.concluded)
  t.same(r.ids, [])
})
