// Versions with a release letter keep it, apart from the distribution's revision, and the CPE names
// the version the way the NVD files it (fast: pure functions, no sockets).
import t from 'tap'
import { cpesFor } from '../../../lib/cpe/aliases'
import { splitDistroVersion, compareVersions } from '../../../lib/cpe/version'
import { distroPackageOf } from '../../../lib/distro/package'
import { parse, parseServerVersion } from '../../../lib/scanner/probes/mysql'

/** A handshake v10 packet carrying `version`, framed as servers send it. */
function greeting (version: string): Buffer {
  const body = Buffer.concat([Buffer.from([0x0a]), Buffer.from(version + '\0', 'latin1'),
    Buffer.from([1, 0, 0, 0]), Buffer.from('abcdefgh\0'), Buffer.from([0x2c, 0xa2, 0x08, 0x02, 0x00]), Buffer.alloc(13)])
  return Buffer.concat([Buffer.from([body.length & 0xff, body.length >> 8, 0, 0]), body])
}

t.test('5.0.51a-3ubuntu5: version 5.0.51a, Ubuntu revision 3ubuntu5', async (t) => {
  const m = parseServerVersion('5.0.51a-3ubuntu5')
  t.same(m, { service: 'mysql', product: 'MySQL', version: '5.0.51a', distro: 'Ubuntu', extraInfo: '3ubuntu5' })
  t.same(parse(greeting('5.0.51a-3ubuntu5'))?.version, '5.0.51a', 'the same through the wire packet')
  t.same(splitDistroVersion('5.0.51a-3ubuntu5'), { upstream: '5.0.51a', distro: '3ubuntu5' })
  t.match(distroPackageOf({ ...m, cpe: [] }), { family: 'ubuntu', version: '5.0.51a-3ubuntu5' })
  t.ok(compareVersions('5.0.51a', '5.0.51') > 0 && compareVersions('5.0.51a', '5.0.52') < 0, 'orders between its neighbours')
})

t.test('other letter and build suffixes', async (t) => {
  t.equal(parseServerVersion('4.1.10a-Debian_2sarge1-log').version, '4.1.10a')
  t.equal(parseServerVersion('5.0.51a-24+lenny5').version, '5.0.51a')
  t.equal(parseServerVersion('5.0.51a-24+lenny5').extraInfo, '24+lenny5')
  t.equal(parseServerVersion('5.1.73-1+deb6u1-log').version, '5.1.73', 'no letter: unchanged')
  t.equal(parseServerVersion('5.5.5-10.11.6-MariaDB-0+deb12u1').version, '10.11.6')
  t.equal(parseServerVersion('8.0.36-0ubuntu0.22.04.1').version, '8.0.36')
  t.equal(parseServerVersion('5.7.44-log').version, '5.7.44')
  t.equal(parseServerVersion('5.0.51ab').version, '5.0.51', 'two letters are not a release letter')
})

t.test('the CPE uses the version the NVD uses', async (t) => {
  t.same(cpesFor('MySQL', '5.0.51a'), [
    'cpe:2.3:a:oracle:mysql:5.0.51:a:*:*:*:*:*:*',
    'cpe:2.3:a:mysql:mysql:5.0.51a:*:*:*:*:*:*:*'
  ], 'MySQL AB releases: mysql:mysql with the letter in the version; Oracle splits it into update')
  t.same(cpesFor('MySQL', '5.0.51a-3ubuntu5'), cpesFor('MySQL', '5.0.51a'), 'the revision never reaches the CPE')
  t.same(cpesFor('MySQL', '5.5.25a'), ['cpe:2.3:a:oracle:mysql:5.5.25:a:*:*:*:*:*:*'], 'as CVE-2013-0389 names it')
  t.same(cpesFor('MySQL', '8.0.36'), ['cpe:2.3:a:oracle:mysql:8.0.36:*:*:*:*:*:*:*'])
})
