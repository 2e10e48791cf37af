// Debian's Tomcat 10 with an AJP/1.3 connector (secretRequired="false") on 8009 of its random 127.x address:
// CPING answered CPONG, ajp13 named and reported as reachable. The CPONG bytes are kept as a fixture.
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { AJP_PORT, tomcat } from '../../../../bench/support/daemon-specs'
import { accepts, daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

const skip = daemonUnavailable('/usr/share/tomcat10/bin/catalina.sh', 'tomcat10')

test('Tomcat 10 AJP connector: ajp13, AJP reachable', { skip }, async (t) => {
  const spec = tomcat({ ajp: true })
  const d = await startDaemon({ ...spec, ready: async (c) => await accepts(c.host, c.port) && await accepts(c.host, AJP_PORT) })
  t.teardown(d.stop)
  const svc = await detectService({ host: d.host, port: AJP_PORT, level: 'light' })
  t.same(svc, { service: 'ajp13', extraInfo: 'CPONG answered to CPING', banner: 'AB\\x00\\x01\\x09', cpe: [] })
  const r = await runChecks({ host: d.host, port: AJP_PORT, service: svc, hostnames: [] })
  t.ok(r.concluded)
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-AJP-EXPOSED'])
})
