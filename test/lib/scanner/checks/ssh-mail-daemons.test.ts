// Terrapin and clear-text password checks against Debian's sshd, Dropbear, Dovecot and Exim on loopback
// addresses of their own.

import path from 'node:path'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { parseKexInit, terrapin, type KexInit } from '../../../../lib/scanner/checks/transport'
import { Conn } from '../../../../lib/scanner/conn'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'
import { sshdUnavailable, startDebianSshd } from '../../../support/debian-sshd'

/** Detect, run the checks, and keep the findings of the SSH and plain-text password checks (the certificate ones,
 * which these servers' throwaway self-signed certificates also raise through STARTTLS, are tested in starttls-daemons). */
async function check (host: string, port: number): Promise<{ service: string, ids: string[], evidence: string[], concluded: boolean }> {
  const service = await detectService({ host, port, level: 'light' })
  const r = await runChecks({ host, port, service, hostnames: [] })
  const kept = r.exposures.filter((e) => !e.check.startsWith('VULNSCAN-TLS-'))
  return { service: service.service, ids: kept.map((e) => e.check), evidence: kept.map((e) => e.evidence), concluded: r.concluded }
}

/** The server's KEXINIT as it sends it, after our identification line. */
async function serverKexInit (host: string, port: number): Promise<KexInit | null> {
  const c = await Conn.open(host, port, 2000, new AbortController().signal)
  if (c === null) return null
  try {
    c.write(Buffer.from('SSH-2.0-vulnscan_test\r\n'))
    const reply = await c.read((r) => { const i = r.indexOf('\n'); return i > 0 && r.length > i + 5 && r.length >= i + 5 + r.readUInt32BE(i + 1) }, 3000)
    return parseKexInit(reply.subarray(reply.indexOf('\n') + 1))
  } finally {
    c.close()
  }
}

test('OpenSSH from Debian (strict key exchange backported): no Terrapin finding, and the KEXINIT read right', { skip: sshdUnavailable() }, async (t) => {
  const d = await startDebianSshd()
  t.teardown(d.stop)
  const r = await check(d.host, d.port)
  t.equal(r.service, 'ssh')
  t.ok(r.concluded)
  t.same(r.ids, [])
  const kex = await serverKexInit(d.host, d.port)
  t.ok(kex?.kex.includes('kex-strict-s-v00@openssh.com'), 'the server offers strict key exchange')
  t.ok(kex?.ciphers.includes('chacha20-poly1305@openssh.com'), 'and still ChaCha20-Poly1305, which strict key exchange makes safe')
  // The same offer without the strict marker is what an unpatched OpenSSH 9.2 sends: open to Terrapin.
  const unpatched = { ...kex!, kex: kex!.kex.filter((k) => k !== 'kex-strict-s-v00@openssh.com') }
  t.match(terrapin(unpatched), /offers chacha20-poly1305@openssh.com.* without kex-strict-s-v00@openssh.com/)
  t.equal(terrapin({ ...unpatched, ciphers: ['aes256-ctr'], macs: ['hmac-sha2-256-etm@openssh.com'] }), null, 'CTR with EtM is not what Terrapin needs')
  t.match(terrapin({ ...unpatched, ciphers: ['aes256-cbc'], macs: ['hmac-sha2-256-etm@openssh.com'] }), /CBC ciphers \(aes256-cbc\) with EtM MACs/)
})

test('Dropbear from Debian: the check reads its KEXINIT and says what it offers', { skip: daemonUnavailable('/usr/sbin/dropbear', 'dropbear-bin') }, async (t) => {
  const d = await startDaemon({
    pkg: 'dropbear-bin',
    binary: '/usr/sbin/dropbear',
    prepare: () => [['dropbearkey', ['-t', 'ed25519', '-f', 'host_key']]],
    args: ({ host, port, dir }) => ['-F', '-E', '-s', '-p', `${host}:${port}`, '-r', path.join(dir, 'host_key'), '-P', path.join(dir, 'dropbear.pid')]
  })
  t.teardown(d.stop)
  const kex = await serverKexInit(d.host, d.port)
  t.ok(kex !== null && kex.kex.length > 0, 'a KEXINIT came')
  const r = await check(d.host, d.port)
  t.ok(r.concluded)
  // Debian's Dropbear carries the strict key exchange fix (2022.83-1+deb12u1): finding exactly when the marker is absent.
  t.same(r.ids, kex!.kex.includes('kex-strict-s-v00@openssh.com') ? [] : ['VULNSCAN-SSH-TERRAPIN'])
})

const other = (port: number): number => port < 65535 ? port + 1 : port - 1

for (const plaintext of [true, false]) {
  test(`Dovecot IMAP and POP3 with disable_plaintext_auth = ${plaintext ? 'no' : 'yes'}`, { skip: daemonUnavailable('/usr/sbin/dovecot', 'dovecot-imapd') }, async (t) => {
    const d = await startDaemon({
      pkg: 'dovecot-core',
      binary: '/usr/sbin/dovecot',
      prepare: () => [['openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '5',
        '-subj', '/CN=mail.vulnscan.test']]],
      files: ({ host, port, dir }) => ({
        'dovecot.conf': [
          'protocols = imap pop3', `listen = ${host}`, `base_dir = ${path.join(dir, 'run')}`, `state_dir = ${path.join(dir, 'state')}`,
          'log_path = /dev/stderr', 'ssl = yes', `ssl_cert = <${path.join(dir, 'cert.pem')}`, `ssl_key = <${path.join(dir, 'key.pem')}`,
          `disable_plaintext_auth = ${plaintext ? 'no' : 'yes'}`,
          'passdb {', '  driver = static', '  args = password=unused', '}',
          'userdb {', '  driver = static', '  args = uid=65534 gid=65534 home=/nonexistent', '}',
          'service imap-login {', `  inet_listener imap {\n    port = ${port}\n  }`, '  inet_listener imaps {\n    port = 0\n  }', '}',
          'service pop3-login {', `  inet_listener pop3 {\n    port = ${other(port)}\n  }`, '  inet_listener pop3s {\n    port = 0\n  }', '}', ''
        ].join('\n')
      }),
      args: ({ dir }) => ['-F', '-c', path.join(dir, 'dovecot.conf')]
    })
    t.teardown(d.stop)
    const imap = await check(d.host, d.port)
    t.equal(imap.service, 'imap')
    t.ok(imap.concluded)
    t.same(imap.ids, plaintext ? ['VULNSCAN-IMAP-PLAINTEXT-AUTH'] : [])
    if (plaintext) t.match(imap.evidence[0], /lacks LOGINDISABLED and lists AUTH=PLAIN/)
    const pop3 = await check(d.host, other(d.port))
    t.equal(pop3.service, 'pop3')
    t.ok(pop3.concluded)
    t.same(pop3.ids, plaintext ? ['VULNSCAN-POP3-PLAINTEXT-AUTH'] : [])
  })
}

for (const beforeTls of [true, false]) {
  test(`Exim advertising AUTH PLAIN ${beforeTls ? 'on any connection' : 'only inside TLS'}`, { skip: daemonUnavailable('/usr/sbin/exim4', 'exim4-daemon-light') }, async (t) => {
    const d = await startDaemon({
      pkg: 'exim4-daemon-light',
      binary: '/usr/sbin/exim4',
      files: ({ host, port, dir }) => ({
        'exim.conf': ['primary_hostname = mx.vulnscan.test', `local_interfaces = <; ${host}.${port}`, `spool_directory = ${path.join(dir, 'spool')}`,
          'log_file_path = syslog', 'keep_environment =', `pid_file_path = ${path.join(dir, 'exim.pid')}`,
          'begin acl', 'begin routers', 'begin transports', 'begin authenticators',
          'plain:', '  driver = plaintext', '  public_name = PLAIN', '  server_prompts = :', '  server_condition = false',
          `  server_advertise_condition = ${beforeTls ? 'true' : '${if def:tls_in_cipher}'}`, ''].join('\n')
      }),
      args: ({ dir }) => ['-C', path.join(dir, 'exim.conf'), '-bdf']
    })
    t.teardown(d.stop)
    const r = await check(d.host, d.port)
    t.equal(r.service, 'smtp')
    t.ok(r.concluded)
    t.same(r.ids, beforeTls ? ['VULNSCAN-SMTP-PLAINTEXT-AUTH'] : [])
    if (beforeTls) t.match(r.evidence[0], 'EHLO on the plain connection lists AUTH PLAIN')
  })
}
