import path from 'node:path'
import t from 'tap'
import { importDebianTracker } from '../../../lib/distro/debian-tracker'
import { decideBackport } from '../../../lib/distro/decide'
import { readDistroEntry, type DistroPackageKey } from '../../../lib/distro/entries'
import { distroPackageOf, type DistroPackage } from '../../../lib/distro/package'
import { importUbuntuOsv } from '../../../lib/distro/ubuntu-osv'
import { printable } from '../../../lib/scanner/probes/common'
import * as ssh from '../../../lib/scanner/probes/ssh'
import { createMemorySourceStore } from '../../../lib/sources/memory'
import type { SourceStore } from '../../../lib/sources/source-store'

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'distro')

function sshPackage (line: string): DistroPackage {
  const reply = Buffer.from(line + '\r\n')
  const p = distroPackageOf({ ...ssh.parse(reply)!, cpe: [], banner: printable(reply) })
  if (!p) throw new Error(`no package from ${line}`)
  return p
}

async function decide (store: SourceStore, pkg: DistroPackage, cve: string) {
  const key = pkg.release && pkg.source ? { family: pkg.family, release: pkg.release, source: pkg.source } as DistroPackageKey : null
  return decideBackport(pkg, key ? await readDistroEntry(store, key, cve) : null)
}

t.test('Debian: a backport decided both ways on real tracker entries', async (t) => {
  const store = await createMemorySourceStore()
  await importDebianTracker(path.join(FIXTURES, 'debian-tracker.json'), store)
  const current = sshPackage('SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u10')

  const regresshion = await decide(store, current, 'CVE-2024-6387')
  t.same(regresshion, {
    status: 'fixed_by_distribution',
    fixedVersion: '1:9.2p1-2+deb12u3',
    rule: 'debian bookworm openssh 1:9.2p1-2+deb12u10 >= 1:9.2p1-2+deb12u3 (Debian security tracker, resolved)'
  }, 'deb12u10 carries the deb12u3 fix: numbers compare as numbers')
  t.equal((await decide(store, current, 'CVE-2023-51385')).status, 'fixed_by_distribution')
  t.equal((await decide(store, current, 'CVE-2026-35386')).status, 'fixed_by_distribution', 'fixed in exactly the running revision')

  const old = sshPackage('SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u2')
  const stillOpen = await decide(store, old, 'CVE-2024-6387')
  t.same(stillOpen, {
    status: 'open',
    fixedVersion: '1:9.2p1-2+deb12u3',
    rule: 'debian bookworm openssh 1:9.2p1-2+deb12u2 < 1:9.2p1-2+deb12u3 (Debian security tracker, resolved)'
  })
  t.equal((await decide(store, old, 'CVE-2023-51385')).status, 'fixed_by_distribution', 'deb12u2 fixed 51385 itself')

  const rowhammer = await decide(store, current, 'CVE-2023-51767')
  t.equal(rowhammer.status, 'open', 'the tracker lists it open in bookworm')
  t.match(rowhammer.rule, /no fixed version \(Debian security tracker, open, unimportant\)/)

  const bullseye = sshPackage('SSH-2.0-OpenSSH_8.4p1 Debian-5+deb11u3')
  const notAffected = await decide(store, bullseye, 'CVE-2024-6387')
  t.equal(notAffected.status, 'fixed_by_distribution')
  t.match(notAffected.rule, /debian bullseye openssh: not affected/)

  t.equal((await decide(store, current, 'CVE-2099-0001')).status, 'unknown', 'no tracker entry')
})

t.test('Debian: epochs and ~ in other packages', async (t) => {
  const store = await createMemorySourceStore()
  await importDebianTracker(path.join(FIXTURES, 'debian-tracker.json'), store)
  const bind: DistroPackage = { family: 'debian', release: 'bookworm', source: 'bind9', version: '1:9.18.33-1~deb12u2', evidence: 'version.bind' }
  t.equal((await decide(store, bind, 'CVE-2024-11187')).status, 'fixed_by_distribution')
  t.match(await decide(store, bind, 'CVE-2025-40778'), { status: 'open', fixedVersion: '1:9.18.41-1~deb12u1' })
  const pg: DistroPackage = { family: 'debian', release: 'bookworm', source: 'postgresql-15', version: '15.5-0+deb12u1', evidence: '' }
  t.equal((await decide(store, pg, 'CVE-2023-5869')).status, 'fixed_by_distribution')
  t.equal((await decide(store, pg, 'CVE-2024-0985')).status, 'open')
  const redis: DistroPackage = { family: 'debian', release: 'bookworm', source: 'redis', version: '5:7.0.15-1~deb12u1', evidence: '' }
  t.equal((await decide(store, redis, 'CVE-2024-31449')).status, 'open', '~deb12u1 is below ~deb12u2')
  t.equal((await decide(store, redis, 'CVE-2022-0543')).status, 'fixed_by_distribution', '7.0.15 is above 7.0~rc2')
  t.equal((await decide(store, { ...redis, version: '7.0.15-1~deb12u10' }, 'CVE-2024-31449')).status, 'open',
    'without its epoch 5: a version sorts below every fixed version: the table must add it')
})

t.test('family only or no release: the distribution cannot decide', async (t) => {
  const store = await createMemorySourceStore()
  await importDebianTracker(path.join(FIXTURES, 'debian-tracker.json'), store)
  const apache: DistroPackage = { family: 'debian', release: null, source: 'apache2', version: null, evidence: '(Debian)' }
  t.equal(decideBackport(apache, { status: 'resolved', fixedVersion: '2.4.62-1~deb12u1', urgency: null, source: 'debian-tracker' }).status, 'unknown')
  const noRev: DistroPackage = { family: 'debian', release: 'bookworm', source: 'openssh', version: null, evidence: '' }
  t.equal((await decide(store, noRev, 'CVE-2024-6387')).status, 'unknown', 'resolved needs the running revision')
  t.equal((await decide(store, noRev, 'CVE-2023-51767')).status, 'open', 'open in the release is open whatever the revision')
})

t.test('Ubuntu: decided on the OSV data', async (t) => {
  const store = await createMemorySourceStore()
  await importUbuntuOsv(path.join(FIXTURES, 'ubuntu-osv'), store)
  const jammy = sshPackage('SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.13')
  t.same(await decide(store, jammy, 'CVE-2024-6387'), {
    status: 'fixed_by_distribution',
    fixedVersion: '1:8.9p1-3ubuntu0.10',
    rule: 'ubuntu jammy openssh 1:8.9p1-3ubuntu0.13 >= 1:8.9p1-3ubuntu0.10 (Ubuntu OSV, resolved, high)'
  })
  t.equal((await decide(store, sshPackage('SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.7'), 'CVE-2024-6387')).status, 'open')
  t.equal((await decide(store, jammy, 'CVE-2023-51767')).status, 'open')
  t.equal((await decide(store, sshPackage('SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13'), 'CVE-2024-6387')).status, 'open',
    '13 is below 13.3')
  t.equal((await decide(store, sshPackage('SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13.4'), 'CVE-2024-6387')).status, 'fixed_by_distribution')
})
