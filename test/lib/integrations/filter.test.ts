// An integration's filter as the store query it runs: `kevOnly` keeps CISA's catalogue, as the API documents it and
// as a webhook's `kevOnly` reads it, so a finding the EU KEV alone lists gets no ticket.
import { test } from 'tap'
import { integrationQuery } from '../../../lib/integrations/sync'
import { MemoryResultsStore } from '../../../lib/store/memory/results'
import { passesFilter } from '../../../lib/webhooks/events'
import { finding, write } from '../../support/results'

const A = '10.0.0.31'

test('kevOnly: CISA\'s catalogue, for integrations as for webhooks', async (t) => {
  const results = new MemoryResultsStore()
  const cisa = finding(A, 80, 'CVE-2021-41773', 'Apache', '2.4.49')
  const euOnly = { ...finding(A, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1'), kev: null, kevCatalogues: ['eu' as const], euvdId: 'EUVD-2024-0001' }
  const neither = { ...finding(A, 6379, 'CVE-2022-0543', 'Redis', '6.0.5'), kev: null }
  t.not(cisa.kev, null, 'the fixture record is on CISA\'s catalogue')
  await results.recordHost(write({ address: A, at: Date.now(), services: [], findings: [cisa, euOnly, neither] }))

  const streamed = async (q: ReturnType<typeof integrationQuery>): Promise<string[]> => {
    const out: string[] = []
    for await (const f of results.streamFindings(q)) out.push(f.cveId)
    return out.sort()
  }
  t.same(integrationQuery({ kevOnly: true }), { kev: 'cisa' })
  t.same(await streamed(integrationQuery({ kevOnly: true })), ['CVE-2021-41773'], 'kevOnly: the CISA-listed finding alone')
  t.same(await streamed(integrationQuery({})), ['CVE-2021-41773', 'CVE-2022-0543', 'CVE-2024-6387'], 'no filter: all three')

  const stored = (await results.listFindings({ limit: 10, offset: 0 })).items
  t.same(stored.filter((f) => passesFilter(f, { kevOnly: true })).map((f) => f.cveId), ['CVE-2021-41773'], 'a webhook\'s kevOnly agrees')
})
