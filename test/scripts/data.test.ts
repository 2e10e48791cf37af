// `npm run data`: every source's status, an import and a sync through the registry, on the embedded stores.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { createMemoryIndex } from '../../lib/nvd/memory/cve-index'
import { createMemorySourceStore } from '../../lib/sources/memory'
import { runData } from '../../scripts/data'
import { startFakeStatic } from '../support/fake-static'
import { DEBIAN_TRACKER, KEV_CATALOG } from '../support/sources'

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'distro')

function sink (): { write: (s: string) => boolean, text: () => string } {
  let buf = ''
  return { write: (s: string) => { buf += s; return true }, text: () => buf }
}

async function context (): Promise<{ nvd: Awaited<ReturnType<typeof createMemoryIndex>>, sources: Awaited<ReturnType<typeof createMemorySourceStore>> }> {
  return { nvd: await createMemoryIndex(), sources: await createMemorySourceStore() }
}

t.test('status lists every registered source; imports through any of them show in it', async (t) => {
  const ctx = await context()
  const before = sink()
  t.equal(await runData(['status', '--json'], ctx, before), 0)
  const statuses = JSON.parse(before.text()) as Array<{ name: string, imported: boolean, ageSeconds: number | null }>
  t.same(statuses.map((s) => s.name), ['nvd', 'cve5', 'debian-tracker', 'ubuntu-osv', 'alpine-secdb', 'redhat-osv', 'kev', 'epss', 'euvd'])
  t.ok(statuses.every((s) => !s.imported && s.ageSeconds === null), 'nothing imported yet')

  const out = sink()
  const err = sink()
  t.equal(await runData(['import', 'debian-tracker', DEBIAN_TRACKER], ctx, out, err), 0)
  t.equal(await runData(['import', 'kev', KEV_CATALOG], ctx, out, err), 0)
  t.equal(await runData(['import', 'alpine-secdb', path.join(FIXTURES, 'alpine-secdb'), '--releases', '3.16'], ctx, out, err), 0)
  t.equal(await runData(['import', 'redhat-osv', path.join(FIXTURES, 'redhat-osv')], ctx, out, err), 0)
  t.match(out.text(), /Debian security tracker: \d+ CVE verdicts[\s\S]*CISA KEV: catalog [\s\S]*12 CVEs stored[\s\S]*Alpine secdb: 25 CVE verdicts for 1 release\/origin packages from 2 file\(s\)[\s\S]*Red Hat security data: 3 advisories applied/)

  const after = sink()
  t.equal(await runData(['status'], ctx, after), 0)
  t.match(after.text(), /debian-tracker +backports +\d+ packages, imported 20/)
  t.match(after.text(), /alpine-secdb +backports +1 packages/)
  t.match(after.text(), /kev +enriches +12 CVEs, imported .*, data of 20\d\d-.*days old/)
  t.match(after.text(), /epss +enriches +not imported/)
})

t.test('sync from a given URL; usage and unknown sources are exit 2, a failing source exit 1', async (t) => {
  const ctx = await context()
  const main = readFileSync(path.join(FIXTURES, 'alpine-secdb', 'v3.16', 'main.json'))
  const fake = await startFakeStatic({ '/v3.16/main.json': main, '/v3.16/community.json': readFileSync(path.join(FIXTURES, 'alpine-secdb', 'v3.16', 'community.json')) })
  t.teardown(fake.close)
  const out = sink()
  t.equal(await runData(['sync', 'alpine-secdb', '--url', fake.url, '--releases', '3.16', '--json'], ctx, out), 0)
  const [r] = JSON.parse(out.text()) as Array<{ name: string, outcome: { status: string, records: number } }>
  t.match(r, { name: 'alpine-secdb', outcome: { status: 'imported', records: 1 } })

  const err = sink()
  t.equal(await runData(['sync', 'nosuch'], ctx, sink(), err), 2)
  t.match(err.text(), /no data source named 'nosuch' \(sources: nvd, cve5, debian-tracker/)
  t.equal(await runData(['import', 'kev'], ctx, sink(), sink()), 2, 'import needs a file')
  t.equal(await runData(['sync', 'kev', 'epss', '--url', fake.url], ctx, sink(), sink()), 2, '--url with two sources')
  t.equal(await runData(['frobnicate'], ctx, sink(), sink()), 2)
  const failed = sink()
  t.equal(await runData(['sync', 'redhat-osv', '--url', `${fake.url}/osv`], ctx, sink(), failed), 1, 'no listing there')
  t.match(failed.text(), /redhat-osv: .*HTTP 404/)
})
