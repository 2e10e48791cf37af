import { writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { distroTable, readDistroEntry } from '../../../lib/distro/entries'
import { importUbuntuOsv, ubuntuRelease } from '../../../lib/distro/ubuntu-osv'
import { createMemorySourceStore } from '../../../lib/sources/memory'

const DIR = path.join(__dirname, '..', '..', 'fixtures', 'distro', 'ubuntu-osv')
const key = (release: string, source = 'openssh') => ({ family: 'ubuntu' as const, release, source })

t.test('imports a directory of Ubuntu OSV records per release and source package', async (t) => {
  const store = await createMemorySourceStore()
  const r = await importUbuntuOsv(DIR, store)
  t.equal(r.records, 2)
  t.same(await readDistroEntry(store, key('jammy'), 'CVE-2024-6387'),
    { status: 'resolved', fixedVersion: '1:8.9p1-3ubuntu0.10', urgency: 'high', source: 'ubuntu-osv' }, 'older schema: CVE from related[], priority from ecosystem_specific')
  t.same(await readDistroEntry(store, key('noble'), 'CVE-2024-6387'),
    { status: 'resolved', fixedVersion: '1:9.6p1-3ubuntu13.3', urgency: 'high', source: 'ubuntu-osv' })
  t.same(await readDistroEntry(store, key('jammy'), 'CVE-2023-51767'),
    { status: 'open', fixedVersion: null, urgency: 'medium', source: 'ubuntu-osv' }, 'newer schema: CVE from upstream[], priority from severity')
  t.same(await readDistroEntry(store, key('bionic'), 'CVE-2023-51767'),
    { status: 'open', fixedVersion: null, urgency: 'medium', note: 'Ubuntu Pro', source: 'ubuntu-osv' })
  t.equal(await readDistroEntry(store, key('focal'), 'CVE-2024-6387'), null, 'a release the record does not list has no entry')
  t.ok(await readDistroEntry(store, key('jammy', 'openssh-ssh1'), 'CVE-2023-51767'))
  t.equal(r.packages, 4)
  t.equal(r.cves, 5)
})

t.test('release filter, Pro switch, single files and arrays', async (t) => {
  const store = await createMemorySourceStore()
  const r = await importUbuntuOsv(path.join(DIR, 'UBUNTU-CVE-2023-51767.json'), store, { includePro: false, releases: ['jammy'] })
  t.equal(r.packages, 2)
  t.equal(await readDistroEntry(store, key('bionic'), 'CVE-2023-51767'), null)
  t.equal(await store.count(distroTable('ubuntu')), 2)

  const dir = await mkdtemp(path.join(os.tmpdir(), 'ubuntu-osv-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const arr = path.join(dir, 'all.json')
  writeFileSync(arr, JSON.stringify([
    { id: 'UBUNTU-CVE-2024-0001', upstream: ['CVE-2024-0001'], affected: [{ package: { ecosystem: 'Ubuntu:24.04:LTS', name: 'redis' }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '5:7.0.15-1ubuntu0.24.04.1' }] }] }] },
    { id: 'USN-1234-1', affected: [] }
  ]))
  const s2 = await createMemorySourceStore()
  const r2 = await importUbuntuOsv(arr, s2)
  t.equal(r2.records, 1)
  t.equal(r2.skipped, 1)
  t.equal((await readDistroEntry(s2, key('noble', 'redis'), 'CVE-2024-0001'))?.fixedVersion, '5:7.0.15-1ubuntu0.24.04.1')
})

t.test('ecosystems', async (t) => {
  t.same(ubuntuRelease('Ubuntu:22.04:LTS'), { release: 'jammy', pro: false })
  t.same(ubuntuRelease('Ubuntu:Pro:16.04:LTS'), { release: 'xenial', pro: true })
  t.same(ubuntuRelease('Ubuntu:24.10'), { release: 'oracular', pro: false })
  t.equal(ubuntuRelease('Ubuntu:Pro:FIPS:16.04:LTS'), null, 'FIPS builds are a stream of their own')
  t.equal(ubuntuRelease('Debian:12'), null)
})
