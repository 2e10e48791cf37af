// Bind shells served by socat (Debian's package): a silent /bin/sh found by the `id` fallback of a full
// detection on a port of no known service, bash -i by its prompt; both reported as an unauthenticated shell.
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { socatShell } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

const skip = daemonUnavailable('/usr/bin/socat', 'socat')

for (const kind of ['sh', 'bash'] as const) {
  test(`socat EXEC ${kind}: a root shell, and the finding`, { skip }, async (t) => {
    const d = await startDaemon(socatShell(kind))
    t.teardown(d.stop)
    const svc = await detectService({ host: d.host, port: d.port, level: 'full' })
    t.equal(svc.service, 'bindshell', JSON.stringify(svc))
    // bash's prompt comes after its warnings: the banner read may end before it, and then `id` names the shell.
    t.match(svc.extraInfo, kind === 'sh' ? /^root shell; uid=0\(root\) gid=0\(root\)/ : /^root shell; (prompt "bash-\d+\.\d+#"|.*uid=0\(root\))/)
    const r = await runChecks({ host: d.host, port: d.port, service: svc, hostnames: [] })
    t.ok(r.concluded)
    t.same(r.exposures.map((e) => e.check), ['VULNSCAN-SHELL-NOAUTH'])
    t.match(r.exposures[0].evidence, /`id` answered: uid=0\(root\)/)
  })
}

test('light detection sends no command to a silent port', { skip }, async (t) => {
  const d = await startDaemon(socatShell('sh'))
  t.teardown(d.stop)
  const svc = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.equal(svc.service, 'unknown')
})
