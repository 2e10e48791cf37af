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
  t.same(r.cpe, [`cpe:2.3:a:tinyproxy_project:tinyproxy:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})
