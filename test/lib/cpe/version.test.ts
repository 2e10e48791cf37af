import { test, type Test } from 'tap'
import { compareVersions, splitDistroVersion, versionKey, compareKeys } from '../../../lib/cpe/version'

function lt (t: Test, a: string, b: string): void {
  t.ok(compareVersions(a, b) < 0, `${a} < ${b}`)
  t.ok(compareVersions(b, a) > 0, `${b} > ${a}`)
}

function eq (t: Test, a: string, b: string): void {
  t.equal(compareVersions(a, b), 0, `${a} = ${b}`)
  t.equal(compareVersions(b, a), 0, `${b} = ${a}`)
}

test('numeric segments compare as numbers', async (t) => {
  lt(t, '1.9', '1.10')
  lt(t, '1.2.9', '1.2.10')
  lt(t, '6.2.9', '6.2.10')
  lt(t, '10.9.6', '10.10.0')
  lt(t, '2', '10')
  eq(t, '4.94.1', '4.94.1')
})

test('missing segments are zeros', async (t) => {
  eq(t, '7.0', '7.0.0')
  eq(t, '16', '16.0')
  eq(t, '1.0.0.0', '1')
  lt(t, '7.0', '7.0.1')
})

test('pre-releases sort below the release', async (t) => {
  lt(t, '1.3.5rc3', '1.3.5')
  lt(t, '1.3.5rc2', '1.3.5rc3')
  lt(t, '1.3.5rc9', '1.3.5rc10')
  lt(t, '1.3.5-rc1', '1.3.5')
  lt(t, '1.3.5-rc1', '1.3.5-rc2')
  eq(t, '1.3.5-rc1', '1.3.5rc1')
  lt(t, '2.0alpha1', '2.0beta1')
  lt(t, '2.0beta2', '2.0rc1')
  lt(t, '2.0-alpha', '2.0')
  lt(t, '2.0.0-beta.2', '2.0.0')
  lt(t, '2.0pre1', '2.0rc1')
  lt(t, '2.0-dev', '2.0alpha1')
  lt(t, '1.0a1', '1.0')
  lt(t, '1.0b3', '1.0')
  lt(t, '7.0rc1', '7.0.0')
  lt(t, '1.3.4', '1.3.5rc1')
})

test('patch levels sort above the release and below the next one', async (t) => {
  lt(t, '9.2', '9.2p1')
  lt(t, '9.2p1', '9.2p2')
  lt(t, '9.2p1', '9.3')
  lt(t, '9.2p2', '9.3p1')
  lt(t, '7.2p2', '7.3')
  lt(t, '1.0.1', '1.0.1g')
  lt(t, '1.0.1f', '1.0.1g')
  lt(t, '1.0.1g', '1.0.2')
  lt(t, '1.0.1z', '1.0.2')
  lt(t, '1.3.5', '1.3.5a')
  lt(t, '1.3.5rc4', '1.3.5a')
})

test('distribution revisions are kept apart from the upstream version', async (t) => {
  t.same(splitDistroVersion('9.2p1-2+deb12u3'), { upstream: '9.2p1', distro: '2+deb12u3' })
  t.same(splitDistroVersion('1:9.2p1-2'), { upstream: '9.2p1', distro: '2', epoch: '1' })
  t.same(splitDistroVersion('7.0.15-1~deb12u1'), { upstream: '7.0.15', distro: '1~deb12u1' })
  t.same(splitDistroVersion('2.0.11-1.2+deb12u1'), { upstream: '2.0.11', distro: '1.2+deb12u1' })
  t.same(splitDistroVersion('8.9p1-3ubuntu0.4'), { upstream: '8.9p1', distro: '3ubuntu0.4' })
  t.same(splitDistroVersion('1.3.5-rc1'), { upstream: '1.3.5-rc1' })
  t.same(splitDistroVersion('7.0.15'), { upstream: '7.0.15' })
  // Upstream decides: the Debian 12 OpenSSH is older than 9.6 whatever its revision.
  lt(t, '9.2p1-2+deb12u3', '9.6')
  lt(t, '1:9.2p1-2', '9.6')
  lt(t, '7.0.15-1~deb12u1', '7.0.16')
  t.ok(compareVersions('7.0.15-1~deb12u1', '7.0.12') > 0)
  t.ok(compareVersions('2.0.11-1.2+deb12u1', '2.0.11') > 0, 'a revision sorts after the bare upstream version')
  lt(t, '2.0.11-1.2+deb12u1', '2.0.11-1.2+deb12u2')
  lt(t, '9.2p1-2+deb12u2', '9.2p1-2+deb12u3')
  lt(t, '7.0.15-1~deb12u1', '7.0.15-1')
})

test('keys are compiled once and reused', async (t) => {
  const a = versionKey('9.2p1')
  t.equal(versionKey('9.2p1'), a, 'memoized')
  t.ok(compareKeys(a, versionKey('9.6')) < 0)
  // Hot path: a million comparisons of compiled keys must be cheap (generous bound for a shared machine).
  const b = versionKey('9.6')
  const start = process.hrtime.bigint()
  let n = 0
  for (let i = 0; i < 1_000_000; i++) n += compareKeys(a, b)
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  t.equal(n, -1_000_000)
  t.ok(ms < 2000, `1e6 comparisons took ${ms.toFixed(0)} ms`)
})
