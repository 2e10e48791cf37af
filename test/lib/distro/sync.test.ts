import { readFileSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { distroTable, readDistroEntry, readImportMeta } from '../../../lib/distro/entries'
import { runDistroImport } from '../../../lib/distro/import-command'
import { downloadResumable, syncDebianTracker, syncUbuntuOsv } from '../../../lib/distro/sync'
import { createMemorySourceStore } from '../../../lib/sources/memory'
import { startFakeTracker } from '../../support/fake-tracker'

const FIXTURES = path.join(__dirname, '..', '..', 'fixtures', 'distro')
const TRACKER = readFileSync(path.join(FIXTURES, 'debian-tracker.json'))
const bookworm = { family: 'debian' as const, release: 'bookworm', source: 'openssh' }

async function tmp (t: { teardown: (fn: () => unknown) => void }): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'distro-sync-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

t.test('sync downloads, imports, and then asks only for changes', async (t) => {
  const fake = await startFakeTracker(TRACKER)
  t.teardown(fake.close)
  const dir = await tmp(t)
  const store = await createMemorySourceStore()

  const first = await syncDebianTracker(store, { url: fake.url, dir, retryDelayMs: 0 })
  t.equal(first.download.status, 'downloaded')
  t.equal(first.download.bytes, TRACKER.length)
  t.ok(first.imported && first.imported.cves > 20)
  t.equal((await readDistroEntry(store, bookworm, 'CVE-2024-6387'))?.fixedVersion, '1:9.2p1-2+deb12u3')
  t.match(await readImportMeta(store, 'debian'), { from: fake.url, etag: /"/, lastModified: /GMT/ })
  t.same(await readdir(dir), [], 'the download is removed once imported')

  const second = await syncDebianTracker(store, { url: fake.url, dir, retryDelayMs: 0 })
  t.equal(second.download.status, 'not-modified')
  t.equal(second.imported, undefined)
  const asked = fake.requests[fake.requests.length - 1]
  t.equal(asked.status, 304)
  t.ok(asked.headers['if-none-match'] && asked.headers['if-modified-since'], 'both validators are sent')

  // The tracker publishes new data: the next sync takes it.
  const changed = JSON.parse(TRACKER.toString('utf8'))
  changed.openssh['CVE-2024-6387'].releases.bookworm.fixed_version = '1:9.2p1-2+deb12u4'
  fake.setBody(Buffer.from(JSON.stringify(changed)))
  const third = await syncDebianTracker(store, { url: fake.url, dir, retryDelayMs: 0 })
  t.equal(third.download.status, 'downloaded')
  t.equal((await readDistroEntry(store, bookworm, 'CVE-2024-6387'))?.fixedVersion, '1:9.2p1-2+deb12u4')
})

t.test('a dropped connection resumes with Range where it stopped', async (t) => {
  const fake = await startFakeTracker(TRACKER)
  t.teardown(fake.close)
  const dir = await tmp(t)
  const store = await createMemorySourceStore()
  fake.dropAfter(1000, 2)
  const r = await syncDebianTracker(store, { url: fake.url, dir, retryDelayMs: 0 })
  t.equal(r.download.resumed, 2)
  t.same(fake.requests.map((q) => q.status), [200, 206, 206])
  t.equal(fake.requests[1].headers.range, 'bytes=1000-')
  t.equal(fake.requests[2].headers.range, 'bytes=2000-')
  t.match(fake.requests[1].headers['if-range'], /^"[0-9a-f]{16}-1"$/, 'the continuation is tied to the ETag of the first answer')
  t.equal(fake.requests.reduce((n, q) => n + q.sent, 0), TRACKER.length, 'no byte fetched twice')
  t.equal((await readDistroEntry(store, bookworm, 'CVE-2024-6387'))?.fixedVersion, '1:9.2p1-2+deb12u3', 'the stitched file imports')
})

t.test('a partial file of older data starts over instead of mixing versions', async (t) => {
  const fake = await startFakeTracker(TRACKER)
  t.teardown(fake.close)
  const dir = await tmp(t)
  const dest = path.join(dir, 'data.json')
  fake.dropAfter(500, 1)
  await t.rejects(downloadResumable({ url: fake.url, dest, attempts: 1, retryDelayMs: 0 }), /cannot download/)
  const changed = Buffer.from(TRACKER.toString('utf8').replace('1:9.2p1-2+deb12u3', '1:9.2p1-2+deb12u4'))
  fake.setBody(changed)
  const r = await downloadResumable({ url: fake.url, dest, retryDelayMs: 0 })
  t.equal(r.resumed, 0)
  const last = fake.requests[fake.requests.length - 1]
  t.equal(last.headers.range, 'bytes=500-', 'the continuation is asked for with If-Range')
  t.equal(last.status, 200, 'and the server sends the whole new version instead')
  t.same(readFileSync(dest), changed)
})

t.test('gives up after its attempts and says why', async (t) => {
  const fake = await startFakeTracker(TRACKER)
  t.teardown(fake.close)
  const dir = await tmp(t)
  fake.dropAfter(10, 10)
  await t.rejects(downloadResumable({ url: fake.url, dest: path.join(dir, 'x.json'), attempts: 3, retryDelayMs: 0 }), /after 3 attempts/)
  t.equal(fake.requests.length, 3)
  await t.rejects(downloadResumable({ url: fake.url.replace('/tracker/data/json', '/missing'), dest: path.join(dir, 'y.json'), retryDelayMs: 0 }), /HTTP 404/)
})

t.test('Ubuntu OSV sync from a file of records', async (t) => {
  const records = ['UBUNTU-CVE-2024-6387.json', 'UBUNTU-CVE-2023-51767.json']
    .map((f) => JSON.parse(readFileSync(path.join(FIXTURES, 'ubuntu-osv', f), 'utf8')))
  const fake = await startFakeTracker(Buffer.from(JSON.stringify(records)), { path: '/osv/all.json' })
  t.teardown(fake.close)
  const dir = await tmp(t)
  const store = await createMemorySourceStore()
  const r = await syncUbuntuOsv(store, { url: fake.url, dir, retryDelayMs: 0 })
  t.equal(r.imported?.packages, 4)
  t.equal((await readDistroEntry(store, { family: 'ubuntu', release: 'jammy', source: 'openssh' }, 'CVE-2024-6387'))?.status, 'resolved')
  t.equal((await syncUbuntuOsv(store, { url: fake.url, dir, retryDelayMs: 0 })).download.status, 'not-modified')
})

t.test('the distro:import command core', async (t) => {
  const fake = await startFakeTracker(TRACKER)
  t.teardown(fake.close)
  const dir = await tmp(t)
  const store = await createMemorySourceStore()
  const lines: string[] = []
  const run = async (...argv: string[]): Promise<number> => await runDistroImport(argv, store, (l) => lines.push(l), (l) => lines.push(l), { retryDelayMs: 0 })

  t.equal(await run(path.join(FIXTURES, 'debian-tracker.json'), '--ubuntu', path.join(FIXTURES, 'ubuntu-osv')), 0)
  t.match(lines.join('\n'), /Debian security tracker: \d+ CVE verdicts for \d+ release\/source packages/)
  t.match(lines.join('\n'), /Ubuntu OSV: 5 CVE verdicts for 4 release\/source packages from 2 records/)
  t.ok(await store.count(distroTable('ubuntu')))

  lines.length = 0
  t.equal(await run(fake.url, '--releases', 'bookworm', '--download-dir', dir), 0)
  t.match(lines[0], /downloaded \d+ bytes/)
  t.equal(await readDistroEntry(store, { ...bookworm, release: 'bullseye' }, 'CVE-2024-6387'), null, '--releases keeps bookworm only')
  lines.length = 0
  t.equal(await run(fake.url, '--releases', 'bookworm', '--download-dir', dir), 0)
  t.match(lines[0], /not modified since the last import/)

  lines.length = 0
  t.equal(await run(), 2)
  t.match(lines.join('\n'), /usage: distro:import/)
  lines.length = 0
  t.equal(await run(path.join(dir, 'absent.json')), 1)
  t.match(lines[0], /absent\.json/)
})
