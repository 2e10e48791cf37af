import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { compareApkVersions, isApkVersion } from '../../../lib/distro/apk-version'

const VERSIONS = path.join(__dirname, '..', '..', 'fixtures', 'distro', 'versions')

t.test('every line of apk-tools\' test/version.data, both ways round', async (t) => {
  const lines = readFileSync(path.join(VERSIONS, 'apk-version.data'), 'utf8').split('\n')
    .map((l) => l.replace(/#.*/, '').trim()).filter((l) => l !== '')
  t.ok(lines.length >= 700, `${lines.length} examples`)
  let wrong = 0
  for (const line of lines) {
    const [a, op, b] = line.split(/\s+/)
    const want = op === '<' ? -1 : op === '>' ? 1 : 0
    const got = compareApkVersions(a, b)
    const back = compareApkVersions(b, a)
    if (got !== want || back !== -want) {
      wrong++
      t.fail(`${a} ${op} ${b}: got ${got}, reversed ${back}`)
    }
  }
  t.equal(wrong, 0)
})

t.test('the rules as Alpine packages use them', async (t) => {
  const ordered = ['3.3.1_alpha1-r0', '3.3.1_beta2-r0', '3.3.1_pre1-r0', '3.3.1_rc1-r0', '3.3.1-r0', '3.3.1-r3', '3.3.1_git20240101-r0', '3.3.1_p1-r0', '3.3.2-r0', '3.3.10-r0']
  for (let i = 0; i + 1 < ordered.length; i++) {
    t.equal(compareApkVersions(ordered[i], ordered[i + 1]), -1, `${ordered[i]} < ${ordered[i + 1]}`)
  }
  t.equal(compareApkVersions('9.7_p1-r4', '9.7_p1-r10'), -1, 'revisions compare as numbers')
  t.equal(compareApkVersions('1.36.1-r29', '1.36.1-r29'), 0)
  t.equal(compareApkVersions('1.1.1w-r1', '1.1.1v-r0'), 1, 'a letter after the number')
  t.equal(compareApkVersions('1.02', '1.1'), -1, 'a component with a leading zero is a fraction')
  t.ok(isApkVersion('3.3.2-r0'))
  t.ok(isApkVersion('1.0.0_pre20191002222144-r0'))
  for (const bad of ['', 'r1', '1.0-x', '4.10-1-r1', '1.0bc']) t.notOk(isApkVersion(bad), `${JSON.stringify(bad)} does not read to its end`)
})
