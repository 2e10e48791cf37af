// HTTP servers and proxies from Debian's packages, each started on a loopback address of its own:
// product and version must equal what the daemon itself shows on the wire.

import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

/** The upstream part of a Debian package version: `1:2.4.2-3+deb12u9` -> `2.4.2`. */
const upstream = (v: string): string => v.replace(/^\d+:/, '').replace(/[-+~].*$/, '')

test('CUPS: the full version from the page title, not the header\'s major.minor', { skip: daemonUnavailable('/usr/sbin/cupsd', 'cups-daemon') }, async (t) => {
  const d = await startDaemon({
    pkg: 'cups-daemon',
    binary: '/usr/sbin/cupsd',
    files: ({ host, port, dir }) => {
      for (const sub of ['cache', 'state', 'spool', 'tmp']) mkdirSync(path.join(dir, sub), { recursive: true })
      return {
        'cupsd.conf': `Listen ${host}:${port}\nLogLevel warn\nWebInterface Yes\n<Location />\n  Order allow,deny\n  Allow all\n</Location>\n`,
        'cups-files.conf': [`ServerRoot ${dir}`, `CacheDir ${dir}/cache`, `StateDir ${dir}/state`, `RequestRoot ${dir}/spool`,
          `TempDir ${dir}/tmp`, 'ErrorLog stderr', 'AccessLog /dev/null', 'PageLog /dev/null', 'Printcap', ''].join('\n')
      }
    },
    args: ({ dir }) => ['-f', '-c', path.join(dir, 'cupsd.conf'), '-s', path.join(dir, 'cups-files.conf')]
  })
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'CUPS', version: upstream(d.packageVersion) })
  t.notOk(r.versionPrefix, 'the page title gave the whole version')
  t.match(r.banner, /Server: CUPS\/\d+\.\d+ /, 'the header alone says less')
  t.ok(r.cpe.includes(`cpe:2.3:a:openprinting:cups:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`))
})

test('lighttpd', { skip: daemonUnavailable('/usr/sbin/lighttpd', 'lighttpd') }, async (t) => {
  const d = await startDaemon({
    pkg: 'lighttpd',
    binary: '/usr/sbin/lighttpd',
    files: ({ host, port, dir }) => {
      mkdirSync(path.join(dir, 'www'))
      return {
        'lighttpd.conf': `server.document-root = "${dir}/www"\nserver.bind = "${host}"\nserver.port = ${port}\nserver.errorlog = "${dir}/error.log"\n`
      }
    },
    args: ({ dir }) => ['-D', '-f', path.join(dir, 'lighttpd.conf')]
  })
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'lighttpd', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:lighttpd:lighttpd:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('tinyproxy', { skip: daemonUnavailable('/usr/bin/tinyproxy', 'tinyproxy') }, async (t) => {
  const d = await startDaemon({
    pkg: 'tinyproxy',
    binary: '/usr/bin/tinyproxy',
    files: ({ host, port }) => ({
      'tinyproxy.conf': `Port ${port}\nListen ${host}\nBind ${host}\nTimeout 30\nMaxClients 10\nAllow 127.0.0.0/8\n`
    }),
    args: ({ dir }) => ['-d', '-c', path.join(dir, 'tinyproxy.conf')]
  })
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'tinyproxy', version: upstream(d.packageVersion) })
  // NVD uses tinyproxy_project:tinyproxy (CVE-2022-40468) and, for older records, banu:tinyproxy (CVE-2012-3505).
  t.same(r.cpe, [`cpe:2.3:a:tinyproxy_project:tinyproxy:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`,
    `cpe:2.3:a:banu:tinyproxy:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('HAProxy: the product from its error page, the version only where its statistics page shows it', { skip: daemonUnavailable('/usr/sbin/haproxy', 'haproxy') }, async (t) => {
  const d = await startDaemon({
    pkg: 'haproxy',
    binary: '/usr/sbin/haproxy',
    files: ({ host, port, dir }) => ({
      'haproxy.cfg': ['global', `  stats socket ${path.join(dir, 'admin.sock')}`, 'defaults', '  mode http', '  timeout connect 1s',
        '  timeout client 5s', '  timeout server 5s', 'frontend web', `  bind ${host}:${port}`, '  default_backend none',
        'frontend stats', `  bind ${host}:${port + 1 <= 65535 ? port + 1 : port - 1}`, '  stats enable', '  stats uri /', 'backend none', ''].join('\n')
    }),
    args: ({ dir }) => ['-db', '-f', path.join(dir, 'haproxy.cfg')]
  })
  t.teardown(d.stop)
  const web = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(web, { service: 'http', product: 'HAProxy' })
  t.equal(web.version, undefined, 'the error page shows no version')
  const stats = await detectService({ host: d.host, port: d.port + 1 <= 65535 ? d.port + 1 : d.port - 1, level: 'light' })
  t.match(stats, { service: 'http', product: 'HAProxy', version: upstream(d.packageVersion) })
})

test('Squid', { skip: daemonUnavailable('/usr/sbin/squid', 'squid') }, async (t) => {
  const d = await startDaemon({
    pkg: 'squid',
    binary: '/usr/sbin/squid',
    files: ({ host, port, dir }) => ({
      'squid.conf': [`http_port ${host}:${port}`, 'pid_filename none', `cache_log ${path.join(dir, 'cache.log')}`, 'access_log none',
        'cache deny all', 'http_access deny all', 'shutdown_lifetime 0 seconds', ''].join('\n')
    }),
    args: ({ dir }) => ['-N', '-f', path.join(dir, 'squid.conf')],
    startMs: 20_000
  })
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'Squid http proxy', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:squid-cache:squid:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('Varnish: the version its Via header shows (major.minor), nothing more', { skip: daemonUnavailable('/usr/sbin/varnishd', 'varnish') }, async (t) => {
  const d = await startDaemon({
    pkg: 'varnish',
    binary: '/usr/sbin/varnishd',
    // Its VCL compiler runs unprivileged and writes into the working directory.
    prepare: () => [['chmod', ['755', '.']]],
    // The backend is a closed port on Varnish's own address: every request gets Varnish's own 503.
    args: ({ host, port, dir }) => ['-F', '-a', `${host}:${port}`, '-b', `${host}:1`, '-n', dir],
    startMs: 20_000
  })
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  const majorMinor = upstream(d.packageVersion).split('.').slice(0, 2).join('.')
  t.match(r, { service: 'http', product: 'Varnish', version: majorMinor, versionPrefix: true })
  t.match(r.banner, new RegExp(`Via: 1\\.1 \\S+ \\(Varnish/${majorMinor.replace('.', '\\.')}\\)`))
})

test('Caddy: the product its Server header names, and no version since it shows none', { skip: daemonUnavailable('/usr/bin/caddy', 'caddy') }, async (t) => {
  const d = await startDaemon({
    pkg: 'caddy',
    binary: '/usr/bin/caddy',
    files: ({ host, port }) => ({ Caddyfile: `{\n  admin off\n  auto_https off\n}\nhttp://${host}:${port} {\n  respond "hello"\n}\n` }),
    env: ({ dir }) => ({ HOME: dir, XDG_DATA_HOME: path.join(dir, 'data'), XDG_CONFIG_HOME: path.join(dir, 'config') }),
    args: ({ dir }) => ['run', '--config', path.join(dir, 'Caddyfile'), '--adapter', 'caddyfile']
  })
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'Caddy' })
  t.equal(r.version, undefined)
  t.same(r.cpe, ['cpe:2.3:a:caddyserver:caddy:*:*:*:*:*:*:*:*'])
})

test('Apache Tomcat: the version from its own error page', { skip: daemonUnavailable('/usr/share/tomcat10/bin/catalina.sh', 'tomcat10') }, async (t) => {
  const d = await startDaemon({
    pkg: 'tomcat10',
    binary: '/usr/share/tomcat10/bin/catalina.sh',
    prepare: () => [['mkdir', ['-p', 'conf', 'logs', 'webapps', 'work', 'temp']], ['cp', ['/etc/tomcat10/web.xml', 'conf/web.xml']]],
    files: ({ host, port }) => ({
      'server.xml': `<?xml version="1.0"?>\n<Server port="-1" shutdown="SHUTDOWN">\n  <Service name="Catalina">\n` +
        `    <Connector address="${host}" port="${port}" protocol="HTTP/1.1"/>\n` +
        '    <Engine name="Catalina" defaultHost="localhost">\n      <Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false"/>\n' +
        '    </Engine>\n  </Service>\n</Server>\n'
    }),
    env: ({ dir }) => ({ CATALINA_HOME: '/usr/share/tomcat10', CATALINA_BASE: dir, CATALINA_TMPDIR: path.join(dir, 'temp') }),
    args: ({ dir }) => ['run', '-config', path.join(dir, 'server.xml')],
    startMs: 90_000
  })
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'Apache Tomcat', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:apache:tomcat:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('etcd: a bare 404 at /, then its version at /version', { skip: daemonUnavailable('/usr/bin/etcd', 'etcd-server') }, async (t) => {
  const d = await startDaemon({
    pkg: 'etcd-server',
    binary: '/usr/bin/etcd',
    // Client, peer and metrics listeners all on the test's own address.
    args: ({ host, port, dir }) => {
      const peer = `http://${host}:${port < 65535 ? port + 1 : port - 1}`
      return ['--name', 'test', '--data-dir', path.join(dir, 'data'), '--listen-client-urls', `http://${host}:${port}`,
        '--advertise-client-urls', `http://${host}:${port}`, '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer,
        '--initial-cluster', `test=${peer}`, '--listen-metrics-urls', `http://${host}:${port > 1 ? port - 1 : port + 2}`]
    },
    startMs: 30_000
  })
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'etcd', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:etcd:etcd:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('Prometheus: a redirect at /, then its build information', { skip: daemonUnavailable('/usr/bin/prometheus', 'prometheus') }, async (t) => {
  const d = await startDaemon({
    pkg: 'prometheus',
    binary: '/usr/bin/prometheus',
    files: () => ({ 'prometheus.yml': 'global:\n  scrape_interval: 1h\n' }),
    args: ({ host, port, dir }) => [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--web.listen-address=${host}:${port}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`],
    startMs: 30_000
  })
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'Prometheus', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:prometheus:prometheus:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})

test('Jetty: the version its Server header shows, build date and all', { skip: daemonUnavailable('/usr/share/jetty9/start.jar', 'jetty9') }, async (t) => {
  const start = ['-jar', '/usr/share/jetty9/start.jar', 'jetty.home=/usr/share/jetty9']
  const d = await startDaemon({
    pkg: 'jetty9',
    binary: '/usr/bin/java',
    prepare: ({ dir }) => [['java', [...start, `jetty.base=${dir}`, '--add-to-start=http']]],
    args: ({ host, port, dir }) => [...start, `jetty.base=${dir}`, `jetty.http.host=${host}`, `jetty.http.port=${port}`],
    startMs: 90_000
  })
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'Jetty', version: new RegExp(`^${upstream(d.packageVersion).replace(/\./g, '\\.')}\\.v\\d{8}$`) })
  t.match(r.cpe[0], new RegExp(`^cpe:2\\.3:a:eclipse:jetty:${upstream(d.packageVersion).replace(/\./g, '\\.')}:\\d{8}:`))
})

test('nginx', { skip: daemonUnavailable('/usr/sbin/nginx', 'nginx-light') }, async (t) => {
  const d = await startDaemon({
    pkg: 'nginx-light',
    binary: '/usr/sbin/nginx',
    files: ({ host, port, dir }) => ({
      'nginx.conf': [`pid ${path.join(dir, 'nginx.pid')};`, `error_log ${path.join(dir, 'error.log')};`, 'events {}', 'http {',
        `  access_log off;`, `  client_body_temp_path ${dir};`, `  proxy_temp_path ${dir};`, `  fastcgi_temp_path ${dir};`,
        `  uwsgi_temp_path ${dir};`, `  scgi_temp_path ${dir};`, `  server { listen ${host}:${port}; root ${dir}; }`, '}', ''].join('\n')
    }),
    args: ({ dir }) => ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;']
  })
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'http', product: 'nginx', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:f5:nginx:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`, `cpe:2.3:a:nginx:nginx:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})
