// SSH servers from Debian's packages other than OpenSSH (whose own test lives with the backport
// tests), each started on a loopback address of its own.

import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { dropbear } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

const upstream = (v: string): string => v.replace(/^\d+:/, '').replace(/[-+~].*$/, '')

test('Dropbear', { skip: daemonUnavailable('/usr/sbin/dropbear', 'dropbear-bin') }, async (t) => {
  const d = await startDaemon(dropbear())
  t.teardown(d.stop)
  const r = await detectService({ host: d.host, port: d.port, level: 'light' })
  t.match(r, { service: 'ssh', product: 'Dropbear sshd', version: upstream(d.packageVersion) })
  t.same(r.cpe, [`cpe:2.3:a:dropbear_ssh_project:dropbear_ssh:${upstream(d.packageVersion)}:*:*:*:*:*:*:*`])
})
