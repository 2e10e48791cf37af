// Debian's smbd speaking SMB1 only (`server min/max protocol = NT1`, as Samba 3.x did): detection falls back to
// SMB1 when the SMB2 NEGOTIATE is hung up on, names Samba with its version from NativeLanMan, and the SMB1 check
// reports it; the default smbd (SMB2 and newer) is not reported.
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { SMB_PORT, smbd } from '../../../../bench/support/daemon-specs'
import { daemonUnavailable, startDaemon } from '../../../support/debian-daemon'

const skip = daemonUnavailable('/usr/sbin/smbd', 'samba')

test('smbd with NT1 only: Samba and its version over SMB1, and SMB1 enabled', { skip }, async (t) => {
  const d = await startDaemon(smbd({ smb1: true }))
  t.teardown(d.stop)
  const svc = await detectService({ host: d.host, port: SMB_PORT, level: 'light' })
  const upstream = /^\d+:([\d.]+)/.exec(d.packageVersion)?.[1]
  t.match(svc, { service: 'smb', product: 'Samba', version: upstream, extraInfo: /^SMB1 \(NT LM 0\.12\); Debian; signing enabled, not required; NativeOS Windows 6\.1; domain VULNSCAN/ })
  t.same(svc.cpe, [`cpe:2.3:a:samba:samba:${upstream}:*:*:*:*:*:*:*`])
  const r = await runChecks({ host: d.host, port: SMB_PORT, service: svc, hostnames: [] })
  t.ok(r.concluded)
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-SMB1-ENABLED'])
  t.match(r.exposures[0].evidence, /NT LM 0\.12 was accepted/)
})

test('smbd with its defaults (SMB2_02 and newer): no SMB1 finding, a conclusion', { skip }, async (t) => {
  const d = await startDaemon(smbd())
  t.teardown(d.stop)
  const svc = await detectService({ host: d.host, port: SMB_PORT, level: 'light' })
  t.match(svc, { service: 'smb', product: 'Samba', extraInfo: /^dialect 3\.1\.1/ })
  const r = await runChecks({ host: d.host, port: SMB_PORT, service: svc, hostnames: [] })
  t.ok(r.concluded)
  t.same(r.exposures, [])
})
