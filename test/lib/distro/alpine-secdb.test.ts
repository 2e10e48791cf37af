// Alpine's secdb on real-format files: parse, import from files and directories, decide packages with apk's
// version order, and sync from a local stand-in for secdb.alpinelinux.org.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { alpineRelease, alpineSecdbSource, importAlpineSecdb, parseSecdb, syncAlpineSecdb } from '../../../lib/distro/alpine-secdb'
import { decideBackport } from '../../../lib/distro/decide'
import { distroTable, readImportMeta } from '../../../lib/distro/entries'
import { readTrackerEntries } from '../../../lib/distro/families'
import { createMemorySourceStore } from '../../../lib/sources/memory'
import { startFakeStatic } from '../../support/fake-static'

const DIR = path.join(__dirname, '..', '..', 'fixtures', 'distro', 'alpine-secdb')
const V311 = path.join(DIR, 'v3.11', 'main.json')
const V316 = path.join(DIR, 'v3.16', 'main.json')
const read = (p: string): string => readFileSync(p, 'utf8')

t.test('parses a secdb file: release, CVE ids among other ids, "0" as not affected, the highest fix', async (t) => {
  t.equal(alpineRelease('v3.20'), '3.20')
  t.equal(alpineRelease('edge'), 'edge')
  t.equal(alpineRelease('3.x'), null)
  const p = parseSecdb(JSON.parse(read(V311)))
  t.equal(p.release, '3.11')
  t.equal(p.repo, 'main')
  t.same(p.packages.get('xen')?.get('CVE-2018-7540'), { status: 'resolved', fixedVersion: '4.10.0-r2', urgency: null, source: 'alpine-secdb' },
    'a CVE named beside an XSA id')
  t.equal(p.packages.get('xen')?.size, 1, 'XSA-only entries carry no CVE')
  t.equal(p.packages.get('busybox')?.get('CVE-2019-5747')?.fixedVersion, '1.30.1-r2', 'listed under two versions: the higher one')
  t.equal(p.packages.get('apk-tools')?.get('CVE-2017-9671')?.fixedVersion, '2.7.2-r0')
  const ssl = parseSecdb(JSON.parse(read(V316))).packages.get('openssl')
  t.same(ssl?.get('CVE-2022-2068'), { status: 'not-affected', fixedVersion: null, urgency: null, source: 'alpine-secdb' })
  t.equal(ssl?.get('CVE-2021-3711')?.fixedVersion, '1.1.1l-r0')
  t.equal(ssl?.size, 25)
  t.throws(() => parseSecdb({ packages: [] }), /not an Alpine secdb file/)
  t.throws(() => parseSecdb([1, 2]), /not an Alpine secdb file/)
})

t.test('imports a directory of release files; a package decided both ways by apk order', async (t) => {
  const store = await createMemorySourceStore()
  const r = await importAlpineSecdb([DIR], store)
  t.equal(r.files, 3)
  t.equal(r.packages, 4, 'xen, apk-tools, busybox in 3.11; openssl in 3.16')
  t.equal(await store.count(distroTable('alpine')), 4)
  t.match(await readImportMeta(store, 'alpine'), { packages: 4, cves: 1 + 2 + 5 + 25 })

  const entries = await readTrackerEntries(store, { family: 'alpine', release: '3.16', sourcePackage: 'openssl' })
  t.equal(entries?.size, 25)
  const pkg = (version: string) => ({ family: 'alpine' as const, release: '3.16', source: 'openssl', version, evidence: 'apk info' })
  t.match(decideBackport(pkg('3.0.5-r2'), entries?.get('CVE-2022-2097')), { status: 'fixed_by_distribution', rule: 'alpine 3.16 openssl 3.0.5-r2 >= 3.0.5-r0 (Alpine secdb, resolved)' })
  t.match(decideBackport(pkg('3.0.3-r0'), entries?.get('CVE-2022-2097')), { status: 'open', fixedVersion: '3.0.5-r0' })
  t.match(decideBackport(pkg('1.1.1k-r1'), entries?.get('CVE-2021-3711')), { status: 'open' }, 'letters after the number: 1.1.1k < 1.1.1l')
  t.match(decideBackport(pkg('3.0.3-r0'), entries?.get('CVE-2022-1292')), { status: 'fixed_by_distribution', rule: /not affected/ })
  t.equal(await readTrackerEntries(store, { family: 'alpine', release: '3.11', sourcePackage: 'openssl' }), null, 'nothing for another release')

  // A file again merges: what it lists is replaced, the rest stays.
  const again = await importAlpineSecdb([V311], store, { releases: ['3.11'] })
  t.equal(again.files, 1)
  t.equal(await store.count(distroTable('alpine')), 4)
  const only316 = await importAlpineSecdb([V311], store, { releases: ['v3.16'] })
  t.equal(only316.files, 0, 'a release not asked for is left out')
})

t.test('sync: the releases from the index page, each file once, then 304s; a failing file is retried by the next run', async (t) => {
  const index = '<html><body><pre><a href="../">../</a>\n<a href="v3.11/">v3.11/</a>\n<a href="v3.16/">v3.16/</a>\n<a href="last-update">last-update</a></pre></body></html>'
  const fake = await startFakeStatic({
    '/': index,
    '/v3.11/main.json': read(V311),
    '/v3.16/main.json': read(V316),
    '/v3.16/community.json': read(path.join(DIR, 'v3.16', 'community.json'))
  })
  t.teardown(fake.close)
  fake.fail('/v3.16/main.json')
  const store = await createMemorySourceStore()
  const first = await syncAlpineSecdb(store, { url: fake.url })
  t.equal(first.files, 2, 'v3.11 main and v3.16 community')
  t.equal(first.skipped, 2, 'v3.11 has no community file here; v3.16 main failed once')
  t.match(first.errors.join('\n'), /v3\.16\/main\.json failed: HTTP 500/)
  t.equal(await readTrackerEntries(store, { family: 'alpine', release: '3.16', sourcePackage: 'openssl' }), null)

  const second = await syncAlpineSecdb(store, { url: fake.url })
  t.equal(second.files, 1, 'only the file the last run missed')
  t.equal(second.unchanged, 2, 'the others answer 304')
  t.equal((await readTrackerEntries(store, { family: 'alpine', release: '3.16', sourcePackage: 'openssl' }))?.size, 25)

  const ctx = { nvd: undefined as never, sources: store }
  const third = await alpineSecdbSource.sync(ctx, { url: fake.url, releases: ['3.16'] })
  t.match(third, { status: 'not-modified', summary: /0 CVE verdicts .* 2 unchanged/ })
  t.equal(fake.requests.filter((r) => r.path === '/').length, 2, 'named releases need no index page')
  const status = await alpineSecdbSource.status(ctx)
  t.match(status, { imported: true, records: 4, unit: 'packages', sizeBytes: Number, dataDate: /^2026-05-01T/ })
})
