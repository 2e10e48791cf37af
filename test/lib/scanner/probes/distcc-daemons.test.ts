// Debian's distccd: named by its answer to a harmless compile job, and reported as accepting jobs when it allows
// the scanner's address; a distccd that allows another network only drops the job, and nothing is reported.
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { DISTCC_PORT, distccd } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

const skip = daemonUnavailable('/usr/bin/distccd', 'distcc')

test('distccd allowing 127.0.0.0/8: distccd named, the job accepted', { skip }, async (t) => {
  const d = await startDaemon(distccd())
  t.teardown(d.stop)
  const svc = await detectService({ host: d.host, port: DISTCC_PORT, level: 'light' })
  t.match(svc, { service: 'distccd', product: 'distccd', extraInfo: /^protocol 1; compiler GCC \(Debian [\d.+~a-z-]+\) [\d.]+$/ })
  const r = await runChecks({ host: d.host, port: DISTCC_PORT, service: svc, hostnames: [] })
  t.ok(r.concluded)
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-DISTCC-JOBS'])
  t.match(r.exposures[0].evidence, /compiler status 0, \d+-byte object file from GCC/)
})

test('distccd allowing another network only: the job is dropped, no finding', { skip }, async (t) => {
  const d = await startDaemon(distccd({ allow: '10.255.255.0/24' }))
  t.teardown(d.stop)
  const r = await runChecks({ host: d.host, port: DISTCC_PORT, service: { service: 'distccd', cpe: [] }, hostnames: [] })
  t.ok(r.concluded)
  t.same(r.exposures, [])
})
