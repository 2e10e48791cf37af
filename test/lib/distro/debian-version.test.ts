import { spawnSync } from 'node:child_process'
import t from 'tap'
import { compareDebianVersions, isDebianVersion, parseDebianVersion } from '../../../lib/distro/debian-version'

const dpkg = spawnSync('dpkg', ['--version']).status === 0

t.test('splits epoch, upstream version and revision', async (t) => {
  t.same(parseDebianVersion('1:9.2p1-2+deb12u10'), { epoch: 1, upstream: '9.2p1', revision: '2+deb12u10' })
  t.same(parseDebianVersion('15.20-0+deb12u1'), { epoch: 0, upstream: '15.20', revision: '0+deb12u1' })
  t.same(parseDebianVersion('1:2.3-4-5'), { epoch: 1, upstream: '2.3-4', revision: '5' }, 'the last hyphen starts the revision')
  t.same(parseDebianVersion('3.0.3'), { epoch: 0, upstream: '3.0.3', revision: '' }, 'native package')
  for (const bad of ['', 'abc', '1:', '-1', '1.0-a:b', 'x:1.0']) t.notOk(isDebianVersion(bad), `${JSON.stringify(bad)} is rejected`)
})

t.test('Debian Policy 5.6.12 examples', async (t) => {
  // `~` sorts before everything, even the end of the string.
  const ordered = ['1.0~~', '1.0~~a', '1.0~', '1.0', '1.0a']
  for (let i = 0; i + 1 < ordered.length; i++) {
    t.equal(compareDebianVersions(ordered[i], ordered[i + 1]), -1, `${ordered[i]} < ${ordered[i + 1]}`)
    t.equal(compareDebianVersions(ordered[i + 1], ordered[i]), 1, `${ordered[i + 1]} > ${ordered[i]}`)
  }
  t.equal(compareDebianVersions('1.0~rc1', '1.0'), -1, 'a release candidate before the release')
  t.equal(compareDebianVersions('1:1.0', '2.0'), 1, 'the epoch decides first')
  t.equal(compareDebianVersions('1.0-1', '1.0-1+deb12u1'), -1, 'a stable update after the package it updates')
  t.equal(compareDebianVersions('1:9.2p1-2+deb12u3', '1:9.2p1-2+deb12u10'), -1, 'numbers compare as numbers, not text')
  t.equal(compareDebianVersions('9.2p1-2+deb12u3', '9.2p1-2+deb12u10'), -1)
  t.equal(compareDebianVersions('1.0a', '1.0+'), -1, 'letters sort before non-letters')
  t.equal(compareDebianVersions('1.0', '1.00'), 0, 'leading zeros do not count')
  t.equal(compareDebianVersions('0:1.0', '1.0'), 0, 'epoch 0 is the same as none')
  t.equal(compareDebianVersions('5:7.0.15-1~deb12u2', '5:7.0.15-1'), -1, 'a ~deb12u backport sorts before the version it is built from')
  t.equal(compareDebianVersions('1:9.18.33-1~deb12u2', '1:9.18.41-1~deb12u1'), -1)
  t.equal(compareDebianVersions('1:10.11.19-0+deb12u1', '1:10.11.3-1'), 1)
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
  const r = rng(20260517)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]
  const upstreams = ['1.0', '1.0~rc1', '1.0~~', '1.0a', '1.0+dfsg', '1.00', '9.2p1', '9.2p10', '10.11.3', '10.11.19',
    '2.4.62', '1.22.1', '7.0.15', '7.0~rc2', '1.0.0', '1.0.a', '1.0-', '3.0.3', '15.20', '15.4', '9.18.33']
  const revisions = ['', '1', '2', '1~deb12u2', '1~deb12u10', '2+deb12u3', '2+deb12u10', '0+deb12u1', '0ubuntu0.22.04.1',
    '3ubuntu0.13', '3ubuntu13.3', '1+b2', '1.1+deb12u1', '9+deb12u11', '15+deb12u10', '1~bpo12+1']
  const one = (): string => {
    let up = pick(upstreams)
    const rev = pick(revisions)
    if (up.endsWith('-') && !rev) up = up.slice(0, -1)
    const epoch = r() < 0.25 ? `${Math.floor(r() * 3)}:` : ''
    return `${epoch}${up}${rev ? `-${rev}` : ''}`
  }
  const pairs: Array<[string, string]> = []
  for (let i = 0; i < n; i++) {
    const a = one()
    // Half the pairs differ in one place only, where the interesting cases are.
    const b = r() < 0.5 ? one() : a.replace(/\d+(?!.*\d)/, (d) => String(Number(d) + (r() < 0.5 ? 1 : 0))).replace(/~/, r() < 0.3 ? '' : '~')
    pairs.push([a, b])
  }
  return pairs
}

t.test('agrees with dpkg --compare-versions on generated pairs', { skip: dpkg ? false : 'dpkg is not installed' }, async (t) => {
  const pairs = generatedPairs(300).filter(([a, b]) => isDebianVersion(a) && isDebianVersion(b))
  t.ok(pairs.length >= 250, `${pairs.length} valid pairs`)
  const q = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`
  const script = pairs.map(([a, b]) =>
    `if dpkg --compare-versions ${q(a)} lt ${q(b)}; then echo -1; elif dpkg --compare-versions ${q(a)} eq ${q(b)}; then echo 0; else echo 1; fi`).join('\n')
  const run = spawnSync('sh', ['-c', script], { encoding: 'utf8', maxBuffer: 1 << 20 })
  t.equal(run.status, 0, run.stderr)
  const answers = run.stdout.trim().split('\n').map(Number)
  t.equal(answers.length, pairs.length)
  let mismatches = 0
  pairs.forEach(([a, b], i) => {
    const ours = compareDebianVersions(a, b)
    if (ours !== answers[i]) {
      mismatches++
      t.fail(`${a} vs ${b}: dpkg says ${answers[i]}, we say ${ours}`)
    }
  })
  t.equal(mismatches, 0)
  t.ok(answers.includes(-1) && answers.includes(0) && answers.includes(1), 'the set covers less, equal and greater')
})
