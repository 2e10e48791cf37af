import { readFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import t from 'tap'
import { compareRpmVersions, isRpmVersion, parseRpmVersion, rpmvercmp } from '../../../lib/distro/rpm-version'

const VERSIONS = path.join(__dirname, '..', '..', 'fixtures', 'distro', 'versions')
const rpm = spawnSync('rpm', ['--version']).status === 0

t.test('every example of rpm\'s own tests/rpmvercmp.at', async (t) => {
  const lines = readFileSync(path.join(VERSIONS, 'rpmvercmp.data'), 'utf8').split('\n').filter((l) => l.trim() !== '')
  t.ok(lines.length >= 90, `${lines.length} examples`)
  for (const line of lines) {
    const [a, b, want] = line.split(' ')
    t.equal(rpmvercmp(a, b), Number(want), `rpmvercmp(${a}, ${b}) = ${want}`)
  }
})

t.test('epoch, version, release', async (t) => {
  t.same(parseRpmVersion('1:3.0.7-27.el9'), { epoch: 1, version: '3.0.7', release: '27.el9' })
  t.same(parseRpmVersion('0:1.9.5p2-10.el9_6.1'), { epoch: 0, version: '1.9.5p2', release: '10.el9_6.1' })
  t.same(parseRpmVersion('2.13.3'), { epoch: 0, version: '2.13.3', release: '' }, 'no release')
  for (const bad of ['', 'x:1.0', ':1.0', '1:']) t.notOk(isRpmVersion(bad), `${JSON.stringify(bad)} is rejected`)
  t.equal(compareRpmVersions('1:1.0-1', '2.0-1'), 1, 'the epoch decides first')
  t.equal(compareRpmVersions('0:2.13.3-3.el8_6.1', '2.13.3-3.el8_6.1'), 0, 'epoch 0 is the same as none')
  t.equal(compareRpmVersions('3.0.7-27.el9', '3.0.7-28.el9'), -1, 'the release decides when the versions are equal')
  t.equal(compareRpmVersions('1.9.5p2-10.el9_6', '1.9.5p2-10.el9_6.1'), -1, 'a z-stream rebuild is newer')
  t.equal(compareRpmVersions('5.14.0-362.8.1.el9_3', '5.14.0-362.13.1.el9_3'), -1, 'kernel releases compare by number')
  t.equal(compareRpmVersions('1:22.23.2-2.module+el9.8.0+24958+80b2ac6e', '1:22.23.2-1.module+el9.8.0+24958+80b2ac6e'), 1)
  t.equal(compareRpmVersions('1.0', '1.0-1'), -1, 'no release sorts before any release, as rpm.vercmp has it')
})

/** A seeded generator, so a failure can be reproduced. */
function rng (seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

function generatedPairs (n: number): Array<[string, string]> {
  const r = rng(20260611)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]
  const versions = ['1.0', '1.0~rc1', '1.0^git1', '1.0^', '1.01', '1.0.1', '1.0a', '1.0aa', '3.0.7', '3.0.07', '3.0.10', '1.9.5p2',
    '1.9.5p10', '2.13.3', '5.14.0', '22.23.2', '2_0', '2.0', '10xyz', 'xyz.4', '1.0~rc1^git1', '4.999.9', '20101121']
  const releases = ['', '1', '2', '27.el9', '28.el9', '10.el9_6', '10.el9_6.1', '362.8.1.el9_3', '362.13.1.el9_3', '3.el8_6.1',
    '2.module+el9.8.0+24958+80b2ac6e', '1.fc40', '1.fc40~bootstrap', '0.1.rc1.el9', '4.el9^post']
  const one = (): string => {
    const epoch = r() < 0.2 ? `${Math.floor(r() * 3)}:` : ''
    const rel = pick(releases)
    return `${epoch}${pick(versions)}${rel !== '' ? `-${rel}` : ''}`
  }
  const pairs: Array<[string, string]> = []
  for (let i = 0; i < n; i++) {
    const a = one()
    const b = r() < 0.5 ? one() : a.replace(/\d+(?!.*\d)/, (d) => String(Number(d) + (r() < 0.5 ? 1 : 0)))
    pairs.push([a, b])
  }
  return pairs
}

t.test('agrees with rpm.vercmp on generated pairs', { skip: rpm ? false : 'rpm is not installed' }, async (t) => {
  const pairs = generatedPairs(600)
  // One rpm process evaluates every pair through its Lua binding, which compares whole EVR strings.
  const lua = pairs.map(([a, b]) => `io.write(rpm.vercmp(${JSON.stringify(a)}, ${JSON.stringify(b)}), "\\n")`).join(' ')
  const run = spawnSync('rpm', ['--eval', `%{lua: ${lua}}`], { encoding: 'utf8', maxBuffer: 1 << 20 })
  t.equal(run.status, 0, run.stderr)
  const answers = run.stdout.trim().split('\n').map(Number)
  t.equal(answers.length, pairs.length)
  let mismatches = 0
  pairs.forEach(([a, b], i) => {
    const ours = compareRpmVersions(a, b)
    if (ours !== answers[i]) {
      mismatches++
      t.fail(`${a} vs ${b}: rpm says ${answers[i]}, we say ${ours}`)
    }
  })
  t.equal(mismatches, 0)
  t.ok(answers.includes(-1) && answers.includes(0) && answers.includes(1), 'the set covers less, equal and greater')
})
