// Debian's rsh-redone-server (in.rshd, in.rlogind), each handed its connections on 514 / 513 of a random 127.x
// address (startInetd stands in for inetd): named from a privileged source port, and reported as reachable.
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { daemonUnavailable, startInetd } from '../../../support/debian-daemon'

const ROOT = typeof process.getuid === 'function' && process.getuid() === 0

for (const [binary, port, service, said] of [['/usr/sbin/in.rshd', 514, 'rsh', /^"Authentication failure"$/], ['/usr/sbin/in.rlogind', 513, 'rlogin', /^"Password: ?"$/]] as const) {
  const skip = daemonUnavailable(binary, 'rsh-redone-server') || (!ROOT ? 'a privileged source port needs root' : false)
  test(`${binary} on ${port}: ${service}, r-services reachable`, { skip }, async (t) => {
    const d = await startInetd({ pkg: 'rsh-redone-server', binary, port })
    t.teardown(d.stop)
    const svc = await detectService({ host: d.host, port, level: 'light' })
    t.match(svc, { service, extraInfo: said })
    const r = await runChecks({ host: d.host, port, service: svc, hostnames: [] })
    t.ok(r.concluded)
    t.same(r.exposures.map((e) => e.check), ['VULNSCAN-RSERVICES'])
    t.match(r.exposures[0].evidence, /from a privileged source port/)
  })
}
