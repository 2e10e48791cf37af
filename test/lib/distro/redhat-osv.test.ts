// Red Hat's OSV export on real-format records: which streams count, CVEs from upstream[] and related[],
// Red Hat's rating, merges across advisories, rpm order deciding packages, and a resumable sync from a
// local stand-in for security.access.redhat.com/data/osv.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { decideBackport } from '../../../lib/distro/decide'
import { distroTable, readImportMeta } from '../../../lib/distro/entries'
import { readTrackerEntries } from '../../../lib/distro/families'
import {
  importRedhatOsv, redhatCves, redhatOsvSource, redhatRelease, redhatSeverity, redhatVerdicts, syncRedhatOsv, type RedhatRecord
} from '../../../lib/distro/redhat-osv'
import { createMemorySourceStore } from '../../../lib/sources/memory'
import { startFakeStatic } from '../../support/fake-static'

const DIR = path.join(__dirname, '..', '..', 'fixtures', 'distro', 'redhat-osv')
const record = (name: string): RedhatRecord => JSON.parse(readFileSync(path.join(DIR, name), 'utf8')) as RedhatRecord

t.test('streams, CVEs and ratings as the records give them', async (t) => {
  t.equal(redhatRelease('Red Hat:enterprise_linux:9::appstream'), '9')
  t.equal(redhatRelease('Red Hat:enterprise_linux:8::crb'), '8')
  t.equal(redhatRelease('Red Hat:enterprise_linux:9'), '9')
  t.equal(redhatRelease('Red Hat:rhel_eus:9.2::appstream'), null, 'an EUS stream pins a minor release')
  t.equal(redhatRelease('Red Hat:rhel_aus:8.6::appstream'), null)
  t.equal(redhatRelease('Red Hat:openshift:4.11::el8'), null)

  const gitLfs = record('RHSA-2024_4546.json')
  t.same(redhatCves(gitLfs), ['CVE-2023-45288'], 'upstream[]; the GO- id in related[] is not a CVE')
  t.equal(redhatSeverity(gitLfs), 'important', 'from the classification page it links')
  t.same(redhatVerdicts(gitLfs), [], 'AUS, E4S and TUS streams only: nothing kept')

  // RHSA-2024:6220 (ossf/osv-schema testdata) names its CVE in related[], as older records do.
  const older: RedhatRecord = {
    id: 'RHSA-2024:6220',
    related: ['CVE-2024-6345'],
    summary: 'Red Hat Security Advisory: python39:3.9 security update',
    affected: [{ package: { name: 'PyYAML', ecosystem: 'Red Hat:rhel_aus:8.6::appstream' }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '0:5.4.1-1.module+el8.5.0+10613+59a13ec4' }] }] }]
  }
  t.same(redhatCves(older), ['CVE-2024-6345'])
  t.equal(redhatSeverity({ summary: 'Moderate: kernel security update' }), 'moderate', 'or the summary\'s prefix')

  const virt = redhatVerdicts(record('RHSA-2024_4420.json'))
  t.same(virt.map((v) => `${v.release} ${v.pkg} ${v.cve} ${v.entry.fixedVersion}`), [
    '8 qemu-kvm CVE-2024-4467 15:6.2.0-50.module+el8.10.0+22027+db0a70a4',
    '8 libvirt CVE-2024-4467 0:8.0.0-23.2.module+el8.10.0+21972+d7867348',
    '8 libguestfs CVE-2024-4467 1:1.44.0-9.module+el8.9.0+18724+20190c23'
  ], 'the -debuginfo build is left out')
  t.same(virt[0].entry, { status: 'resolved', fixedVersion: '15:6.2.0-50.module+el8.10.0+22027+db0a70a4', urgency: 'important', source: 'redhat-osv', note: 'RHSA-2024:4420' })
})

t.test('imports a directory, merges a later advisory, and decides installed packages by rpm order', async (t) => {
  const store = await createMemorySourceStore()
  const r = await importRedhatOsv([DIR], store)
  t.match(r, { records: 3, packages: 4, cves: 4 }, 'sudo in 9; qemu-kvm, libvirt, libguestfs in 8')
  t.match(await readImportMeta(store, 'rhel'), { packages: 4, cves: 4 })

  const sudo = await readTrackerEntries(store, { family: 'rhel', release: '9', sourcePackage: 'sudo' })
  t.same(sudo?.get('CVE-2025-32462'), { status: 'resolved', fixedVersion: '0:1.9.5p2-10.el9_6.1', urgency: null, source: 'redhat-osv', note: 'RHSA-2025:9978' })
  const host = (version: string) => ({ family: 'rhel' as const, release: '9', source: 'sudo', version, evidence: 'rpm -qa' })
  t.match(decideBackport(host('1.9.5p2-10.el9_6.1'), sudo?.get('CVE-2025-32462')),
    { status: 'fixed_by_distribution', rule: 'rhel 9 sudo 1.9.5p2-10.el9_6.1 >= 0:1.9.5p2-10.el9_6.1 (Red Hat security data, resolved, RHSA-2025:9978)' })
  t.match(decideBackport(host('1.9.5p2-10.el9_6'), sudo?.get('CVE-2025-32462')), { status: 'open', fixedVersion: '0:1.9.5p2-10.el9_6.1' })
  t.match(decideBackport(host('1.9.5p2-9.el9'), sudo?.get('CVE-2025-32462')), { status: 'open' })

  const qemu = await readTrackerEntries(store, { family: 'rhel', release: '8', sourcePackage: 'qemu-kvm' })
  const q8 = (version: string) => ({ family: 'rhel' as const, release: '8', source: 'qemu-kvm', version, evidence: '' })
  t.match(decideBackport(q8('15:6.2.0-49.module+el8.10.0+21533+8fb3cd8c'), qemu?.get('CVE-2024-4467')), { status: 'open' })
  t.match(decideBackport(q8('6.2.0-53.module+el8.10.0+22375+ea5e8167'), qemu?.get('CVE-2024-4467')), { status: 'open' }, 'no epoch is epoch 0, below 15')

  // A later advisory fixes the same package again (a refix, or another module stream): the higher version is kept.
  const refix: RedhatRecord = {
    id: 'RHSA-2025:0001',
    upstream: ['CVE-2025-32462', 'CVE-2025-32463'],
    affected: [{ package: { name: 'sudo', ecosystem: 'Red Hat:enterprise_linux:9::baseos' }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '0:1.9.5p2-10.el9_6.2' }] }] }]
  }
  const file = path.join(t.testdir({ 'refix.json': JSON.stringify([refix]) }), 'refix.json')
  const m = await importRedhatOsv([file], store)
  t.match(m, { records: 1, packages: 1, cves: 1 }, 'one new package/CVE pair; the other merged')
  const merged = await readTrackerEntries(store, { family: 'rhel', release: '9', sourcePackage: 'sudo' })
  t.equal(merged?.get('CVE-2025-32462')?.fixedVersion, '0:1.9.5p2-10.el9_6.2')
  t.equal(await store.count(distroTable('rhel')), 4)
  t.match(await readImportMeta(store, 'rhel'), { cves: 5 })

  const bad = path.join(t.testdir({ 'x.json': '{"not": "osv"}', 'y.json': '{' }), '.')
  const skipped = await importRedhatOsv([bad], store)
  t.equal(skipped.skipped, 2)
  t.match(skipped.errors.join('\n'), /x\.json: not an OSV record[\s\S]*y\.json/)
})

t.test('sync: the listing, one file per advisory, a watermark, then 304; a failed advisory is fetched again', async (t) => {
  const names = ['RHSA-2024_4546.json', 'RHSA-2024_4420.json', 'RHSA-2025_9978.json']
  const recs = names.map(record)
  const listing = recs.map((r) => ({ id: r.id, modified: r.modified }))
  const files: Record<string, string> = { '/osv/all.json': JSON.stringify(listing) }
  for (const r of recs) files[`/osv/${r.id}.json`] = JSON.stringify(r)
  const fake = await startFakeStatic(files)
  t.teardown(fake.close)
  const url = `${fake.url}/osv`
  fake.fail('/osv/RHSA-2025:9978.json')
  const store = await createMemorySourceStore()

  const first = await syncRedhatOsv(store, { url })
  t.match(first, { status: 'imported', records: 2, failed: 1 })
  t.match(first.errors.join('\n'), /RHSA-2025:9978: .*HTTP 500/)
  t.equal(await readTrackerEntries(store, { family: 'rhel', release: '9', sourcePackage: 'sudo' }), null)

  const asked = fake.requests.length
  const second = await syncRedhatOsv(store, { url })
  t.match(second, { status: 'imported', records: 1, failed: 0, current: 2 }, 'only the advisory after the watermark')
  t.equal(fake.requests.length - asked, 2, 'the listing and one record')
  t.ok(await readTrackerEntries(store, { family: 'rhel', release: '9', sourcePackage: 'sudo' }))

  const third = await redhatOsvSource.sync({ nvd: undefined as never, sources: store }, { url })
  t.match(third, { status: 'not-modified' })
  t.equal(fake.requests[fake.requests.length - 1].status, 304)

  // A new advisory appears in the listing (its file named with `_`, as the export's files are).
  const later: RedhatRecord = { ...recs[2], id: 'RHSA-2026:0100', modified: '2026-06-01T00:00:00Z', upstream: ['CVE-2026-1000'] }
  fake.set('/osv/all.json', JSON.stringify([...listing, { id: later.id, modified: later.modified }]))
  fake.set('/osv/RHSA-2026_0100.json', JSON.stringify(later))
  const fourth = await syncRedhatOsv(store, { url })
  t.match(fourth, { records: 1, failed: 0 })
  t.equal((await readTrackerEntries(store, { family: 'rhel', release: '9', sourcePackage: 'sudo' }))?.size, 2)
  t.match(await redhatOsvSource.status({ nvd: undefined as never, sources: store }), { imported: true, records: 4, unit: 'packages', from: url })
})
