// The package-list parsers on recorded command output (rpm -qa, apk info -v, os-release of each family) and on
// this machine's own dpkg-query.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { DPKG_FORMAT, packageFormatOf, parseApk, parseDpkg, parseOsRelease, parseRpm } from '../../../lib/credentialed/inventory'
import { packageFamilyOf } from '../../../lib/credentialed/families'

const fixture = (name: string): string => readFileSync(join(__dirname, '..', '..', 'fixtures', 'credentialed', name), 'utf8')

t.test('os-release of each family', async (t) => {
  const ubuntu = parseOsRelease(fixture('os-release-ubuntu'))
  t.same([ubuntu.id, ubuntu.idLike, ubuntu.versionId, ubuntu.codename], ['ubuntu', ['debian'], '22.04', 'jammy'])
  t.equal(packageFormatOf(ubuntu), 'dpkg')
  t.equal(packageFamilyOf(ubuntu)?.family, 'ubuntu', 'Ubuntu by its own ID before ID_LIKE debian')
  const rocky = parseOsRelease(fixture('os-release-rocky'))
  t.same([rocky.id, rocky.idLike, rocky.versionId], ['rocky', ['rhel', 'centos', 'fedora'], '9.3'])
  t.equal(packageFormatOf(rocky), 'rpm')
  t.equal(packageFamilyOf(rocky)?.family, 'rhel', 'Rocky Linux is decided by the Red Hat tracker (its packages are rebuilt from RHEL sources)')
  const alpine = parseOsRelease(fixture('os-release-alpine'))
  t.equal(packageFormatOf(alpine), 'apk')
  t.equal(parseOsRelease('ID=debian\nVERSION_CODENAME=bookworm\n# comment\nPRETTY_NAME="Debian \\"12\\""').prettyName, 'Debian "12"')
  t.equal(packageFormatOf(parseOsRelease('ID=haiku')), null)
})

t.test('rpm -qa: epoch, version, release, arch and the source RPM; gpg-pubkey left out', async (t) => {
  const pkgs = parseRpm(fixture('rpm-qa.txt'))
  t.equal(pkgs.length, 6)
  const ssl = pkgs.find((p) => p.name === 'openssl-libs')
  t.same(ssl, { name: 'openssl-libs', version: '1:3.0.7-27.el9', source: 'openssl', sourceVersion: '1:3.0.7-27.el9', arch: 'x86_64' })
  t.equal(pkgs.find((p) => p.name === 'bash')?.version, '5.1.8-6.el9_1', 'epoch 0 is not written')
  t.equal(pkgs.find((p) => p.name === 'python3-libs')?.source, 'python3.9')
  t.equal(pkgs.find((p) => p.name === 'kernel-core')?.source, 'kernel')
  t.notOk(pkgs.some((p) => p.name === 'gpg-pubkey'))
})

t.test('apk info -v: name and version-rN; warnings left out', async (t) => {
  const pkgs = parseApk(fixture('apk-info-v.txt'))
  t.equal(pkgs.length, 16)
  t.same(pkgs.find((p) => p.name === 'musl'), { name: 'musl', version: '1.2.4_git20230717-r4', source: 'musl', sourceVersion: '1.2.4_git20230717-r4' })
  t.equal(pkgs.find((p) => p.name === 'py3-six')?.version, '1.16.0-r8')
  t.equal(pkgs.find((p) => p.name === 'ca-certificates-bundle')?.version, '20230506-r0')
})

t.test('dpkg-query: installed packages only, with their source package and version', async (t) => {
  const recorded = [
    'ii \topenssh-server\t1:9.2p1-2+deb12u3\topenssh\t1:9.2p1-2+deb12u3\tamd64',
    'rc \told-removed\t1.0-1\told-removed\t1.0-1\tamd64',
    'ii \tlibc6:i386\t2.36-9+deb12u7\tglibc\t2.36-9+deb12u7\ti386',
    'hi \tlinux-image-6.1.0-28-amd64\t6.1.119-1\tlinux-signed-amd64\t6.1.119+1\tamd64',
    'iU \thalf\t1-1\thalf\t1-1\tall',
    ''
  ].join('\n')
  const pkgs = parseDpkg(recorded)
  t.same(pkgs.map((p) => p.name), ['openssh-server', 'libc6:i386', 'linux-image-6.1.0-28-amd64'], 'removed (rc) and unpacked (iU) ones are left out; held ones stay')
  t.equal(pkgs[1].source, 'glibc')
  const r = spawnSync('dpkg-query', ['-W', `-f=${DPKG_FORMAT.replace(/\\t/g, '\t').replace(/\\n/g, '\n')}`], { encoding: 'utf8', maxBuffer: 1 << 26 })
  if (r.status === 0) t.ok(parseDpkg(r.stdout).length > 100, 'this machine\'s list parses')
})
