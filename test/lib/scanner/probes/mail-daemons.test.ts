// Mail servers from Debian's packages, each started on a loopback address of its own.

import path from 'node:path'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

test('Dovecot IMAP and POP3: product and distribution, no version (the greeting shows none), STARTTLS at full level', { skip: daemonUnavailable('/usr/sbin/dovecot', 'dovecot-imapd') }, async (t) => {
  const other = (port: number): number => port < 65535 ? port + 1 : port - 1
  const d = await startDaemon({
    pkg: 'dovecot-core',
    binary: '/usr/sbin/dovecot',
    prepare: () => [['openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '5',
      '-subj', '/CN=mail.vulnscan.test']]],
    files: ({ host, port, dir }) => ({
      'dovecot.conf': [
        'protocols = imap pop3', `listen = ${host}`, `base_dir = ${path.join(dir, 'run')}`, `state_dir = ${path.join(dir, 'state')}`,
        'log_path = /dev/stderr', 'ssl = yes', `ssl_cert = <${path.join(dir, 'cert.pem')}`, `ssl_key = <${path.join(dir, 'key.pem')}`,
        'passdb {', '  driver = static', '  args = password=unused', '}',
        'userdb {', '  driver = static', '  args = uid=65534 gid=65534 home=/nonexistent', '}',
        'service imap-login {', `  inet_listener imap {\n    port = ${port}\n  }`, '  inet_listener imaps {\n    port = 0\n  }', '}',
        'service pop3-login {', `  inet_listener pop3 {\n    port = ${other(port)}\n  }`, '  inet_listener pop3s {\n    port = 0\n  }', '}', ''
      ].join('\n')
    }),
    args: ({ dir }) => ['-F', '-c', path.join(dir, 'dovecot.conf')]
  })
  t.teardown(d.stop)
  const imap = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(imap, { service: 'imap', product: 'Dovecot', distro: 'Debian' })
  t.equal(imap.version, undefined)
  t.same(imap.cpe, ['cpe:2.3:a:dovecot:dovecot:*:*:*:*:*:*:*:*'])
  const pop3 = await detectService({ host: d.host, port: other(d.port), level: 'light' })
  t.match(pop3, { service: 'pop3', product: 'Dovecot', distro: 'Debian' })
  const full = await detectService({ host: d.host, port: d.port, level: 'full' })
  t.match(full, { service: 'imap', product: 'Dovecot', extraInfo: /STARTTLS/ })
  t.equal(full.tls?.subject, 'CN=mail.vulnscan.test')
  t.equal(full.tls?.selfSigned, true)
})

test('Exim: product and version from its SMTP banner', { skip: daemonUnavailable('/usr/sbin/exim4', 'exim4-daemon-light') }, async (t) => {
  const d = await startDaemon({
    pkg: 'exim4-daemon-light',
    binary: '/usr/sbin/exim4',
    files: ({ host, port, dir }) => ({
      'exim.conf': ['primary_hostname = mx.vulnscan.test', `local_interfaces = <; ${host}.${port}`, `spool_directory = ${path.join(dir, 'spool')}`,
        'log_file_path = syslog', 'keep_environment =', `pid_file_path = ${path.join(dir, 'exim.pid')}`,
        'begin acl', 'begin routers', 'begin transports', ''].join('\n')
    }),
    args: ({ dir }) => ['-C', path.join(dir, 'exim.conf'), '-bdf']
  })
  t.teardown(d.stop)
  const want = d.packageVersion.replace(/^\d+:/, '').replace(/-.*$/, '')
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'smtp', product: 'Exim', version: want, extraInfo: 'host mx.vulnscan.test' })
  t.same(r.cpe, [`cpe:2.3:a:exim:exim:${want}:*:*:*:*:*:*:*`])
})
