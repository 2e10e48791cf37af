// HTTP servers and proxies from Debian's packages, each started on a loopback address of its own:
// product and version must equal what the daemon itself shows on the wire.

import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { caddy, cupsd, etcd, haproxy, jetty, lighttpd, nginx, prometheus, squid, tinyproxy, tomcat, varnish, neighbourPort } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

/** The upstream part of a Debian package version: `1:2.4.2-3+deb12u9` -> `2.4.2`. */
const upstream = (v: string): string => v.replace(/^\d+:/, '').replace(/[-+~].*$/, '')

test('CUPS: the full version from the page title, not the header\'s major.minor', { skip: daemonUnavailable('/usr/sbin/cupsd', 'cups-daemon') }, async (t) => {
  const d = await startDaemon(cupsd())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'CUPS', version: upstream(d.packageVersion) })
  t.notOk(r.versionPrefix, 'the page title gave the whole version')
  t.match(r.banner, /Server: CUPS\/\d+\.\d+ /, 'the header alone says less')
  t.ok(r.cpe.includes(`cpe:2.3:a:openprinting:cups:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`))
})

test('lighttpd', { skip: daemonUnavailable('/usr/sbin/lighttpd', 'lighttpd') }, async (t) => {
  const d = await startDaemon(lighttpd())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'lighttpd', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:lighttpd:lighttpd:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('tinyproxy', { skip: daemonUnavailable('/usr/bin/tinyproxy', 'tinyproxy') }, async (t) => {
  const d = await startDaemon(tinyproxy())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'tinyproxy', version: upstream(d.packageVersion) })
  // NVD uses tinyproxy_project:tinyproxy (CVE-2022-40468) and, for older records, banu:tinyproxy (CVE-2012-3505).
  t.same(r.cpe, [`cpe:2.3:a:tinyproxy_project:tinyproxy:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`,
    `cpe:2.3:a:banu:tinyproxy:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('HAProxy: the product from its error page, the version only where its statistics page shows it', { skip: daemonUnavailable('/usr/sbin/haproxy', 'haproxy') }, async (t) => {
  const d = await startDaemon(haproxy())
  t.teardown(d.stop)
  const web = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(web, { service: 'http', product: 'HAProxy' })
  t.equal(web.version, undefined, 'the error page shows no version')
  const stats = await detectService({ host: d.host, port: neighbourPort(d.port), level: 'light' })
  t.match(stats, { service: 'http', product: 'HAProxy', version: upstream(d.packageVersion) })
})

test('Squid', { skip: daemonUnavailable('/usr/sbin/squid', 'squid') }, async (t) => {
  const d = await startDaemon(squid())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'Squid http proxy', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:squid-cache:squid:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('Varnish: the version its Via header shows (major.minor), nothing more', { skip: daemonUnavailable('/usr/sbin/varnishd', 'varnish') }, async (t) => {
  const d = await startDaemon(varnish())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  const majorMinor = upstream(d.packageVersion).split('.').slice(0, 2).join('.')
  t.match(r, { service: 'http', product: 'Varnish', version: majorMinor, versionPrefix: true })
  t.match(r.banner, new RegExp(`Via: 1\\.1 \\S+ \\(Varnish/${majorMinor.replace('.', '\\.')}\\)`))
})

test('Caddy: the product its Server header names, and no version since it shows none', { skip: daemonUnavailable('/usr/bin/caddy', 'caddy') }, async (t) => {
  const d = await startDaemon(caddy())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'Caddy' })
  t.equal(r.version, undefined)
  t.same(r.cpe, ['cpe:2.3:a:caddyserver:caddy:*:*:*:*:*:*:*:*'])
})

test('Apache Tomcat: the version from its own error page', { skip: daemonUnavailable('/usr/share/tomcat10/bin/catalina.sh', 'tomcat10') }, async (t) => {
  const d = await startDaemon(tomcat())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'Apache Tomcat', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:apache:tomcat:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('etcd: a bare 404 at /, then its version at /version', { skip: daemonUnavailable('/usr/bin/etcd', 'etcd-server') }, async (t) => {
  const d = await startDaemon(etcd())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'etcd', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:etcd:etcd:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('Prometheus: a redirect at /, then its build information', { skip: daemonUnavailable('/usr/bin/prometheus', 'prometheus') }, async (t) => {
  const d = await startDaemon(prometheus())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'Prometheus', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:prometheus:prometheus:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('Jetty: the version its Server header shows, build date and all', { skip: daemonUnavailable('/usr/share/jetty9/start.jar', 'jetty9') }, async (t) => {
  const start = ['-jar', '/usr/share/jetty9/start.jar', 'jetty.home=/usr/share/jetty9']
  const d = await startDaemon(jetty())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'Jetty', version: new RegExp(`^${upstream(d.packageVersion).replace(/\./g, '\\.')}\\.v\\d{8}$`) })
  t.match(r.cpe[0], new RegExp(`^cpe:2\\.3:a:eclipse:jetty:${upstream(d.packageVersion).replace(/\./g, '\\.')}:\\d{8}:`))
})

test('nginx', { skip: daemonUnavailable('/usr/sbin/nginx', 'nginx-light') }, async (t) => {
  const d = await startDaemon(nginx())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'nginx', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:f5:nginx:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`, `cpe:2.3:a:nginx:nginx:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})
