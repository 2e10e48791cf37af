// The one place package matching asks about a distribution family: its version order, its tracker, the
// release a host's os-release names, and the tracker's entries for a source package.
import path from 'node:path'
import t from 'tap'
import { importAlpineSecdb } from '../../../lib/distro/alpine-secdb'
import { importDebianTracker } from '../../../lib/distro/debian-tracker'
import { readDistroEntries } from '../../../lib/distro/entries'
import { DISTRO_FAMILIES, compareVersions, describeFamily, isVersion, readTrackerEntries, releaseOf } from '../../../lib/distro/families'
import { importRedhatOsv } from '../../../lib/distro/redhat-osv'
import { importUbuntuOsv } from '../../../lib/distro/ubuntu-osv'
import { createMemorySourceStore } from '../../../lib/sources/memory'

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'distro')

t.test('each family orders versions by its own package format', async (t) => {
  t.same([...DISTRO_FAMILIES], ['debian', 'ubuntu', 'alpine', 'rhel'])
  t.same(DISTRO_FAMILIES.map((f) => describeFamily(f).scheme), ['dpkg', 'dpkg', 'apk', 'rpm'])
  t.same(DISTRO_FAMILIES.map((f) => describeFamily(f).tracker?.name), ['debian-tracker', 'ubuntu-osv', 'alpine-secdb', 'redhat-osv'])
  t.equal(compareVersions('debian', '1.0~rc1', '1.0'), -1)
  t.equal(compareVersions('rhel', '1.0~rc1', '1.0'), -1)
  t.equal(compareVersions('alpine', '9.7_p1-r4', '9.7-r4'), 1, 'apk: _p1 after the release')
  t.equal(compareVersions('rhel', '1:3.0.7-27.el9', '3.0.7-28.el9'), 1, 'rpm: the epoch first')
  t.equal(compareVersions('alpine', '1.02', '1.1'), -1, 'apk: a leading zero makes a fraction')
  t.equal(compareVersions('debian', '1.02', '1.1'), 1, 'dpkg: numbers')
  t.ok(isVersion('rhel', '0:1.9.5p2-10.el9_6.1'))
  t.notOk(isVersion('alpine', '1.0-x'))
  t.notOk(isVersion('debian', 'x:1'))
})

t.test('the release a host names in os-release', async (t) => {
  t.same(releaseOf({ ID: 'debian', VERSION_ID: '12', VERSION_CODENAME: 'bookworm' }), { family: 'debian', release: 'bookworm' })
  t.same(releaseOf({ ID: 'debian', VERSION_ID: '11' }), { family: 'debian', release: 'bullseye' })
  t.same(releaseOf({ ID: 'ubuntu', VERSION_ID: '22.04', VERSION_CODENAME: 'jammy' }), { family: 'ubuntu', release: 'jammy' })
  t.same(releaseOf({ ID: 'ubuntu', VERSION_ID: '24.04' }), { family: 'ubuntu', release: 'noble' })
  t.same(releaseOf({ ID: 'alpine', VERSION_ID: '3.20.3' }), { family: 'alpine', release: '3.20' })
  t.same(releaseOf({ ID: 'alpine', VERSION_ID: '3.21_alpha20240807' }), { family: 'alpine', release: 'edge' })
  t.same(releaseOf({ ID: 'rhel', VERSION_ID: '9.4' }), { family: 'rhel', release: '9' })
  t.same(releaseOf({ ID: 'rocky', ID_LIKE: 'rhel centos fedora', VERSION_ID: '9.3' }), { family: 'rhel', release: '9' })
  t.same(releaseOf({ ID: 'almalinux', VERSION_ID: '8.10' }), { family: 'rhel', release: '8' })
  t.same(releaseOf({ ID: 'centos', VERSION_ID: '9' }), { family: 'rhel', release: '9' })
  t.equal(releaseOf({ ID: 'fedora', VERSION_ID: '40' }), null, 'Red Hat\'s data does not speak for Fedora')
  t.equal(releaseOf({ ID: 'ol', ID_LIKE: 'fedora', VERSION_ID: '9.4' }), null, 'nor for Oracle Linux')
  t.equal(releaseOf({ ID: 'arch' }), null)
})

t.test('one reader for every family\'s tracker, in the shape readDistroEntries gives', async (t) => {
  const store = await createMemorySourceStore()
  await importDebianTracker(path.join(FIXTURES, 'debian-tracker.json'), store)
  await importUbuntuOsv(path.join(FIXTURES, 'ubuntu-osv'), store)
  await importAlpineSecdb([path.join(FIXTURES, 'alpine-secdb')], store)
  await importRedhatOsv([path.join(FIXTURES, 'redhat-osv')], store)
  const cases = [
    { family: 'debian', release: 'bookworm', sourcePackage: 'openssh', cve: 'CVE-2024-6387', source: 'debian-tracker' },
    { family: 'ubuntu', release: 'jammy', sourcePackage: 'openssh', cve: 'CVE-2024-6387', source: 'ubuntu-osv' },
    { family: 'alpine', release: '3.16', sourcePackage: 'openssl', cve: 'CVE-2022-2097', source: 'alpine-secdb' },
    { family: 'rhel', release: '9', sourcePackage: 'sudo', cve: 'CVE-2025-32462', source: 'redhat-osv' }
  ] as const
  for (const c of cases) {
    const entries = await readTrackerEntries(store, c)
    t.match(entries?.get(c.cve), { status: 'resolved', fixedVersion: String, source: c.source }, `${c.family} ${c.sourcePackage}`)
    t.same(entries, await readDistroEntries(store, { family: c.family, release: c.release, source: c.sourcePackage }))
  }
  t.equal(await readTrackerEntries(store, { family: 'rhel', release: '7', sourcePackage: 'sudo' }), null, 'a release the tracker lists nothing for')
})
