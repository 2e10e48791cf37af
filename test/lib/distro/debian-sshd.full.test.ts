import t from 'tap'
import { distroPackageOf } from '../../../lib/distro/package'
import { detectService } from '../../../lib/scanner/detect'
import { sshdUnavailable, startDebianSshd } from '../../support/debian-sshd'

const skip = sshdUnavailable()

t.test('the SSH probe on Debian\'s sshd yields exactly the installed package version', { skip }, async (t) => {
  const sshd = await startDebianSshd()
  t.teardown(sshd.stop)
  t.ok(sshd.packageVersion, 'dpkg knows the openssh-server version')
  const service = await detectService({ host: sshd.host, port: sshd.port, level: 'light' })
  t.equal(service.service, 'ssh')
  t.equal(service.product, 'OpenSSH')
  const pkg = distroPackageOf(service)
  t.equal(pkg?.family, 'debian')
  t.equal(pkg?.source, 'openssh')
  t.equal(pkg?.version, sshd.packageVersion, `banner ${service.banner} → ${pkg?.version}`)
  t.ok(pkg?.release, `release ${pkg?.release ?? 'unknown'}`)
})
