// dpkg's order against dpkg itself on random versions built character by character (the other test's pairs
// are built from real version shapes): every character class Debian allows, in every position.
import { spawnSync } from 'node:child_process'
import t from 'tap'
import { compareDebianVersions, isDebianVersion } from '../../../lib/distro/debian-version'

const dpkg = spawnSync('dpkg', ['--version']).status === 0

function rng (seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

function randomPairs (n: number): Array<[string, string]> {
  const r = rng(4242)
  const pick = (s: string): string => s[Math.floor(r() * s.length)]
  const part = (alphabet: string, max: number): string => {
    let out = ''
    const len = 1 + Math.floor(r() * max)
    for (let i = 0; i < len; i++) out += r() < 0.45 ? String(Math.floor(r() * 30)) : pick(alphabet)
    return out
  }
  const one = (): string => {
    const epoch = r() < 0.2 ? `${Math.floor(r() * 3)}:` : ''
    const upstream = String(Math.floor(r() * 12)) + part('.~+aZz0', 5)
    const revision = r() < 0.7 ? `-${part('.~+b9', 4)}` : ''
    return epoch + upstream + revision
  }
  const pairs: Array<[string, string]> = []
  for (let i = 0; i < n; i++) {
    const a = one()
    // A third of the pairs share a prefix and differ at the end, where ~ and letters decide; some are the
    // same version spelt another way (epoch 0, leading zeros).
    const x = r()
    const b = x < 0.1 ? (a.includes(':') ? a : `0:${a}`).replace(/\d+/, (d) => `0${d}`)
      : x < 0.4 ? a + pick('~~+.a1') + (r() < 0.5 ? pick('~a1') : '') : one()
    pairs.push([a, b])
  }
  return pairs
}

t.test('agrees with dpkg --compare-versions on random versions', { skip: dpkg ? false : 'dpkg is not installed' }, async (t) => {
  const pairs = randomPairs(600).filter(([a, b]) => isDebianVersion(a) && isDebianVersion(b))
  t.ok(pairs.length >= 500, `${pairs.length} valid pairs`)
  // One shell reads the pairs and asks dpkg, so the test costs one process start per dpkg call only.
  const input = pairs.map(([a, b]) => `${a} ${b}`).join('\n') + '\n'
  const script = 'while read a b; do if dpkg --compare-versions "$a" lt "$b"; then echo -1; elif dpkg --compare-versions "$a" eq "$b"; then echo 0; else echo 1; fi; done'
  const run = spawnSync('sh', ['-c', script], { input, encoding: 'utf8', maxBuffer: 1 << 20 })
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
