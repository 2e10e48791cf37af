// `npm run data -- import euvd <file|url>…` and `sync euvd`: ENISA's EUVD through its descriptor alone (no command of
// its own), from its real dump formats (test/fixtures/euvd) as files and from a fake EUVD API on a loopback address.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { createMemoryIndex } from '../../lib/nvd/memory/cve-index'
import { createMemorySourceStore } from '../../lib/sources/memory'
import { runData } from '../../scripts/data'
import { startFakeExploitFeeds } from '../support/fake-exploit-feeds'

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'euvd')
const MAPPING = path.join(FIXTURES, 'cve-euvd-mapping.csv')
const KEV_DUMP = path.join(FIXTURES, 'kev-dump.json')

function sink (): { write: (s: string) => boolean, text: () => string } {
  let buf = ''
  return { write: (s: string) => { buf += s; return true }, text: () => buf }
}

t.test('import euvd from files, then from URLs; status and --json say what is held', async (t) => {
  const ctx = { nvd: await createMemoryIndex(), sources: await createMemorySourceStore() }
  const out = sink()
  const err = sink()
  t.equal(await runData(['import', 'euvd', MAPPING], ctx, out, err), 0, err.text())
  t.match(out.text(), /ENISA EUVD: mapping: 3 CVEs from 3 rows/)
  const status = sink()
  t.equal(await runData(['status'], ctx, status), 0)
  t.match(status.text(), /euvd +enriches +3 EUVD ids, imported 20/)

  const fake = await startFakeExploitFeeds()
  t.teardown(fake.close)
  fake.setFile('/api/kev/dump', readFileSync(KEV_DUMP), { contentType: 'application/json' })
  fake.setFile('/api/dump/cve-euvd-mapping', readFileSync(MAPPING), { contentType: 'text/csv' })
  const json = sink()
  t.equal(await runData(['import', 'euvd', `${fake.baseUrl}/api/kev/dump`, '--json'], ctx, json, err), 0, err.text())
  const [r] = JSON.parse(json.text()) as Array<{ name: string, outcome: { status: string, records: number, summary: string } }>
  t.match(r, { name: 'euvd', outcome: { status: 'imported', records: 3, summary: /exploited dump: 3 CVEs from 3 entries \(2 on the EU KEV\)/ } })

  const synced = sink()
  t.equal(await runData(['sync', 'euvd', '--url', `${fake.baseUrl}/api`, '--json'], ctx, synced, err), 0, err.text())
  const [s] = JSON.parse(synced.text()) as Array<{ outcome: { status: string } }>
  t.equal(s.outcome.status, 'imported', 'the mapping URL is new; the dump answers 304, the mapping 200')
  t.same(fake.requests.map((q) => [q.path, q.status]), [['/api/kev/dump', 200], ['/api/dump/cve-euvd-mapping', 200], ['/api/kev/dump', 304]])

  const bad = sink()
  t.equal(await runData(['import', 'euvd', path.join(FIXTURES, 'cve-euvd-mapping.csv.source.txt')], ctx, sink(), bad), 1)
  t.match(bad.text(), /neither the CVE-to-EUVD mapping/)
  t.equal(await runData(['sync', 'euvd', '--url', `${fake.baseUrl}/nothing`], ctx, sink(), sink()), 1, 'no dumps there: HTTP 404')
})
