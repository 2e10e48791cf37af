// The intrusive default-login check against Debian's MariaDB (mariadbd on a throwaway data directory): a root account
// for 127.% with a blank password is reported, only when the scan asks for intrusive checks; with a password it is not.
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { mariadbd } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

const skip = daemonUnavailable('/usr/sbin/mariadbd', 'mariadb-server')

test('MariaDB root with a blank password: reported when intrusive, not otherwise', { skip }, async (t) => {
  const d = await startDaemon(mariadbd({ rootPassword: '' }))
  t.teardown(d.stop)
  const service = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(service, { service: 'mysql', product: 'MariaDB' })
  const polite = await runChecks({ host: d.host, port: d.port, service, hostnames: [] })
  t.same(polite.exposures, [], 'not asked for: no login tried')
  const asked = await runChecks({ host: d.host, port: d.port, service, hostnames: [], intrusive: true })
  t.ok(asked.concluded)
  t.same(asked.exposures.map((e) => e.check), ['VULNSCAN-MYSQL-EMPTY-PASSWORD'])
  t.match(asked.exposures[0].evidence, /root with an empty password: login accepted/)
})

test('MariaDB root with a password: refused, a conclusion', { skip }, async (t) => {
  const d = await startDaemon(mariadbd({ rootPassword: 'a-long-test-password' }))
  t.teardown(d.stop)
  const r = await runChecks({ host: d.host, port: d.port, service: { service: 'mysql', product: 'MariaDB', cpe: [] }, hostnames: [], intrusive: true })
  t.ok(r.concluded)
  t.same(r.exposures, [])
})
