// The service-detection lab: daemons from Debian's packages, each started on a loopback address of its own
// with the same private configuration the probe tests give it (daemon-specs.ts), and for each port what the
// daemon shows on the wire: the product, and its whole version, the leading part of it, or none. That is the
// truth both our detection and `nmap -sV` are held to by bench/service-detect.ts --lab.

import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import type { ServiceInfo } from '../../lib/domain/services'
import * as specs from './daemon-specs'
import { startDaemon, startInetd, type RunningDaemon } from './debian-daemon'

/** What one port shows on the wire. */
export interface WireTruth {
  service: string
  /** The product as our probes name it; absent when the wire names none (rsync, Prosody, telnetd). */
  product?: string
  /** 'full': the whole upstream version; 'major' / 'major.minor': only that leading part; 'none': no version at all. */
  version: 'full' | 'major' | 'major.minor' | 'none'
}

export interface LabPort {
  port: number
  /** What is listening, e.g. 'HAProxy (statistics page)'. */
  label: string
  truth: WireTruth
}

export interface LabDaemon {
  name: string
  pkg: string
  /** The file whose presence says the package is installed. */
  binary: string
  start: () => Promise<RunningDaemon>
  ports: (d: RunningDaemon) => LabPort[]
  /** Ask the daemon's binary for its version: the command and where the version is in its output. */
  self?: { cmd: string, args: string[], pattern: RegExp }
}

/** The upstream part of a Debian package version: `1:2.4.2-3+deb12u9` -> `2.4.2`. */
export const upstream = (v: string): string => v.replace(/^\d+:/, '').replace(/[-+~].*$/, '')

const one = (port: number, label: string, truth: WireTruth): LabPort[] => [{ port, label, truth }]

export const LAB: LabDaemon[] = [
  {
    name: 'lighttpd', ...pick(specs.lighttpd()), start: async () => await startDaemon(specs.lighttpd()),
    ports: (d) => one(d.port, 'lighttpd', { service: 'http', product: 'lighttpd', version: 'full' }),
    self: { cmd: '/usr/sbin/lighttpd', args: ['-v'], pattern: /lighttpd\/(\S+)/ }
  },
  {
    name: 'nginx', ...pick(specs.nginx()), start: async () => await startDaemon(specs.nginx()),
    ports: (d) => one(d.port, 'nginx', { service: 'http', product: 'nginx', version: 'full' }),
    self: { cmd: '/usr/sbin/nginx', args: ['-v'], pattern: /nginx\/(\S+)/ }
  },
  {
    name: 'CUPS', ...pick(specs.cupsd()), start: async () => await startDaemon(specs.cupsd()),
    ports: (d) => one(d.port, 'cupsd', { service: 'http', product: 'CUPS', version: 'full' })
  },
  {
    name: 'tinyproxy', ...pick(specs.tinyproxy()), start: async () => await startDaemon(specs.tinyproxy()),
    ports: (d) => one(d.port, 'tinyproxy', { service: 'http', product: 'tinyproxy', version: 'full' }),
    self: { cmd: '/usr/bin/tinyproxy', args: ['-v'], pattern: /tinyproxy (\S+)/ }
  },
  {
    name: 'HAProxy', ...pick(specs.haproxy()), start: async () => await startDaemon(specs.haproxy()),
    ports: (d) => [
      { port: d.port, label: 'HAProxy (no backend)', truth: { service: 'http', product: 'HAProxy', version: 'none' } },
      { port: specs.neighbourPort(d.port), label: 'HAProxy (statistics)', truth: { service: 'http', product: 'HAProxy', version: 'full' } }
    ],
    self: { cmd: '/usr/sbin/haproxy', args: ['-v'], pattern: /HAProxy version ([\d.]+)/ }
  },
  {
    name: 'Squid', ...pick(specs.squid()), start: async () => await startDaemon(specs.squid()),
    ports: (d) => one(d.port, 'squid', { service: 'http', product: 'Squid http proxy', version: 'full' }),
    self: { cmd: '/usr/sbin/squid', args: ['-v'], pattern: /Version (\S+)/ }
  },
  {
    name: 'Varnish', ...pick(specs.varnish()), start: async () => await startDaemon(specs.varnish()),
    ports: (d) => one(d.port, 'varnishd', { service: 'http', product: 'Varnish', version: 'major.minor' }),
    self: { cmd: '/usr/sbin/varnishd', args: ['-V'], pattern: /varnish-([\d.]+)/ }
  },
  {
    name: 'Caddy', ...pick(specs.caddy()), start: async () => await startDaemon(specs.caddy()),
    ports: (d) => one(d.port, 'caddy', { service: 'http', product: 'Caddy', version: 'none' }),
    self: { cmd: '/usr/bin/caddy', args: ['version'], pattern: /v?(\d+\.\d+\.\d+)/ }
  },
  {
    name: 'Tomcat', ...pick(specs.tomcat()), start: async () => await startDaemon(specs.tomcat()),
    ports: (d) => one(d.port, 'tomcat10', { service: 'http', product: 'Apache Tomcat', version: 'full' }),
    self: { cmd: '/usr/share/tomcat10/bin/version.sh', args: [], pattern: /Apache Tomcat\/(\S+)/ }
  },
  {
    name: 'Jetty', ...pick(specs.jetty()), binary: '/usr/share/jetty9/start.jar', start: async () => await startDaemon(specs.jetty()),
    ports: (d) => one(d.port, 'jetty9', { service: 'http', product: 'Jetty', version: 'full' })
  },
  {
    name: 'etcd', ...pick(specs.etcd()), start: async () => await startDaemon(specs.etcd()),
    ports: (d) => one(d.port, 'etcd (client)', { service: 'http', product: 'etcd', version: 'full' }),
    self: { cmd: '/usr/bin/etcd', args: ['--version'], pattern: /etcd Version: (\S+)/ }
  },
  {
    name: 'Prometheus', ...pick(specs.prometheus()), start: async () => await startDaemon(specs.prometheus()),
    ports: (d) => one(d.port, 'prometheus', { service: 'http', product: 'Prometheus', version: 'full' }),
    self: { cmd: '/usr/bin/prometheus', args: ['--version'], pattern: /version ([\d.]+)/ }
  },
  {
    name: 'Docker Engine', ...pick(specs.dockerd()), start: async () => await startDaemon(specs.dockerd()),
    ports: (d) => one(d.port, 'dockerd', { service: 'http', product: 'Docker', version: 'full' }),
    self: { cmd: '/usr/sbin/dockerd', args: ['--version'], pattern: /Docker version ([\d.]+)/ }
  },
  {
    name: 'Dovecot', ...pick(specs.dovecot()), binary: '/usr/lib/dovecot/imap', start: async () => await startDaemon(specs.dovecot()),
    ports: (d) => [
      { port: d.port, label: 'Dovecot IMAP', truth: { service: 'imap', product: 'Dovecot', version: 'none' } },
      { port: specs.neighbourPort(d.port), label: 'Dovecot POP3', truth: { service: 'pop3', product: 'Dovecot', version: 'none' } }
    ],
    self: { cmd: '/usr/sbin/dovecot', args: ['--version'], pattern: /^(\S+)/ }
  },
  {
    name: 'Exim', ...pick(specs.exim()), start: async () => await startDaemon(specs.exim()),
    ports: (d) => one(d.port, 'exim4', { service: 'smtp', product: 'Exim', version: 'full' }),
    self: { cmd: '/usr/sbin/exim4', args: ['-bV'], pattern: /Exim version (\S+)/ }
  },
  {
    name: 'dnsmasq', ...pick(specs.dnsmasq()), start: async () => await startDaemon(specs.dnsmasq()),
    ports: (d) => one(d.port, 'dnsmasq (DNS over TCP)', { service: 'dns', product: 'dnsmasq', version: 'full' }),
    self: { cmd: '/usr/sbin/dnsmasq', args: ['-v'], pattern: /Dnsmasq version (\S+)/ }
  },
  {
    name: 'OpenLDAP', ...pick(specs.slapd()), start: async () => await startDaemon(specs.slapd()),
    ports: (d) => one(d.port, 'slapd', { service: 'ldap', product: 'OpenLDAP', version: 'none' }),
    self: { cmd: '/usr/sbin/slapd', args: ['-VV'], pattern: /slapd ([\d.]+)/ }
  },
  {
    name: 'rsync', ...pick(specs.rsyncd()), start: async () => await startDaemon(specs.rsyncd()),
    ports: (d) => one(d.port, 'rsync --daemon', { service: 'rsync', version: 'none' }),
    self: { cmd: '/usr/bin/rsync', args: ['--version'], pattern: /version (\S+)/ }
  },
  {
    name: 'git daemon', ...pick(specs.gitDaemon(true)), binary: '/usr/lib/git-core/git-daemon', start: async () => await startDaemon(specs.gitDaemon(true)),
    ports: (d) => one(d.port, 'git daemon (a repository at /)', { service: 'git', product: 'Git', version: 'full' }),
    self: { cmd: '/usr/bin/git', args: ['--version'], pattern: /git version (\S+)/ }
  },
  {
    name: 'ngIRCd', ...pick(specs.ngircd(false)), start: async () => await startDaemon(specs.ngircd(false)),
    ports: (d) => one(d.port, 'ngircd', { service: 'irc', product: 'ngIRCd', version: 'full' }),
    self: { cmd: '/usr/sbin/ngircd', args: ['--version'], pattern: /ngIRCd ([\d.]+)/ }
  },
  {
    name: 'InspIRCd', ...pick(specs.inspircd()), start: async () => await startDaemon(specs.inspircd()),
    ports: (d) => one(d.port, 'inspircd', { service: 'irc', product: 'InspIRCd', version: 'major' }),
    self: { cmd: '/usr/sbin/inspircd', args: ['--version'], pattern: /InspIRCd-([\d.]+)/ }
  },
  {
    name: 'Prosody', ...pick(specs.prosody()), start: async () => await startDaemon(specs.prosody()),
    ports: (d) => one(d.port, 'prosody (c2s)', { service: 'xmpp', version: 'none' })
  },
  {
    // ejabberd names itself only after authentication (its entity capabilities).
    name: 'ejabberd', ...pick(specs.ejabberd()), binary: '/usr/sbin/ejabberdctl', start: async () => await startDaemon(specs.ejabberd()),
    ports: (d) => one(d.port, 'ejabberd (c2s, STARTTLS required)', { service: 'xmpp', version: 'none' })
  },
  {
    name: 'ZooKeeper', ...pick(specs.zookeeper()), start: async () => await startDaemon(specs.zookeeper()),
    ports: (d) => one(d.port, 'zookeeper', { service: 'zookeeper', product: 'Apache ZooKeeper', version: 'full' })
  },
  {
    name: 'Mosquitto', ...pick(specs.mosquittoTls()), start: async () => await startDaemon(specs.mosquittoTls()),
    ports: () => one(specs.MOSQUITTO_TLS_PORT, 'mosquitto (MQTT over TLS)', { service: 'mqtt', product: 'Mosquitto', version: 'full' }),
    self: { cmd: '/usr/sbin/mosquitto', args: ['-h'], pattern: /mosquitto version (\S+)/ }
  },
  {
    name: 'memcached', ...pick(specs.memcached()), start: async () => await startDaemon(specs.memcached()),
    ports: (d) => one(d.port, 'memcached', { service: 'memcached', product: 'memcached', version: 'full' }),
    self: { cmd: '/usr/bin/memcached', args: ['-V'], pattern: /memcached (\S+)/ }
  },
  {
    name: 'Dropbear', ...pick(specs.dropbear()), start: async () => await startDaemon(specs.dropbear()),
    ports: (d) => one(d.port, 'dropbear', { service: 'ssh', product: 'Dropbear sshd', version: 'full' }),
    self: { cmd: '/usr/sbin/dropbear', args: ['-V'], pattern: /Dropbear v(\S+)/ }
  },
  {
    name: 'OpenSSH', ...pick(specs.sshd()), start: async () => await startDaemon(specs.sshd()),
    ports: (d) => one(d.port, 'sshd', { service: 'ssh', product: 'OpenSSH', version: 'full' })
  },
  {
    name: 'telnetd', ...specs.telnetd, start: async () => await startInetd(specs.telnetd),
    ports: (d) => one(d.port, 'inetutils telnetd (per connection)', { service: 'telnet', version: 'none' }),
    self: { cmd: '/usr/sbin/telnetd', args: ['--version'], pattern: /inetutils\) (\S+)/ }
  },
  {
    name: 'BIND', ...pick(specs.named()), start: async () => await startDaemon(specs.named()),
    ports: () => one(specs.DNS_PORT, 'named (DNS over TCP)', { service: 'dns', product: 'ISC BIND', version: 'full' }),
    self: { cmd: '/usr/sbin/named', args: ['-v'], pattern: /BIND (\d+\.\d+\.\d+)/ }
  },
  {
    name: 'Samba', ...pick(specs.smbd()), start: async () => await startDaemon(specs.smbd()),
    ports: () => one(specs.SMB_PORT, 'smbd (SMB2)', { service: 'smb', product: 'Samba', version: 'none' }),
    self: { cmd: '/usr/sbin/smbd', args: ['--version'], pattern: /Version (\d+\.\d+\.\d+)/ }
  },
  {
    name: 'rpcbind', pkg: 'rpcbind', binary: '/usr/sbin/rpcbind', start: async () => await startDaemon(specs.rpcbind()),
    ports: () => one(specs.RPCBIND_PORT, 'rpcbind', { service: 'rpcbind', version: 'none' })
  },
  {
    name: 'Postfix', ...pick(specs.postfix()), start: async () => await startDaemon(specs.postfix()),
    ports: (d) => one(d.port, 'postfix (smtpd, unpacked)', { service: 'smtp', product: 'Postfix', version: 'none' })
  },
  {
    name: 'Sendmail', pkg: 'sendmail-bin', binary: `${specs.UNPACKED_DEBS}/sendmail/usr/libexec/sendmail/sendmail`,
    start: async () => await startDaemon(specs.sendmail()),
    ports: (d) => one(d.port, 'sendmail -bD (unpacked)', { service: 'smtp', product: 'Sendmail', version: 'full' }),
    // Asking the binary itself would have it qualify the host name first (a name server's question): the changelog says it.
    self: { cmd: 'zcat', args: [`${specs.UNPACKED_DEBS}/sendmail/usr/share/doc/sendmail-bin/changelog.Debian.gz`], pattern: /^sendmail \(([\d.]+)-/ }
  },
  {
    name: 'TigerVNC', ...pick(specs.xtigervnc()), start: async () => await startDaemon(specs.xtigervnc()),
    ports: (d) => one(d.port, 'Xtigervnc', { service: 'vnc', version: 'none' })
  },
  {
    name: 'xrdp', ...pick(specs.xrdp()), start: async () => await startDaemon(specs.xrdp()),
    ports: (d) => one(d.port, 'xrdp', { service: 'rdp', version: 'none' })
  },
  {
    name: 'InfluxDB', ...pick(specs.influxd()), start: async () => await startDaemon(specs.influxd()),
    ports: (d) => one(d.port, 'influxd (HTTP API)', { service: 'http', product: 'InfluxDB', version: 'full' }),
    self: { cmd: '/usr/bin/influxd', args: ['version'], pattern: /InfluxDB v(\S+)/ }
  },
  {
    name: 'Courier IMAP', pkg: 'courier-imap', binary: specs.courierImap().imaplogin, start: async () => await startInetd(specs.courierImap()),
    ports: (d) => one(d.port, 'Courier imaplogin (per connection, unpacked)', { service: 'imap', product: 'Courier Imapd', version: 'none' })
  },
  {
    name: 'ActiveMQ', ...pick(specs.activemq()), binary: '/usr/share/activemq/bin/activemq.jar', start: async () => await startDaemon(specs.activemq()),
    ports: (d) => one(d.port, 'activemq (OpenWire)', { service: 'openwire', product: 'Apache ActiveMQ', version: 'full' })
  },
  {
    name: 'Cyrus IMAP', ...pick(specs.cyrusImapd()), start: async () => await startDaemon(specs.cyrusImapd()),
    ports: (d) => one(d.port, 'Cyrus master + imapd (unpacked)', { service: 'imap', product: 'Cyrus imapd', version: 'full' }),
    // imapd states no version of its own; the unpacked package's changelog does (dpkg knows nothing of it).
    self: { cmd: 'zcat', args: [`${specs.UNPACKED_DEBS}/cyrus-imapd/usr/share/doc/cyrus-common/changelog.Debian.gz`], pattern: /^cyrus-imapd \((\d+\.\d+\.\d+)/ }
  },
  {
    name: 'ClickHouse', ...pick(specs.clickhouse()), start: async () => await startDaemon(specs.clickhouse()),
    ports: (d) => one(d.port, 'clickhouse-server (native TCP)', { service: 'clickhouse', product: 'ClickHouse', version: 'full' })
  }
]

function pick (spec: { pkg: string, binary: string }): { pkg: string, binary: string } {
  return { pkg: spec.pkg, binary: spec.binary }
}

/** The version the daemon's binary states about itself, or undefined when it has no such option. */
export async function selfVersion (d: LabDaemon): Promise<string | undefined> {
  if (!d.self) return undefined
  const { cmd, args, pattern } = d.self
  const out = await new Promise<string>((resolve) => {
    execFile(cmd, args, { timeout: 30_000, env: { ...process.env, LC_ALL: 'C' } }, (_err, stdout, stderr) => resolve(`${stdout}\n${stderr}`))
  })
  return pattern.exec(out)?.[1]
}

/** The version the wire should show for a daemon whose own version is `own`, as WireTruth.version says. */
export function expectedVersion (truth: WireTruth, own: string): string | undefined {
  if (truth.version === 'none') return undefined
  if (truth.version === 'major') return own.split('.')[0]
  if (truth.version === 'major.minor') return own.split('.').slice(0, 2).join('.')
  return own
}

/** `seen` is `want` or `want` followed by a build suffix that is not more digits (Jetty's `9.4.50.v20221201`). */
export function versionIs (seen: string | undefined, want: string | undefined): boolean {
  if (want === undefined) return seen === undefined
  if (seen === undefined) return false
  return seen === want || (seen.startsWith(want) && /^[^\d]/.test(seen.slice(want.length)) && !/^\.\d/.test(seen.slice(want.length)))
}

/** Whether our result says what the wire shows: the service, the product (or none), the version (or none). */
export function oursRight (ours: ServiceInfo, truth: WireTruth, want: string | undefined): boolean {
  if (ours.service !== truth.service) return false
  if (ours.product !== truth.product) return false
  return versionIs(ours.version, want)
}

/** The daemons of the lab whose package is installed here, and those skipped with the reason. */
export function availableLab (only?: string[]): { daemons: LabDaemon[], skipped: Array<{ name: string, reason: string }> } {
  const wanted = only?.length ? LAB.filter((d) => only.some((o) => d.name.toLowerCase() === o.toLowerCase())) : LAB
  const daemons: LabDaemon[] = []
  const skipped: Array<{ name: string, reason: string }> = []
  for (const d of wanted) {
    if (existsSync(d.binary)) daemons.push(d)
    else skipped.push({ name: d.name, reason: `${d.binary} is absent (Debian package ${d.pkg})` })
  }
  return { daemons, skipped }
}
