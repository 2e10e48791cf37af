// How to start each daemon from Debian's packages that the probe tests and the service-detection lab
// (bench/service-detect.ts --lab) run: a private configuration written into the daemon's own throwaway
// directory, listening on its loopback address only, in the foreground. One spec per daemon, so a test
// and the lab always probe the same daemon configured the same way.

import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, rmdirSync } from 'node:fs'
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import path from 'node:path'
import type { DaemonContext, DaemonSpec } from './debian-daemon'
import { accepts } from './debian-daemon'

/** A second port next to the daemon's own, for daemons that listen on two (on an address of their own, it is free). */
export const neighbourPort = (port: number): number => port < 65535 ? port + 1 : port - 1

/** Whether host:port greets with bytes that start with `prefix` (for daemons that listen before they are ready). */
async function greets (host: string, port: number, prefix: string): Promise<boolean> {
  return await new Promise<boolean>((resolve) => {
    const sock = net.connect({ host, port })
    sock.setTimeout(500)
    sock.once('data', (d) => { sock.destroy(); resolve(d.toString('latin1').startsWith(prefix)) })
    sock.once('error', () => resolve(false))
    sock.once('timeout', () => { sock.destroy(); resolve(false) })
  })
}

export function cupsd (): DaemonSpec {
  return {
    pkg: 'cups-daemon',
    binary: '/usr/sbin/cupsd',
    files: ({ host, port, dir }) => ({
      'cupsd.conf': `Listen ${host}:${port}\nLogLevel warn\nWebInterface Yes\n<Location />\n  Order allow,deny\n  Allow all\n</Location>\n`,
      'cups-files.conf': [`ServerRoot ${dir}`, `CacheDir ${dir}/cache`, `StateDir ${dir}/state`, `RequestRoot ${dir}/spool`,
        `TempDir ${dir}/tmp`, 'ErrorLog stderr', 'AccessLog /dev/null', 'PageLog /dev/null', `Printcap ${dir}/printcap`, ''].join('\n')
    }),
    prepare: () => [['mkdir', ['-p', 'cache', 'state', 'spool', 'tmp']]],
    args: ({ dir }) => ['-f', '-c', path.join(dir, 'cupsd.conf'), '-s', path.join(dir, 'cups-files.conf')]
  }
}

export function lighttpd (): DaemonSpec {
  return {
    pkg: 'lighttpd',
    binary: '/usr/sbin/lighttpd',
    prepare: () => [['mkdir', ['-p', 'www']]],
    files: ({ host, port, dir }) => ({
      'lighttpd.conf': `server.document-root = "${dir}/www"\nserver.bind = "${host}"\nserver.port = ${port}\nserver.errorlog = "${dir}/error.log"\n`
    }),
    args: ({ dir }) => ['-D', '-f', path.join(dir, 'lighttpd.conf')]
  }
}

export function tinyproxy (): DaemonSpec {
  return {
    pkg: 'tinyproxy',
    binary: '/usr/bin/tinyproxy',
    files: ({ host, port }) => ({
      'tinyproxy.conf': `Port ${port}\nListen ${host}\nBind ${host}\nTimeout 30\nMaxClients 10\nAllow 127.0.0.0/8\n`
    }),
    args: ({ dir }) => ['-d', '-c', path.join(dir, 'tinyproxy.conf')]
  }
}

/** A frontend with no backend on the daemon's port (HAProxy's own error pages), and its statistics page on the neighbour port. */
export function haproxy (): DaemonSpec {
  return {
    pkg: 'haproxy',
    binary: '/usr/sbin/haproxy',
    files: ({ host, port, dir }) => ({
      'haproxy.cfg': ['global', `  stats socket ${path.join(dir, 'admin.sock')}`, 'defaults', '  mode http', '  timeout connect 1s',
        '  timeout client 5s', '  timeout server 5s', 'frontend web', `  bind ${host}:${port}`, '  default_backend none',
        'frontend stats', `  bind ${host}:${neighbourPort(port)}`, '  stats enable', '  stats uri /', 'backend none', ''].join('\n')
    }),
    args: ({ dir }) => ['-db', '-f', path.join(dir, 'haproxy.cfg')]
  }
}

export function squid (): DaemonSpec {
  return {
    pkg: 'squid',
    binary: '/usr/sbin/squid',
    files: ({ host, port, dir }) => ({
      'squid.conf': [`http_port ${host}:${port}`, 'pid_filename none', `cache_log ${path.join(dir, 'cache.log')}`, 'access_log none',
        'cache deny all', 'http_access deny all', 'shutdown_lifetime 0 seconds', ''].join('\n')
    }),
    args: ({ dir }) => ['-N', '-f', path.join(dir, 'squid.conf')],
    startMs: 20_000
  }
}

export function varnish (): DaemonSpec {
  return {
    pkg: 'varnish',
    binary: '/usr/sbin/varnishd',
    // Its VCL compiler runs unprivileged and writes into the working directory.
    prepare: () => [['chmod', ['755', '.']]],
    // The backend is a closed port on Varnish's own address: every request gets Varnish's own 503.
    args: ({ host, port, dir }) => ['-F', '-a', `${host}:${port}`, '-b', `${host}:1`, '-n', dir],
    startMs: 20_000
  }
}

export function caddy (): DaemonSpec {
  return {
    pkg: 'caddy',
    binary: '/usr/bin/caddy',
    files: ({ host, port }) => ({ Caddyfile: `{\n  admin off\n  auto_https off\n}\nhttp://${host}:${port} {\n  respond "hello"\n}\n` }),
    env: ({ dir }) => ({ HOME: dir, XDG_DATA_HOME: path.join(dir, 'data'), XDG_CONFIG_HOME: path.join(dir, 'config') }),
    args: ({ dir }) => ['run', '--config', path.join(dir, 'Caddyfile'), '--adapter', 'caddyfile']
  }
}

export const AJP_PORT = 8009

/** Tomcat with its HTTP connector; with `ajp`, an AJP/1.3 connector too, on 8009 of the same address, no secret. */
export function tomcat (opts: { ajp?: boolean } = {}): DaemonSpec {
  return {
    pkg: 'tomcat10',
    binary: '/usr/share/tomcat10/bin/catalina.sh',
    prepare: () => [['mkdir', ['-p', 'conf', 'logs', 'webapps', 'work', 'temp']], ['cp', ['/etc/tomcat10/web.xml', 'conf/web.xml']]],
    files: ({ host, port }) => ({
      'server.xml': `<?xml version="1.0"?>\n<Server port="-1" shutdown="SHUTDOWN">\n  <Service name="Catalina">\n` +
        `    <Connector address="${host}" port="${port}" protocol="HTTP/1.1"/>\n` +
        (opts.ajp === true ? `    <Connector address="${host}" port="${AJP_PORT}" protocol="AJP/1.3" secretRequired="false"/>\n` : '') +
        '    <Engine name="Catalina" defaultHost="localhost">\n      <Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false"/>\n' +
        '    </Engine>\n  </Service>\n</Server>\n'
    }),
    env: ({ dir }) => ({ CATALINA_HOME: '/usr/share/tomcat10', CATALINA_BASE: dir, CATALINA_TMPDIR: path.join(dir, 'temp') }),
    args: ({ dir }) => ['run', '-config', path.join(dir, 'server.xml')],
    startMs: 90_000
  }
}

/** Client, peer (neighbour port) and metrics (the port below) listeners, all on the daemon's own address. */
export function etcd (): DaemonSpec {
  return {
    pkg: 'etcd-server',
    binary: '/usr/bin/etcd',
    args: ({ host, port, dir }) => {
      const peer = `http://${host}:${neighbourPort(port)}`
      return ['--name', 'test', '--data-dir', path.join(dir, 'data'), '--listen-client-urls', `http://${host}:${port}`,
        '--advertise-client-urls', `http://${host}:${port}`, '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer,
        '--initial-cluster', `test=${peer}`, '--listen-metrics-urls', `http://${host}:${port > 1 ? port - 1 : port + 2}`]
    },
    startMs: 30_000
  }
}

export function prometheus (): DaemonSpec {
  return {
    pkg: 'prometheus',
    binary: '/usr/bin/prometheus',
    files: () => ({ 'prometheus.yml': 'global:\n  scrape_interval: 1h\n' }),
    args: ({ host, port, dir }) => [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--web.listen-address=${host}:${port}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`],
    startMs: 30_000
  }
}

export function jetty (): DaemonSpec {
  const start = ['-jar', '/usr/share/jetty9/start.jar', 'jetty.home=/usr/share/jetty9']
  return {
    pkg: 'jetty9',
    binary: '/usr/bin/java',
    prepare: ({ dir }) => [['java', [...start, `jetty.base=${dir}`, '--add-to-start=http']]],
    args: ({ host, port, dir }) => [...start, `jetty.base=${dir}`, `jetty.http.host=${host}`, `jetty.http.port=${port}`],
    startMs: 90_000
  }
}

export function nginx (): DaemonSpec {
  return {
    pkg: 'nginx-light',
    binary: '/usr/sbin/nginx',
    files: ({ host, port, dir }) => ({
      'nginx.conf': [`pid ${path.join(dir, 'nginx.pid')};`, `error_log ${path.join(dir, 'error.log')};`, 'events {}', 'http {',
        '  access_log off;', `  client_body_temp_path ${dir};`, `  proxy_temp_path ${dir};`, `  fastcgi_temp_path ${dir};`,
        `  uwsgi_temp_path ${dir};`, `  scgi_temp_path ${dir};`, `  server { listen ${host}:${port}; root ${dir}; }`, '}', ''].join('\n')
    }),
    args: ({ dir }) => ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;']
  }
}

/** IMAP on the daemon's port, POP3 on the neighbour port, both with STARTTLS and a self-signed certificate. */
export function dovecot (): DaemonSpec {
  return {
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
        'service pop3-login {', `  inet_listener pop3 {\n    port = ${neighbourPort(port)}\n  }`, '  inet_listener pop3s {\n    port = 0\n  }', '}', ''
      ].join('\n')
    }),
    args: ({ dir }) => ['-F', '-c', path.join(dir, 'dovecot.conf')]
  }
}

export function exim (): DaemonSpec {
  return {
    pkg: 'exim4-daemon-light',
    binary: '/usr/sbin/exim4',
    files: ({ host, port, dir }) => ({
      'exim.conf': ['primary_hostname = mx.vulnscan.test', `local_interfaces = <; ${host}.${port}`, `spool_directory = ${path.join(dir, 'spool')}`,
        'log_file_path = syslog', 'keep_environment =', `pid_file_path = ${path.join(dir, 'exim.pid')}`,
        'begin acl', 'begin routers', 'begin transports', ''].join('\n')
    }),
    args: ({ dir }) => ['-C', path.join(dir, 'exim.conf'), '-bdf']
  }
}

export function dnsmasq (): DaemonSpec {
  return {
    pkg: 'dnsmasq-base',
    binary: '/usr/sbin/dnsmasq',
    args: ({ host, port }) => ['-k', '--conf-file=/dev/null', `--listen-address=${host}`, `--port=${port}`, '--bind-interfaces',
      '--no-resolv', '--no-hosts', '-u', 'root', '--pid-file=']
  }
}

/** git daemon with an empty bare repository: served at the root when `servedAtRoot`, else the root is not a repository. */
export function gitDaemon (servedAtRoot: boolean): DaemonSpec {
  return {
    pkg: 'git',
    binary: '/usr/bin/git',
    prepare: () => [['git', ['init', '-q', '--bare', 'repo.git']]],
    args: ({ host, port, dir }) => ['daemon', `--listen=${host}`, `--port=${port}`, '--export-all', '--informative-errors',
      `--base-path=${servedAtRoot ? path.join(dir, 'repo.git') : dir}`, '--reuseaddr']
  }
}

/** ngIRCd; with `dns`, it looks up each client's hostname and says so in NOTICEs before registration. */
export function ngircd (dns: boolean): DaemonSpec {
  return {
    pkg: 'ngircd',
    binary: '/usr/sbin/ngircd',
    files: ({ host, port, dir }) => ({
      'ngircd.conf': ['[Global]', 'Name = irc.vulnscan.test', 'Info = vulnscan test server', `Listen = ${host}`, `Ports = ${port}`,
        `PidFile = ${path.join(dir, 'ngircd.pid')}`, 'MotdPhrase = test', '[Options]', 'PAM = no', 'Ident = no', `DNS = ${dns ? 'yes' : 'no'}`, ''].join('\n')
    }),
    args: ({ dir }) => ['-n', '-f', path.join(dir, 'ngircd.conf')]
  }
}

export function inspircd (): DaemonSpec {
  return {
    pkg: 'inspircd',
    binary: '/usr/sbin/inspircd',
    files: ({ host, port, dir }) => ({
      'inspircd.conf': [
        '<server name="irc.vulnscan.test" description="vulnscan test" network="VulnscanNet">',
        '<admin name="test" nick="test" email="test@vulnscan.test">',
        `<bind address="${host}" port="${port}" type="clients">`,
        '<power diepass="" restartpass="">',
        '<connect allow="*" timeout="60" pingfreq="120" localmax="10" globalmax="10" maxconnwarn="off" resolvehostnames="no" useident="no">',
        `<pid file="${path.join(dir, 'inspircd.pid')}">`,
        '<files motd="/dev/null" rules="/dev/null">',
        // No lookups are made (resolvehostnames="no"); should one be, it goes nowhere but the daemon's own address.
        `<dns server="${host}" timeout="1">`,
        '<options>', '<security>', '<performance>', '<limits>',
        `<log method="file" type="* -USERINPUT -USEROUTPUT" level="default" target="${path.join(dir, 'ircd.log')}">`, ''
      ].join('\n')
    }),
    args: ({ dir }) => ['--nofork', `--config=${path.join(dir, 'inspircd.conf')}`, '--runasroot']
  }
}

export function slapd (): DaemonSpec {
  return {
    pkg: 'slapd',
    binary: '/usr/sbin/slapd',
    files: ({ dir }) => ({
      'slapd.conf': `include /etc/ldap/schema/core.schema\npidfile ${path.join(dir, 'slapd.pid')}\nargsfile ${path.join(dir, 'slapd.args')}\n`
    }),
    args: ({ host, port, dir }) => ['-d', '0', '-f', path.join(dir, 'slapd.conf'), '-h', `ldap://${host}:${port}/`]
  }
}

/** Mosquitto over TLS on 8883 (MQTT over TLS has its port; the address is the daemon's alone), anonymous clients allowed. */
export const MOSQUITTO_TLS_PORT = 8883

export function mosquittoTls (): DaemonSpec {
  return {
    pkg: 'mosquitto',
    binary: '/usr/sbin/mosquitto',
    // Mosquitto drops to its own user and must still read its key.
    prepare: () => [['openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '5',
      '-subj', '/CN=broker.vulnscan.test']], ['chmod', ['755', '.']], ['chmod', ['644', 'key.pem']]],
    files: ({ host, dir }) => ({
      'mosquitto.conf': ['persistence false', 'log_dest stderr', `listener ${MOSQUITTO_TLS_PORT} ${host}`, `certfile ${path.join(dir, 'cert.pem')}`,
        `keyfile ${path.join(dir, 'key.pem')}`, 'allow_anonymous true', ''].join('\n')
    }),
    args: ({ dir }) => ['-c', path.join(dir, 'mosquitto.conf')],
    ready: async ({ host }) => await accepts(host, MOSQUITTO_TLS_PORT)
  }
}

export function memcached (): DaemonSpec {
  return {
    pkg: 'memcached',
    binary: '/usr/bin/memcached',
    args: ({ host, port }) => ['-l', host, '-p', String(port), '-U', '0', '-u', 'nobody']
  }
}

/** rsync daemon with one read-only module. */
export function rsyncd (): DaemonSpec {
  return {
    pkg: 'rsync',
    binary: '/usr/bin/rsync',
    files: ({ dir }) => ({ 'rsyncd.conf': `use chroot = no\npid file =\n[pub]\n  path = ${dir}\n  read only = yes\n` }),
    args: ({ host, port, dir }) => ['--daemon', '--no-detach', `--config=${path.join(dir, 'rsyncd.conf')}`, `--address=${host}`,
      `--port=${port}`, `--log-file=${path.join(dir, 'rsyncd.log')}`]
  }
}

export function prosody (): DaemonSpec {
  return {
    pkg: 'prosody',
    binary: '/usr/bin/prosody',
    prepare: () => [['mkdir', ['-p', 'data', 'certs']]],
    files: ({ host, port, dir }) => ({
      'prosody.cfg.lua': ['run_as_root = true', `pidfile = "${path.join(dir, 'prosody.pid')}"`, `data_path = "${path.join(dir, 'data')}"`,
        `certificates = "${path.join(dir, 'certs')}"`, `interfaces = { "${host}" }`, `c2s_interfaces = { "${host}" }`, `c2s_ports = { ${port} }`,
        's2s_ports = { }', 'c2s_direct_tls_ports = { }', 'http_ports = { }', 'https_ports = { }', 'component_ports = { }',
        'c2s_require_encryption = false', 'log = { { levels = { min = "warn" }, to = "console" } }',
        'modules_enabled = { "saslauth", "disco" }', 'modules_disabled = { "s2s" }', 'VirtualHost "vulnscan.test"', ''].join('\n')
    }),
    args: ({ dir }) => ['-F', '--config', path.join(dir, 'prosody.cfg.lua')]
  }
}

/**
 * ejabberd with one client (c2s) listener on the daemon's address, as Debian's ejabberd.yml configures it (STARTTLS
 * required, a throwaway certificate), some of its default modules, and its Mnesia database in the daemon's directory.
 * The Erlang node runs without distribution (no node name, so no epmd, cookie or distribution port), in the foreground.
 */
export function ejabberd (): DaemonSpec {
  return {
    pkg: 'ejabberd',
    binary: '/usr/bin/erl',
    prepare: () => [['openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '5',
      '-subj', '/CN=vulnscan.test']]],
    files: ({ host, port, dir }) => ({
      'ejabberd.yml': ['hosts:', '  - vulnscan.test', 'loglevel: warning', 'log_rotate_count: 0', 'certfiles:',
        `  - "${path.join(dir, 'key.pem')}"`, `  - "${path.join(dir, 'cert.pem')}"`, 'listen:', '  -', `    port: ${port}`, `    ip: "${host}"`,
        '    module: ejabberd_c2s', '    max_stanza_size: 262144', '    access: c2s', '    starttls_required: true',
        'disable_sasl_mechanisms:', '  - "digest-md5"', '  - "X-OAUTH2"', 'auth_password_format: scram',
        'access_rules:', '  c2s:', '    allow: all', 'modules:',
        ...['mod_caps', 'mod_disco', 'mod_ping', 'mod_roster', 'mod_stream_mgmt', 'mod_version'].map((m) => `  ${m}: {}`), ''].join('\n')
    }),
    env: ({ dir }) => ({ HOME: dir, EJABBERD_CONFIG_PATH: path.join(dir, 'ejabberd.yml'), EJABBERD_LOG_PATH: path.join(dir, 'ejabberd.log'),
      ERL_CRASH_DUMP: path.join(dir, 'erl_crash.dump'), ERL_CRASH_DUMP_BYTES: '0', ERL_LIBS: '/usr/lib/x86_64-linux-gnu',
      CONTRIB_MODULES_PATH: path.join(dir, 'contrib'), CONTRIB_MODULES_CONF_DIR: path.join(dir, 'contrib') }),
    args: ({ dir }) => ['-noinput', '-mnesia', 'dir', `"${path.join(dir, 'mnesia')}"`, '-s', 'ejabberd'],
    startMs: 60_000
  }
}

/** ZooKeeper without its admin HTTP server and JMX, which would both listen on every address. */
export function zookeeper (): DaemonSpec {
  return {
    pkg: 'zookeeper',
    binary: '/usr/share/zookeeper/bin/zkServer.sh',
    files: ({ host, port, dir }) => ({
      'zoo.cfg': [`dataDir=${path.join(dir, 'data')}`, 'tickTime=2000', `clientPort=${port}`, `clientPortAddress=${host}`,
        'admin.enableServer=false', ''].join('\n')
    }),
    env: ({ dir }) => ({ JMXDISABLE: 'true', ZOO_LOG_DIR: dir }),
    args: ({ dir }) => ['start-foreground', path.join(dir, 'zoo.cfg')],
    startMs: 90_000
  }
}

export function dropbear (): DaemonSpec {
  return {
    pkg: 'dropbear-bin',
    binary: '/usr/sbin/dropbear',
    prepare: () => [['dropbearkey', ['-t', 'ed25519', '-f', 'host_key']]],
    args: ({ host, port, dir }) => ['-F', '-E', '-s', '-p', `${host}:${port}`, '-r', path.join(dir, 'host_key'), '-P', path.join(dir, 'dropbear.pid')]
  }
}

export const SSHD = '/usr/sbin/sshd'

/** Debian's OpenSSH server with a throwaway host key, no PID file and every login refused. */
export function sshd (): DaemonSpec {
  return {
    pkg: 'openssh-server',
    binary: SSHD,
    prepare: () => [
      ['ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', 'host_ed25519_key']],
      // Debian's sshd refuses to start without its privilege separation directory, which the system
      // service's unit normally creates.
      ...(process.getuid?.() === 0 && !existsSync('/run/sshd') ? [['mkdir', ['-m', '755', '-p', '/run/sshd']] as [string, string[]]] : [])
    ],
    files: ({ host, port, dir }: DaemonContext) => ({
      sshd_config: [`ListenAddress ${host}:${port}`, `HostKey ${path.join(dir, 'host_ed25519_key')}`, 'PidFile none', 'UsePAM no',
        'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'PubkeyAuthentication no', 'AuthorizedKeysFile none',
        'PermitRootLogin no', 'StrictModes no', ''].join('\n')
    }),
    args: ({ dir }) => ['-D', '-e', '-f', path.join(dir, 'sshd_config')],
    ready: async ({ host, port }) => await greets(host, port, 'SSH-')
  }
}

/** inetutils telnetd, run per connection as inetd would (startInetd). */
export const telnetd = { pkg: 'inetutils-telnetd', binary: '/usr/sbin/telnetd' }

/** DNS on its own port: the daemon's address is its own, so 53 is free there. */
export const DNS_PORT = 53

/** BIND 9, authoritative for nothing, answering `version.bind` as shipped (Debian leaves it on). */
export function named (): DaemonSpec {
  return {
    pkg: 'bind9',
    binary: '/usr/sbin/named',
    // named listens on the addresses its interfaces hold, not on any it is told.
    interfaceAddress: true,
    files: ({ host, dir }) => ({
      'named.conf': ['options {', `  directory "${dir}";`, `  listen-on port ${DNS_PORT} { ${host}; };`, '  listen-on-v6 { none; };',
        '  pid-file none;', '  session-keyfile none;', '  recursion no;', '  dnssec-validation no;', '};',
        // No rndc channel: its default would listen on 127.0.0.1:953.
        'controls { };', ''].join('\n')
    }),
    args: ({ dir }) => ['-g', '-c', path.join(dir, 'named.conf')],
    ready: async ({ host }) => await accepts(host, DNS_PORT),
    startMs: 20_000
  }
}

/** rpcbind answers only on 111 (clients know no other port); the daemon's address is its own. */
export const RPCBIND_PORT = 111

/**
 * rpcbind binds TCP and UDP on every address from /etc/netconfig, whatever it is told (`-h` limits
 * UDP only). So it is socket-activated: systemd-socket-activate listens on the daemon's address and
 * hands that socket over, and rpcbind itself runs in a network namespace of its own (its other
 * sockets reach nobody) with a private /run (its lock file and local socket).
 */
export function rpcbind (): DaemonSpec {
  return {
    pkg: 'rpcbind',
    binary: '/usr/bin/systemd-socket-activate',
    args: ({ host }) => ['-l', `${host}:${RPCBIND_PORT}`, 'unshare', '--net', '--mount', 'sh', '-c',
      'mount -t tmpfs none /run && exec /usr/sbin/rpcbind -f'],
    ready: async ({ host }) => await accepts(host, RPCBIND_PORT)
  }
}

/** SMB over direct TCP on its own port, on the daemon's address alone. */
export const SMB_PORT = 445

/**
 * Samba's smbd as a standalone server with no shares, NetBIOS off, state kept in its directory; with `smb1`,
 * speaking SMB1 (NT1) only, as Samba 3.x did.
 */
export function smbd (opts: { smb1?: boolean } = {}): DaemonSpec {
  return {
    pkg: 'samba',
    binary: '/usr/sbin/smbd',
    // smbd listens on the addresses its interfaces hold (`interfaces` names which).
    interfaceAddress: true,
    prepare: () => [['mkdir', ['-p', 'ncalrpc']]],
    files: ({ host, dir }) => ({
      'smb.conf': ['[global]', `  interfaces = ${host}`, '  bind interfaces only = yes', `  smb ports = ${SMB_PORT}`, '  disable netbios = yes',
        '  server role = standalone server', '  netbios name = VULNSCANTEST', '  workgroup = VULNSCAN',
        ...['pid directory', 'lock directory', 'state directory', 'cache directory', 'private dir'].map((k) => `  ${k} = ${dir}`),
        `  ncalrpc dir = ${path.join(dir, 'ncalrpc')}`, `  log file = ${path.join(dir, 'log.%m')}`,
        ...(opts.smb1 === true ? ['  server min protocol = NT1', '  server max protocol = NT1'] : []), ''].join('\n')
    }),
    // A process group of its own (no --no-process-group): smbd signals its whole group when it stops.
    args: ({ dir }) => ['--foreground', '--debug-stdout', '-s', path.join(dir, 'smb.conf')],
    ready: async ({ host }) => await accepts(host, SMB_PORT),
    startMs: 20_000
  }
}

/**
 * Where `.ci/run` unpacks packages that conflict with installed ones (`dpkg-deb -x`, never installed): Postfix and Sendmail are
 * mail transport agents, as is the Exim other tests need. Inside the project (`.cache/debs`, not committed).
 */
export const UNPACKED_DEBS = process.env.VULNSCAN_UNPACKED_DEBS ?? path.join(__dirname, '..', '..', '.cache', 'debs')

/** Postfix from its unpacked package: master and smtpd only, on the daemon's address, logging into its directory. */
export function postfix (): DaemonSpec {
  const root = path.join(UNPACKED_DEBS, 'postfix')
  const libs = path.join(root, 'usr/lib/postfix')
  return {
    pkg: 'postfix',
    binary: path.join(libs, 'sbin/master'),
    // Postfix, like named, takes inet_interfaces only from the addresses interfaces hold.
    interfaceAddress: true,
    // Its unprivileged services reach their sockets and data through the directory.
    prepare: () => [['chmod', ['755', '.']], ['mkdir', ['-p', 'queue/pid', 'queue/private', 'queue/public', 'data']],
      ['chown', ['nobody', 'queue/private', 'queue/public', 'data']], ['touch', ['dynamicmaps.cf']]],
    files: ({ host, port, dir }) => ({
      'main.cf': ['compatibility_level = 3.6', `queue_directory = ${path.join(dir, 'queue')}`, `data_directory = ${path.join(dir, 'data')}`,
        `daemon_directory = ${path.join(libs, 'sbin')}`, `shlib_directory = ${libs}`, `meta_directory = ${dir}`,
        `command_directory = ${path.join(root, 'usr/sbin')}`,
        // Unprivileged users of the base system: the package's own postfix user is never created.
        'mail_owner = nobody', 'default_privs = daemon', 'setgid_group = mail',
        // No lookups behind smtpd (they would need the proxymap service): nothing is ever delivered.
        'local_recipient_maps =', 'alias_maps =', 'myhostname = mx.vulnscan.test', `inet_interfaces = ${host}`, 'inet_protocols = ipv4',
        `maillog_file_prefixes = ${dir}`, `maillog_file = ${path.join(dir, 'maillog')}`,
        // master starts its children with a clean environment: they need the unpacked libraries too.
        `import_environment = MAIL_CONFIG LD_LIBRARY_PATH=${libs}`, ''].join('\n'),
      'master.cf': [`${host}:${port} inet n - n - - smtpd`, 'anvil unix - - n - 1 anvil', 'postlog unix-dgram n - n - 1 postlogd', ''].join('\n')
    }),
    env: () => ({ LD_LIBRARY_PATH: libs }),
    args: ({ dir }) => ['-d', '-c', dir]
  }
}

/** Sendmail's own version and the greeting and configuration version Debian's generated sendmail.cf carries, from the unpacked sendmail-cf. */
function sendmailCfDefaults (cf: string): { greeting: string, cfVersion: string } {
  const version = /^DZ([\d.]+)/m.exec(readFileSync(path.join(cf, 'm4/version.m4'), 'utf8'))?.[1]
  const debian = readFileSync(path.join(cf, 'ostype/debian.m4'), 'utf8')
  const greeting = /define\(`confSMTP_LOGIN_MSG', `(.*)'\)dnl$/m.exec(debian)?.[1]
  const suffix = /define\(`confCF_VERSION', `([^']+)'\)/.exec(debian)?.[1]
  if (!version || !greeting || !suffix) throw new Error(`no greeting or configuration version in ${cf}`)
  return { greeting, cfVersion: `${version}/${suffix}` }
}

/**
 * Sendmail from its unpacked package (sendmail-bin conflicts with the installed Exim): one SMTP daemon on the
 * daemon's address with a minimal sendmail.cf that delivers nothing, greeting as Debian's generated one does.
 * Sendmail qualifies the machine's host name before it reads any configuration, asking DNS when /etc/hosts
 * has no dotted name: it runs in UTS and mount namespaces of its own, with a dotted host name and a
 * name-service switch of files only, so it never waits for or asks a name server.
 */
export function sendmail (): DaemonSpec {
  const root = path.join(UNPACKED_DEBS, 'sendmail')
  const binary = path.join(root, 'usr/libexec/sendmail/sendmail')
  return {
    pkg: 'sendmail-bin',
    binary: '/usr/bin/unshare',
    prepare: () => [['mkdir', ['-m', '700', 'queue']]],
    files: ({ host, port, dir }) => {
      const { greeting, cfVersion } = sendmailCfDefaults(path.join(root, 'usr/share/sendmail/cf'))
      return {
        'sendmail.cf': ['V10/Berkeley', 'Djmx.vulnscan.test', `DZ${cfVersion}`, `O SmtpGreetingMessage=${greeting}`,
          `O DaemonPortOptions=Name=MTA, Family=inet, Addr=${host}, Port=${port}`, `O QueueDirectory=${path.join(dir, 'queue')}`,
          `O PidFile=${path.join(dir, 'sendmail.pid')}`, `O ServiceSwitchFile=${path.join(dir, 'service.switch')}`,
          'O DontProbeInterfaces=true', 'O Timeout.ident=0', 'O LogLevel=9',
          'Mlocal, P=/bin/false, F=lsDFMAq, S=0, R=0, A=false', 'Mprog, P=/bin/false, F=lsDFMoqeu9, S=0, R=0, D=$z:/, A=false',
          'S0', 'R$*\t$#error $@ 5.1.1 $: "550 nothing is delivered here"', ''].join('\n'),
        'service.switch': 'hosts files\naliases files\n',
        'nsswitch.conf': 'hosts: files\n'
      }
    },
    args: ({ dir }) => ['--uts', '--mount', 'sh', '-c',
      'hostname mx.vulnscan.test && mount --bind "$0/nsswitch.conf" /etc/nsswitch.conf && exec "$1" -bD -C "$0/sendmail.cf"', dir, binary],
    ready: async ({ host, port }) => await greets(host, port, '220 ')
  }
}

/**
 * TigerVNC's X server with RFB on the daemon's address, no authentication, no X11 over TCP or a
 * filesystem socket (its abstract one is local only). The display number comes from the port, so two
 * runs side by side do not share one.
 */
export function xtigervnc (): DaemonSpec {
  return {
    pkg: 'tigervnc-standalone-server',
    binary: '/usr/bin/Xtigervnc',
    args: ({ host, port }) => [`:${1000 + (port % 20000)}`, '-rfbport', String(port), '-interface', host, '-SecurityTypes', 'None',
      '-nolisten', 'tcp', '-nolisten', 'unix', '-geometry', '640x480']
  }
}

/** InfluxDB 1.x: HTTP API on the daemon's port, its RPC service on the neighbour port, usage reporting off. */
export function influxd (): DaemonSpec {
  return {
    pkg: 'influxdb',
    binary: '/usr/bin/influxd',
    files: ({ host, port, dir }) => ({
      'influxdb.conf': ['reporting-enabled = false', `bind-address = "${host}:${neighbourPort(port)}"`, '[meta]', `  dir = "${path.join(dir, 'meta')}"`,
        '[data]', `  dir = "${path.join(dir, 'data')}"`, `  wal-dir = "${path.join(dir, 'wal')}"`, '[http]', `  bind-address = "${host}:${port}"`, ''].join('\n')
    }),
    args: ({ dir }) => ['run', '-config', path.join(dir, 'influxdb.conf')],
    startMs: 20_000
  }
}

/** xrdp in the foreground on the daemon's address, offering TLS (a throwaway certificate) or standard RDP security. */
export function xrdp (): DaemonSpec {
  return {
    pkg: 'xrdp',
    binary: '/usr/sbin/xrdp',
    prepare: () => [['openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '5',
      '-subj', '/CN=rdp.vulnscan.test']]],
    files: ({ host, port, dir }) => ({
      'xrdp.ini': ['[Globals]', 'ini_version=1', 'fork=true', `port=tcp://${host}:${port}`, 'security_layer=negotiate',
        `certificate=${path.join(dir, 'cert.pem')}`, `key_file=${path.join(dir, 'key.pem')}`, 'ssl_protocols=TLSv1.2, TLSv1.3',
        '[Logging]', `LogFile=${path.join(dir, 'xrdp.log')}`, 'LogLevel=WARNING', 'EnableSyslog=false', ''].join('\n')
    }),
    args: ({ dir }) => ['--nodaemon', '--config', path.join(dir, 'xrdp.ini')]
  }
}

/**
 * Courier-IMAP from its unpacked packages (courier-imap conflicts with the installed Dovecot): its
 * pre-login server imaplogin, run per connection as its couriertcpd would (startInetd), with the
 * libraries of the unpacked courier-authlib, courier-base and their dependencies. Nobody logs in.
 */
export function courierImap (): { pkg: string, binary: string, args: string[], imaplogin: string } {
  const root = path.join(UNPACKED_DEBS, 'courier-imap')
  const libs = ['usr/lib', 'usr/lib/courier-authlib', 'usr/lib/x86_64-linux-gnu'].map((d) => path.join(root, d)).join(':')
  const imaplogin = path.join(root, 'usr/lib/courier/courier/imaplogin')
  return {
    pkg: 'courier-imap',
    binary: '/usr/bin/env',
    args: [`LD_LIBRARY_PATH=${libs}`, 'TCPREMOTEIP=127.0.0.1', imaplogin, path.join(root, 'usr/lib/courier-authlib/authlib'), path.join(root, 'usr/bin/imapd')],
    imaplogin
  }
}

/** ActiveMQ 5 with one OpenWire connector on the daemon's address, no persistence, no JMX (its RMI port would listen on every address). */
export function activemq (): DaemonSpec {
  return {
    pkg: 'activemq',
    binary: '/usr/bin/java',
    prepare: () => [['mkdir', ['-p', 'data']]],
    files: ({ host, port, dir }) => ({
      'activemq.xml': ['<beans xmlns="http://www.springframework.org/schema/beans" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"',
        '  xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans-2.0.xsd' +
        ' http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">',
        `  <broker xmlns="http://activemq.apache.org/schema/core" brokerName="vulnscan" persistent="false" useJmx="false" dataDirectory="${path.join(dir, 'data')}">`,
        `    <transportConnectors><transportConnector name="openwire" uri="tcp://${host}:${port}"/></transportConnectors>`,
        '  </broker>', '</beans>', ''].join('\n')
    }),
    args: ({ dir }) => ['-Xmx256m', '-Dactivemq.home=/usr/share/activemq', `-Dactivemq.base=${dir}`, `-Dactivemq.conf=${dir}`,
      `-Dactivemq.data=${path.join(dir, 'data')}`, '-jar', '/usr/share/activemq/bin/activemq.jar', 'start', `xbean:file:${path.join(dir, 'activemq.xml')}`],
    startMs: 90_000
  }
}

/**
 * Cyrus IMAP from its unpacked packages (cyrus-imapd conflicts with the installed Dovecot): its master
 * with one imapd service on the daemon's address, running as nobody (the package's cyrus user is never
 * created), state and mail spool in the daemon's directory.
 */
export function cyrusImapd (): DaemonSpec {
  const root = path.join(UNPACKED_DEBS, 'cyrus-imapd')
  const bin = path.join(root, 'usr/lib/cyrus/bin')
  return {
    pkg: 'cyrus-imapd',
    binary: path.join(bin, 'master'),
    prepare: () => [['chmod', ['755', '.']], ['mkdir', ['-p', 'lib/socket', 'lib/proc', 'lib/db', 'lib/log', 'lib/lock', 'spool']],
      ['chown', ['-R', 'nobody', 'lib', 'spool']]],
    files: ({ host, port, dir }) => ({
      'imapd.conf': [`configdirectory: ${path.join(dir, 'lib')}`, `partition-default: ${path.join(dir, 'spool')}`, 'servername: imap.vulnscan.test',
        'cyrus_user: nobody', 'cyrus_group: nogroup', 'sasl_pwcheck_method: auxprop', 'sasl_mech_list: PLAIN', ''].join('\n'),
      'cyrus.conf': ['START {', '}', 'SERVICES {', `  imap cmd="${path.join(bin, 'imapd')} -C ${path.join(dir, 'imapd.conf')}" listen="${host}:${port}" prefork=0`,
        '}', 'EVENTS {', '}', 'DAEMON {', '}', ''].join('\n')
    }),
    env: () => ({ LD_LIBRARY_PATH: path.join(root, 'usr/lib/x86_64-linux-gnu') }),
    args: ({ dir }) => ['-C', path.join(dir, 'imapd.conf'), '-M', path.join(dir, 'cyrus.conf'), '-p', path.join(dir, 'master.pid')]
  }
}

/** ClickHouse with its native TCP interface alone (no HTTP or interserver port) on the daemon's address; user `default` without a password. */
export function clickhouse (): DaemonSpec {
  return {
    pkg: 'clickhouse-server',
    binary: '/usr/sbin/clickhouse-server',
    files: ({ host, port, dir }) => ({
      'config.xml': ['<yandex>', '  <logger><level>warning</level><console>1</console></logger>', `  <listen_host>${host}</listen_host>`,
        `  <tcp_port>${port}</tcp_port>`, `  <path>${dir}/data/</path>`, `  <tmp_path>${dir}/tmp/</tmp_path>`,
        `  <user_files_path>${dir}/user_files/</user_files_path>`, `  <format_schema_path>${dir}/format_schemas/</format_schema_path>`,
        `  <users_config>${path.join(dir, 'users.xml')}</users_config>`, '  <mark_cache_size>5368709</mark_cache_size>', '</yandex>', ''].join('\n'),
      'users.xml': ['<yandex>', '  <profiles><default/></profiles>',
        '  <users><default><password></password><networks><ip>127.0.0.0/8</ip></networks><profile>default</profile><quota>default</quota></default></users>',
        '  <quotas><default/></quotas>', '</yandex>', ''].join('\n')
    }),
    args: ({ dir }) => [`--config-file=${path.join(dir, 'config.xml')}`],
    startMs: 30_000
  }
}

/** TLS for dockerd: files the caller's `prepare` leaves in the daemon's directory, and whether clients must show a certificate. */
export interface DockerdTls {
  files?: Record<string, string>
  prepare: (ctx: DaemonContext) => Array<[string, string[]]>
  /** CA, certificate and key file names in the directory. */
  ca: string
  cert: string
  key: string
  /** `--tlsverify`: only clients with a certificate from the CA get in. */
  verify: boolean
  /** A client certificate and key from the CA (with `verify`, the test's own readiness probe needs them). */
  clientCert?: string
  clientKey?: string
}

/** Whether dockerd answers `GET /_ping` with OK (it listens before it has initialised, and is not ready until it answers). */
async function dockerPings (host: string, port: number, tls: false | { cert?: string, key?: string }): Promise<boolean> {
  return await new Promise<boolean>((resolve) => {
    const opts = { host, port, path: '/_ping', timeout: 1000 }
    const req = tls === false
      ? http.get(opts)
      : https.get({ ...opts, rejectUnauthorized: false, cert: tls.cert && readFileSync(tls.cert), key: tls.key && readFileSync(tls.key) })
    req.once('response', (res) => {
      let body = ''
      res.on('data', (d: Buffer) => { body += d.toString() })
      res.on('end', () => resolve(res.statusCode === 200 && body === 'OK'))
    })
    req.once('timeout', () => req.destroy())
    req.once('error', () => resolve(false))
  })
}

/** The runtime directory dockerd creates whatever its exec root (it looks for plugin sockets there). */
const DOCKER_RUN_DIR = '/run/docker'

/**
 * Docker Engine (dockerd) on TCP only, with its own data and exec roots, pid file, configuration (its key file
 * inside the directory, not /etc/docker) and a containerd it starts and stops itself (state under the exec root).
 * No networking of its own: no bridge, iptables, IP forwarding, masquerading or userland proxy.
 */
export function dockerd (tls?: DockerdTls): DaemonSpec {
  const hadRunDir = existsSync(DOCKER_RUN_DIR)
  return {
    pkg: 'docker.io',
    binary: '/usr/sbin/dockerd',
    files: ({ dir }) => ({ ...tls?.files, 'daemon.json': JSON.stringify({ 'deprecated-key-path': path.join(dir, 'key.json') }) + '\n' }),
    prepare: (ctx) => tls?.prepare(ctx) ?? [],
    args: ({ host, port, dir }) => ['-H', `tcp://${host}:${port}`, '--config-file', path.join(dir, 'daemon.json'),
      '--data-root', path.join(dir, 'data'), '--exec-root', path.join(dir, 'exec'), '--pidfile', path.join(dir, 'dockerd.pid'),
      '--storage-driver', 'vfs', '--bridge', 'none', '--iptables=false', '--ip6tables=false', '--ip-forward=false', '--ip-masq=false',
      '--userland-proxy=false', '--log-level', 'warn',
      ...(tls === undefined
        ? []
        // Given a CA, dockerd 20.10 asks clients for certificates even with --tls alone: TLS without them names none.
        : [...(tls.verify ? ['--tlsverify', '--tlscacert', path.join(dir, tls.ca)] : ['--tls', '--tlsverify=false']),
            '--tlscert', path.join(dir, tls.cert), '--tlskey', path.join(dir, tls.key)])],
    ready: async ({ host, port, dir }) => await dockerPings(host, port, tls === undefined
      ? false
      : { cert: tls.clientCert && path.join(dir, tls.clientCert), key: tls.clientKey && path.join(dir, tls.clientKey) }),
    // Stopping, it stops its containerd and unmounts its data root: killed half-way (as a stop during its start would), it leaves both.
    startMs: 60_000,
    stopMs: 30_000,
    cleanup: ({ dir }) => {
      // Should dockerd have been killed before it could: its containerd, and the mounts it made under its directory.
      try {
        const pid = Number(readFileSync(path.join(dir, 'exec', 'containerd', 'containerd.pid'), 'utf8').trim())
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
        if (Number.isInteger(pid) && pid > 1 && stat.includes('(containerd)') && !/\) Z /.test(stat)) process.kill(pid, 'SIGKILL')
      } catch {}
      const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4])
        .filter((m): m is string => m !== undefined && m.startsWith(dir + '/')).sort((a, b) => b.length - a.length)
      for (const m of mounts) spawnSync('umount', ['-l', m])
      // The runtime directory, when this daemon made it and left nothing but an empty plugins directory in it.
      if (hadRunDir) return
      try {
        if (readdirSync(path.join(DOCKER_RUN_DIR, 'plugins')).length === 0) rmdirSync(path.join(DOCKER_RUN_DIR, 'plugins'))
        rmdirSync(DOCKER_RUN_DIR)
      } catch {}
    }
  }
}

export const DISTCC_PORT = 3632

/** distccd accepting jobs from the loopback network (`--allow`), or from one other address only (refusing ours). */
export function distccd (opts: { allow?: string } = {}): DaemonSpec {
  return {
    pkg: 'distcc',
    binary: '/usr/bin/distccd',
    env: ({ dir }) => ({ TMPDIR: dir }),
    prepare: () => [['chmod', ['1777', '.']]],
    args: ({ host }) => ['--daemon', '--no-detach', '--log-stderr', '--log-level=notice', '--user', 'nobody', '--jobs', '2',
      '--allow', opts.allow ?? '127.0.0.0/8', '--listen', host, '--port', String(DISTCC_PORT)],
    ready: async ({ host }) => await accepts(host, DISTCC_PORT)
  }
}

/**
 * A bind shell: socat handing each connection to a shell (`sh`: silent until given a line; `bash`: bash -i on a
 * pseudo-terminal, which greets with its prompt). Children end when their connection closes.
 */
export function socatShell (kind: 'sh' | 'bash'): DaemonSpec {
  return {
    pkg: 'socat',
    binary: '/usr/bin/socat',
    args: ({ host, port }) => [`TCP-LISTEN:${port},bind=${host},reuseaddr,fork`,
      kind === 'sh' ? 'EXEC:/bin/sh,stderr' : 'EXEC:/bin/bash --norc --noprofile -i,pty,stderr,sane'],
    env: () => ({ PS1: '\\s-\\v\\$ ', HOME: '/nonexistent' })
  }
}

/**
 * MariaDB's server on a throwaway data directory (mariadb-install-db), with a remote root account for the
 * loopback network: a blank password (`rootPassword: ''`, the exposure) or the one given.
 */
export function mariadbd (opts: { rootPassword: string }): DaemonSpec {
  const quoted = opts.rootPassword.replace(/'/g, "''")
  return {
    pkg: 'mariadb-server',
    binary: '/usr/sbin/mariadbd',
    prepare: ({ dir }) => [['mariadb-install-db', ['--no-defaults', `--datadir=${path.join(dir, 'data')}`, '--auth-root-authentication-method=socket',
      '--skip-test-db', '--user=root']]],
    files: () => ({ 'init.sql': `CREATE OR REPLACE USER 'root'@'127.%' IDENTIFIED BY '${quoted}';\nGRANT ALL ON *.* TO 'root'@'127.%';\n` }),
    args: ({ host, port, dir }) => ['--no-defaults', `--datadir=${path.join(dir, 'data')}`, `--socket=${path.join(dir, 'sock')}`,
      `--pid-file=${path.join(dir, 'pid')}`, `--bind-address=${host}`, `--port=${port}`, '--skip-name-resolve', '--user=root',
      `--init-file=${path.join(dir, 'init.sql')}`, '--skip-log-bin', '--innodb-buffer-pool-size=16M'],
    startMs: 60_000
  }
}
