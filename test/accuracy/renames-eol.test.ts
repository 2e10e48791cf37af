// The nginx rename and a release out of support, on every backend: matched, stored, listed and filtered by
// confidence the same way.
import fs from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { collectFromFiles, entriesOfPage, RenameCollector, writeAliases } from '../../lib/cpe/dictionary'
import { cpesFor } from '../../lib/cpe/aliases'
import { parseCve5Record } from '../../lib/cve5/record'
import { finishImport, writeSummaries } from '../../lib/cve5/source'
import { EOL_FINDING_ID, matchService, type MatchDeps } from '../../lib/match/service'
import type { ServiceInfo } from '../../lib/domain/services'
import { runMatch } from '../../scripts/nvd-match'
import { backends, openBackendsIn } from '../helper'
import { write } from '../support/results'

const HERE = path.join(__dirname, 'fixtures')
const json = (p: string): Record<string, unknown> => JSON.parse(fs.readFileSync(p, 'utf8')) as Record<string, unknown>
const NGINX_NVD = path.join(HERE, 'derived', 'CVE-2024-7347-nginx_open_source.json')
const NGINX_CNA = path.join(HERE, 'vulnrichment', '2024', '7xxx', 'CVE-2024-7347.json')
const RENAMES = path.join(HERE, 'derived', 'cpes-nginx-renamed.json')
const AT = new Date('2026-11-01T00:00:00Z')

function nginx (version: string): ServiceInfo {
  return { service: 'http', product: 'nginx', version, cpe: cpesFor('nginx', version), banner: `HTTP/1.1 400 Bad Request\\r\\nServer: nginx/${version}\\r\\n` }
}

test('the CPE dictionary page format: a deprecated name and what replaced it make a rename; a page without any makes none', async (t) => {
  const real = entriesOfPage(json(path.join(__dirname, '..', 'fixtures', 'nvd', 'cpes', 'cpes-microsoft-cpeMatchString-page1of10433.json')))
  t.same(real, [{ cpeName: 'cpe:2.3:a:microsoft:access:-:*:*:*:*:*:*:*', deprecated: false, deprecatedBy: [] }], 'the real CPE API page reads')
  const none = new RenameCollector()
  for (const e of real) none.add(e)
  t.equal(none.count, 0)
  const c = await collectFromFiles(RENAMES)
  t.same([...c.aliases()].sort(), [
    ['f5:nginx', [{ vendor: 'f5', product: 'nginx_open_source', relation: 'renamed-to', deprecated: 'cpe:2.3:a:f5:nginx:1.26.1:*:*:*:*:*:*:*', by: 'cpe:2.3:a:f5:nginx_open_source:1.26.1:*:*:*:*:*:*:*' }]],
    ['f5:nginx_open_source', [{ vendor: 'f5', product: 'nginx', relation: 'renamed-from', deprecated: 'cpe:2.3:a:f5:nginx:1.26.1:*:*:*:*:*:*:*', by: 'cpe:2.3:a:f5:nginx_open_source:1.26.1:*:*:*:*:*:*:*' }]]
  ])
  t.rejects(async () => { entriesOfPage({ vulnerabilities: [] }) }, /no products/)
})

test('renames and releases out of support on every backend', async (t) => {
  for (const backend of await backends()) {
    t.test(`${backend}: nginx's CVE filed under f5:nginx_open_source only`, async (t) => {
      const b = await openBackendsIn(t, backend)
      const deps: MatchDeps = { nvd: b.indexes.cve, sources: b.indexes.sources }
      await b.indexes.cve.upsertRaw([json(NGINX_NVD)])
      const cna = parseCve5Record(json(NGINX_CNA))
      t.ok(cna)
      await writeSummaries(b.indexes.sources, [cna!])
      await finishImport(b.indexes.sources)

      // Without the dictionary, the NVD configuration names none of nginx's names: the CNA's "NGINX Open Source" decides.
      const before = (await matchService(nginx('1.26.1'), deps, { now: AT })).verdicts.find((v) => v.cveId === 'CVE-2024-7347')
      t.match(before, { source: 'cna', observed: 'open', confidence: 'medium', confidenceScore: 70 })
      t.match(before?.confidenceNote, /name only f5:nginx_open_source, none of this product's names: the CVE record decided/)
      t.notOk((await matchService(nginx('1.26.2'), deps, { now: AT })).verdicts.some((v) => v.cveId === 'CVE-2024-7347'), '1.26.2 carries the fix')

      // With the renames imported, the NVD's own configuration decides through the alias.
      const r = await writeAliases(b.indexes.sources, await collectFromFiles(RENAMES), RENAMES)
      t.match(r, { renames: 1, products: 2 })
      const m = await matchService(nginx('1.26.1'), deps, { now: AT })
      const after = m.verdicts.find((v) => v.cveId === 'CVE-2024-7347')
      t.match(after, { source: 'nvd', observed: 'open', confidence: 'high', confidenceScore: 80, matchedCpe: 'cpe:2.3:a:f5:nginx_open_source:1.26.1:*:*:*:*:*:*:*' })
      t.match(m.aliases, [{ of: 'f5:nginx', origin: 'cpe-dictionary', relation: 'renamed-to', cpe: 'cpe:2.3:a:f5:nginx_open_source:1.26.1:*:*:*:*:*:*:*' }])
      let text = ''
      await runMatch(['cpe:2.3:a:f5:nginx:1.26.1:*:*:*:*:*:*:*'], deps, { write: (s: string) => { text += s } })
      t.match(text, /CVE-2024-7347[\s\S]*name: {3}cpe:2\.3:a:f5:nginx_open_source:1\.26\.1:\*:\*:\*:\*:\*:\*:\*, an alias of f5:nginx imported from the NVD's CPE dictionary/, 'nvd:match says which alias decided')

      // Stored and listed: the score and the minConfidence filter on this backend.
      const address = '192.0.2.80'
      await b.results.recordHost(write({ address, at: AT.getTime(), services: [{ port: 80, service: 'http', product: 'nginx', version: '1.26.1' }], findings: m.verdicts.map((v) => ({ ...v, address, port: 80 })) }))
      const listed = await b.results.listFindings({ limit: 50, offset: 0, host: address })
      t.match(listed.items, [{ cveId: 'CVE-2024-7347', confidenceScore: 80 }])
      t.equal((await b.results.listFindings({ limit: 50, offset: 0, minConfidence: 81 })).total, 0, 'minConfidence 81 leaves it out')
      t.equal((await b.results.listFindings({ limit: 50, offset: 0, minConfidence: 80 })).total, 1, 'minConfidence 80 keeps it')
    })

    t.test(`${backend}: an OpenSSH banner of Debian 7 and of Ubuntu 8.04`, async (t) => {
      const b = await openBackendsIn(t, backend)
      const deps: MatchDeps = { nvd: b.indexes.cve, sources: b.indexes.sources }
      await b.indexes.cve.upsertRaw([json(path.join(__dirname, '..', 'fixtures', 'nvd', 'cves', 'CVE-2023-51385.json'))])
      for (const [banner, version, release] of [['SSH-2.0-OpenSSH_6.0p1 Debian-4+deb7u2', '6.0p1', 'wheezy'], ['SSH-2.0-OpenSSH_4.7p1 Debian-8ubuntu1', '4.7p1', 'hardy']] as const) {
        const revision = banner.split(' ')[1]
        const service: ServiceInfo = { service: 'ssh', product: 'OpenSSH', version, cpe: cpesFor('OpenSSH', version), banner, extraInfo: `${revision}; protocol 2.0` }
        const m = await matchService(service, deps, { now: AT })
        t.equal(m.outOfSupport?.codename, release)
        const eol = m.verdicts.find((v) => v.cveId === EOL_FINDING_ID)
        t.match(eol, { source: 'distribution', observed: 'open', severity: 'high', confidenceScore: 90, description: /out of support/ }, `${release}: the release is a finding`)
        t.match(m.verdicts.find((v) => v.cveId === 'CVE-2023-51385'), { source: 'nvd', observed: 'open', confidence: 'medium', confidenceScore: 55, confidenceNote: /out of support/ },
          `${release}: the upstream version decides, at the table's eol-release score`)
        const address = release === 'wheezy' ? '192.0.2.7' : '192.0.2.8'
        await b.results.recordHost(write({ address, at: AT.getTime(), services: [{ port: 22, service: 'ssh', product: 'OpenSSH', version }], findings: m.verdicts.map((v) => ({ ...v, address, port: 22 })) }))
        const stored = (await b.results.listFindings({ limit: 50, offset: 0, host: address })).items
        t.same(stored.map((f) => [f.cveId, f.confidenceScore]).sort(), [['CVE-2023-51385', 55], [EOL_FINDING_ID, 90]])
        t.same((await b.results.listFindings({ limit: 50, offset: 0, host: address, minConfidence: 70 })).items.map((f) => f.cveId), [EOL_FINDING_ID], 'minConfidence 70 keeps the release finding only')
      }
      const scanId = `scan-${AT.toISOString()}`
      t.same((await b.results.listFindings({ limit: 50, offset: 0, scanId, minConfidence: 70 })).items.map((f) => f.cveId), [EOL_FINDING_ID, EOL_FINDING_ID], 'a scan\'s list filtered by score')
      t.equal((await b.results.listFindings({ limit: 50, offset: 0, scanId, minConfidence: 70 })).total, 2, 'and counted')
      let streamed = 0
      for await (const f of b.results.streamFindings({ scanId, minConfidence: 56 })) if (f.confidenceScore >= 56) streamed++
      t.equal(streamed, 2, 'exports filter alike')
      // A supported release is not out of support, and judged on its own day.
      const bookworm: ServiceInfo = { service: 'ssh', product: 'OpenSSH', version: '9.2p1', cpe: cpesFor('OpenSSH', '9.2p1'), banner: 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u10', extraInfo: 'Debian-2+deb12u10; protocol 2.0' }
      t.equal((await matchService(bookworm, deps, { now: AT })).outOfSupport, null)
      t.equal((await matchService(bookworm, deps, { now: new Date('2028-07-01T00:00:00Z') })).outOfSupport?.codename, 'bookworm', 'bookworm leaves LTS on 2028-06-30')
    })
  }
})
