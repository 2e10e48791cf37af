import fs from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { aliasesFor, cpesFor, upstreamVersion } from '../../../lib/cpe/aliases'
import { parseCpe } from '../../../lib/cpe/name'

test('products named in the brief map to their NVD vendor:product', async (t) => {
  const pairs = (p: string): string[] => aliasesFor(p).map((a) => `${a.vendor}:${a.product}`)
  t.same(pairs('nginx'), ['f5:nginx', 'nginx:nginx'])
  t.same(pairs('Redis'), ['redis:redis'])
  t.same(pairs('OpenSSH'), ['openbsd:openssh', 'openssh:openssh'], 'some NVD records (CVE-2023-51767) name openssh:openssh')
  t.same(pairs('Apache httpd'), ['apache:http_server'])
  t.same(pairs('MariaDB'), ['mariadb:mariadb'])
  t.same(pairs('MySQL'), ['oracle:mysql'])
  t.same(pairs('PostgreSQL'), ['postgresql:postgresql'])
  t.same(pairs('RabbitMQ').slice(0, 2), ['vmware:rabbitmq', 'broadcom:rabbitmq_server'])
  t.same(pairs('Mosquitto'), ['eclipse:mosquitto'])
  t.same(pairs('NATS Server'), ['linuxfoundation:nats-server'])
  t.same(pairs('OpenSSL'), ['openssl:openssl'])
  t.same(pairs('Exim'), ['exim:exim'])
  t.same(pairs('ProFTPD'), ['proftpd:proftpd'])
  t.same(pairs('vsftpd'), ['vsftpd_project:vsftpd'])
  t.same(pairs('Microsoft IIS httpd'), ['microsoft:internet_information_services'])
  t.same(pairs('Samba'), ['samba:samba'])
  t.same(pairs('memcached'), ['memcached:memcached'])
  t.same(pairs('MongoDB'), ['mongodb:mongodb'])
  t.same(pairs('Elasticsearch'), ['elastic:elasticsearch'])
  t.same(pairs('lighttpd'), ['lighttpd:lighttpd'])
  t.same(pairs('Postfix'), ['postfix:postfix'])
  t.same(pairs('Dovecot'), ['dovecot:dovecot'])
  t.same(pairs('Some Unknown Thing'), [])
})

test('OpenSSH uses the NVD split form', async (t) => {
  t.same(cpesFor('OpenSSH', '9.2p1'), ['cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*', 'cpe:2.3:a:openssh:openssh:9.2:p1:*:*:*:*:*:*'])
  t.same(cpesFor('OpenSSH', '9.8'), ['cpe:2.3:a:openbsd:openssh:9.8:*:*:*:*:*:*:*', 'cpe:2.3:a:openssh:openssh:9.8:*:*:*:*:*:*:*'])
})

test('versions lose distro suffixes; other split forms', async (t) => {
  t.same(cpesFor('MariaDB', '10.11.19'), ['cpe:2.3:a:mariadb:mariadb:10.11.19:*:*:*:*:*:*:*'])
  t.same(cpesFor('PostgreSQL', '15.20 (Debian 15.20-0+deb12u1)'), ['cpe:2.3:a:postgresql:postgresql:15.20:*:*:*:*:*:*:*'])
  t.same(cpesFor('OpenSSL', '1.0.2k-fips'), ['cpe:2.3:a:openssl:openssl:1.0.2k:*:*:*:*:*:*:*'])
  t.same(cpesFor('ProFTPD', '1.3.5a'), ['cpe:2.3:a:proftpd:proftpd:1.3.5:a:*:*:*:*:*:*'])
  t.same(cpesFor('Jetty', '9.4.51.v20230217'), ['cpe:2.3:a:eclipse:jetty:9.4.51:20230217:*:*:*:*:*:*'])
  t.same(cpesFor('nginx', '1.22.1'), ['cpe:2.3:a:f5:nginx:1.22.1:*:*:*:*:*:*:*', 'cpe:2.3:a:nginx:nginx:1.22.1:*:*:*:*:*:*:*'])
  t.equal(upstreamVersion('v2.9.10'), '2.9.10')
  t.equal(upstreamVersion('unknown'), undefined)
})

test('no version: a product-only name with version *', async (t) => {
  t.same(cpesFor('Redis'), ['cpe:2.3:a:redis:redis:*:*:*:*:*:*:*:*'])
  t.same(cpesFor('Redis', 'garbage'), ['cpe:2.3:a:redis:redis:*:*:*:*:*:*:*:*'])
  t.same(cpesFor('Nothing We Know', '1.0'), [])
})

test('every alias vendor:product that the NVD fixtures use is written exactly as NVD writes it', async (t) => {
  const dir = path.join(__dirname, '../../fixtures/nvd/cves')
  const seen = new Set<string>()
  for (const f of fs.readdirSync(dir)) {
    for (const m of fs.readFileSync(path.join(dir, f), 'utf8').matchAll(/"criteria":\s*"(cpe:2\.3:[^"]+)"/g)) {
      const c = parseCpe(m[1])
      if (c) seen.add(`${c.vendor}:${c.product}`)
    }
  }
  for (const product of ['OpenSSH', 'nginx', 'Redis', 'Apache httpd', 'MariaDB', 'MySQL', 'PostgreSQL', 'Mosquitto', 'NATS Server', 'OpenSSL', 'Exim', 'ProFTPD', 'vsftpd', 'Samba']) {
    const hit = aliasesFor(product).some((a) => seen.has(`${a.vendor}:${a.product}`))
    t.ok(hit, `${product} appears in the NVD fixtures under one of its aliases`)
  }
  t.ok(seen.has('vmware:rabbitmq') && seen.has('broadcom:rabbitmq_server'), 'both RabbitMQ vendors are real NVD names')
})

test('every generated name parses back', async (t) => {
  for (const [p, v] of [['OpenSSH', '9.2p1'], ['Apache httpd', '2.4.57'], ['RabbitMQ', '3.10.8'], ['NATS Server', '2.9.10']]) {
    for (const cpe of cpesFor(p, v)) t.ok(parseCpe(cpe), cpe)
  }
})

test('pairs corrected against NVD records (the CVE in each comment shows the pair in a cpeMatch criteria)', async (t) => {
  const pairs = (p: string): string[] => aliasesFor(p).map((a) => `${a.vendor}:${a.product}`)
  // CVE-2020-14148: cpe:2.3:a:barton:ngircd:*
  t.same(pairs('ngIRCd'), ['barton:ngircd'])
  // CVE-2022-40468: tinyproxy_project:tinyproxy; CVE-2012-3505: banu:tinyproxy
  t.same(pairs('tinyproxy'), ['tinyproxy_project:tinyproxy', 'banu:tinyproxy'])
  // CVE-2017-17663: acme:mini_httpd; CVE-2018-18778: acme:mini-httpd
  t.same(pairs('mini_httpd'), ['acme:mini_httpd', 'acme:mini-httpd'])
  // CVE-2021-3652: port389:389-ds-base
  t.same(pairs('389 Directory Server')[0], 'port389:389-ds-base')
  t.same(cpesFor('ngIRCd', '26.1'), ['cpe:2.3:a:barton:ngircd:26.1:*:*:*:*:*:*:*'])
  t.same(cpesFor('389 Directory Server', '2.0.7')[0], 'cpe:2.3:a:port389:389-ds-base:2.0.7:*:*:*:*:*:*:*')
})

test('Varnish answers to all three NVD names', async (t) => {
  const pairs = aliasesFor('Varnish').map((a) => `${a.vendor}:${a.product}`)
  // CVE-2022-45060: varnish-software:varnish_cache; CVE-2017-12425: varnish-cache:varnish and varnish_cache_project:varnish_cache
  t.same(pairs, ['varnish-software:varnish_cache', 'varnish-cache:varnish', 'varnish_cache_project:varnish_cache'])
})

test('Erlang/OTP: the slash is escaped as NVD writes it', async (t) => {
  // CVE-2025-32433: cpe:2.3:a:erlang:erlang\/otp:*
  t.same(cpesFor('erlang/otp ssh', '27.3.2'), ['cpe:2.3:a:erlang:erlang\\/otp:27.3.2:*:*:*:*:*:*:*'])
})

test('pairs corrected in the second check (the CVE in each comment shows the pair in a cpeMatch criteria)', async (t) => {
  const pairs = (p: string): string[] => aliasesFor(p).map((a) => `${a.vendor}:${a.product}`)
  // CVE-2011-3208: cmu:cyrus_imap_server; CVE-2021-33582: cyrus:imap
  t.same(pairs('Cyrus imapd'), ['cmu:cyrus_imap_server', 'cyrus:imap'])
  t.same(pairs('Cyrus pop3d'), ['cmu:cyrus_imap_server', 'cyrus:imap'])
  t.same(cpesFor('Cyrus imapd', '3.4.1'), ['cpe:2.3:a:cmu:cyrus_imap_server:3.4.1:*:*:*:*:*:*:*', 'cpe:2.3:a:cyrus:imap:3.4.1:*:*:*:*:*:*:*'])
  // CVE-2021-38084 (Courier's POP3 server): courier-mta:courier_mail_server
  t.ok(pairs('Courier pop3d').includes('courier-mta:courier_mail_server'))
  t.ok(pairs('Courier imapd').includes('courier-mta:courier_mail_server'))
  t.same(pairs('Courier smtpd'), ['courier-mta:courier_mail_server'])
  // CVE-2022-0073: litespeedtech:openlitespeed
  t.same(pairs('LiteSpeed httpd')[0], 'litespeedtech:openlitespeed')
  // CVE-2020-9283: golang:package_ssh
  t.same(pairs('golang x/crypto/ssh server')[0], 'golang:package_ssh')
})

test('pairs confirmed in the second check keep their NVD spelling', async (t) => {
  const pairs = (p: string): string[] => aliasesFor(p).map((a) => `${a.vendor}:${a.product}`)
  t.same(pairs('Sendmail'), ['sendmail:sendmail']) // CVE-2014-3956
  t.same(pairs('OpenSMTPD'), ['openbsd:opensmtpd']) // CVE-2020-7247
  t.same(pairs('Microsoft Exchange imapd'), ['microsoft:exchange_server']) // CVE-2021-26855
  t.ok(pairs('Zimbra imapd').includes('synacor:zimbra_collaboration_suite')) // CVE-2022-27925
  t.same(pairs('Grafana'), ['grafana:grafana']) // CVE-2021-43798
  t.same(pairs('CouchDB'), ['apache:couchdb']) // CVE-2017-12635
  t.same(pairs('InfluxDB'), ['influxdata:influxdb']) // CVE-2019-20933
  t.same(pairs('MinIO'), ['minio:minio']) // CVE-2023-28432
  t.same(pairs('Jenkins'), ['jenkins:jenkins']) // CVE-2024-23897
  t.same(pairs('Envoy'), ['envoyproxy:envoy']) // CVE-2019-9900
  t.same(pairs('PowerDNS Recursor'), ['powerdns:recursor']) // CVE-2020-25829
  t.same(pairs('PowerDNS Authoritative Server'), ['powerdns:authoritative_server']) // CVE-2022-27227
  t.same(pairs('Unbound'), ['nlnetlabs:unbound']) // CVE-2022-30698
  t.same(pairs('NSD'), ['nlnetlabs:name_server_daemon']) // CVE-2020-28935
  t.same(pairs('libssh'), ['libssh:libssh']) // CVE-2018-10933
  t.same(pairs('Pure-FTPd'), ['pureftpd:pure-ftpd']) // CVE-2020-9365
  t.same(pairs('Percona Server'), ['percona:percona_server']) // CVE-2016-6663
  t.same(pairs('git'), ['git-scm:git']) // CVE-2022-24765
  t.same(pairs('ejabberd'), ['process-one:ejabberd']) // CVE-2010-0305
  t.same(pairs('Kestrel'), ['microsoft:asp.net_core']) // CVE-2020-1597
  t.same(pairs('paramiko'), ['paramiko:paramiko']) // CVE-2018-1000805
  t.same(pairs('AsyncSSH'), ['asyncssh_project:asyncssh']) // CVE-2023-46445
  t.same(pairs('Serv-U'), ['solarwinds:serv-u']) // CVE-2021-35211
  // CVE-2018-14847: cpe:2.3:o:mikrotik:routeros
  t.same(cpesFor('MikroTik RouterOS sshd', '6.42'), ['cpe:2.3:o:mikrotik:routeros:6.42:*:*:*:*:*:*:*'])
})
