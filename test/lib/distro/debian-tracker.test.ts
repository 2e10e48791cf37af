import { createReadStream, readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import t from 'tap'
import { importDebianTracker, trackerVerdict } from '../../../lib/distro/debian-tracker'
import { distroTable, readDistroEntries, readDistroEntry, readImportMeta } from '../../../lib/distro/entries'
import { createMemorySourceStore } from '../../../lib/sources/memory'

const FIXTURE = path.join(__dirname, '..', '..', 'fixtures', 'distro', 'debian-tracker.json')
const bookworm = (source: string) => ({ family: 'debian' as const, release: 'bookworm', source })

t.test('imports every release of every package from the real-format dump', async (t) => {
  const store = await createMemorySourceStore()
  const r = await importDebianTracker(FIXTURE, store)
  const raw = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, Record<string, { releases: Record<string, unknown> }>>
  let verdicts = 0
  const keys = new Set<string>()
  for (const [pkg, cves] of Object.entries(raw)) {
    for (const info of Object.values(cves)) {
      for (const rel of Object.keys(info.releases)) { verdicts++; keys.add(`${pkg}:${rel}`) }
    }
  }
  t.same({ packages: r.packages, cves: r.cves, skipped: r.skipped }, { packages: keys.size, cves: verdicts, skipped: 0 })
  t.equal(await store.count(distroTable('debian')), keys.size)

  t.same(await readDistroEntry(store, bookworm('openssh'), 'CVE-2024-6387'),
    { status: 'resolved', fixedVersion: '1:9.2p1-2+deb12u3', urgency: 'not yet assigned', source: 'debian-tracker' })
  t.same(await readDistroEntry(store, { family: 'debian', release: 'bullseye', source: 'openssh' }, 'CVE-2024-6387'),
    { status: 'not-affected', fixedVersion: null, urgency: 'not yet assigned', source: 'debian-tracker' }, 'fixed_version 0 is not-affected')
  t.same(await readDistroEntry(store, bookworm('openssh'), 'CVE-2023-51767'),
    { status: 'open', fixedVersion: null, urgency: 'unimportant', source: 'debian-tracker' })
  t.equal((await readDistroEntry(store, bookworm('bind9'), 'CVE-2024-11187'))?.fixedVersion, '1:9.18.33-1~deb12u2')
  t.equal((await readDistroEntry(store, bookworm('redis'), 'CVE-2024-31449'))?.fixedVersion, '5:7.0.15-1~deb12u2')
  t.equal((await readDistroEntries(store, bookworm('postgresql-15')))?.size, 4)
  t.equal(await readDistroEntries(store, { family: 'debian', release: 'trixie', source: 'openssh' }), null)
  t.match(await readImportMeta(store, 'debian'), { from: FIXTURE, packages: keys.size, cves: verdicts })
})

t.test('keeps only the asked releases; a re-import replaces the table', async (t) => {
  const store = await createMemorySourceStore()
  await importDebianTracker(FIXTURE, store)
  const r = await importDebianTracker(FIXTURE, store, { releases: ['bullseye'] })
  t.equal(r.packages, 1, 'only openssh has bullseye entries in the fixture')
  t.equal(await store.count(distroTable('debian')), 1, 'bookworm entries of the previous import are gone')
  t.equal(await readDistroEntries(store, bookworm('openssh')), null)
})

t.test('reads gzip files and streams, skips tracker-internal ids and reports unusable entries', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'distro-tracker-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const gz = path.join(dir, 'json.gz')
  writeFileSync(gz, gzipSync(readFileSync(FIXTURE)))
  const a = await createMemorySourceStore()
  const fromGz = await importDebianTracker(gz, a)
  const b = await createMemorySourceStore()
  const fromStream = await importDebianTracker(createReadStream(FIXTURE), b)
  t.same(fromGz, fromStream)
  t.ok(fromGz.cves > 20)

  const odd = path.join(dir, 'odd.json')
  writeFileSync(odd, JSON.stringify({
    openssh: {
      'TEMP-0000000-8D5D3E': { releases: { bookworm: { status: 'open', urgency: 'unimportant' } } },
      'CVE-2024-6387': { releases: { bookworm: { status: 'resolved', fixed_version: '1:9.2p1-2+deb12u3' }, sid: { status: 'weird' } } },
      'CVE-2023-51767': { releases: { bookworm: { status: 'open', urgency: 'low', nodsa: 'Minor issue', nodsa_reason: 'postponed' } } }
    }
  }))
  const c = await createMemorySourceStore()
  const r = await importDebianTracker(odd, c)
  t.equal(r.cves, 2)
  t.equal(r.skipped, 1)
  t.match(r.errors[0], /CVE-2024-6387 sid: unusable status "weird"/)
  t.equal((await readDistroEntry(c, bookworm('openssh'), 'CVE-2023-51767'))?.note, 'no DSA: Minor issue: postponed')
})

t.test('a truncated dump fails and leaves the previous data in place', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'distro-tracker-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const store = await createMemorySourceStore()
  await importDebianTracker(FIXTURE, store)
  const before = await store.count(distroTable('debian'))
  const cut = path.join(dir, 'cut.json')
  const text = readFileSync(FIXTURE, 'utf8')
  writeFileSync(cut, text.slice(0, Math.floor(text.length * 0.6)))
  await t.rejects(importDebianTracker(cut, store), /cannot import the Debian security tracker data/)
  t.equal(await store.count(distroTable('debian')), before)
})

t.test('verdicts from tracker release entries', async (t) => {
  t.same(trackerVerdict({ status: 'resolved', fixed_version: '0' }), { status: 'not-affected', fixedVersion: null, urgency: null, source: 'debian-tracker' })
  t.equal(trackerVerdict({ status: 'resolved' }), null, 'resolved without a version says nothing usable')
  t.equal(trackerVerdict({ status: 'undetermined' })?.status, 'undetermined')
})
