import { test } from 'tap'
import { decodeSummary, encodeSummary, parseCve5Json, parseCve5Record } from '../../../lib/cve5/record'
import { allCve5Ids, cve5Raw, cve5Summary, cve5Text, vulnrichmentRaw } from '../../support/cve5-fixtures'

test('a GitHub-advisory record keeps its range strings, English description, CVSS and CWEs', async (t) => {
  const s = cve5Summary('CVE-2024-31449')
  t.equal(s.id, 'CVE-2024-31449')
  t.equal(s.state, 'PUBLISHED')
  t.equal(s.published, '2024-10-07T19:51:08.775Z')
  t.equal(s.assigner, 'GitHub_M')
  t.match(s.description, /stack buffer overflow in the bit library/)
  t.same(s.cvss, { version: '3.1', score: 7, severity: 'HIGH', vector: 'CVSS:3.1/AV:L/AC:H/PR:L/UI:N/S:U/C:H/I:H/A:H', origin: 'cna' })
  t.same(s.cwes, ['CWE-20', 'CWE-121'])
  t.equal(s.affected.length, 1)
  t.same(s.affected[0], {
    origin: 'cna',
    vendor: 'redis',
    product: 'redis',
    versions: [
      { version: '>= 2.6, < 6.2.16', status: 'affected' },
      { version: '>= 7.0.0, < 7.2.6', status: 'affected' },
      { version: '>= 7.3.0, < 7.4.1', status: 'affected' }
    ]
  })
})

test('the Vulnrichment copy adds the CISA ADP CPE-based entry and its SSVC decision', async (t) => {
  const s = parseCve5Record(vulnrichmentRaw('CVE-2024-31449'))
  if (!s) throw new Error('no parse')
  t.equal(s.updated, '2024-10-07T20:23:00.209Z')
  const adp = s.affected.filter((a) => a.origin === 'adp')
  t.equal(adp.length, 1)
  t.equal(adp[0].provider, 'CISA-ADP')
  t.same(adp[0].cpes, ['cpe:2.3:a:redis:redis:*:*:*:*:*:*:*:*'])
  t.equal(adp[0].defaultStatus, 'unknown')
  t.same(adp[0].versions[1], { version: '7.0.0', status: 'affected', lessThan: '7.2.6', versionType: 'custom' })
  t.same(s.ssvc, { exploitation: 'none', automatable: 'no', technicalImpact: 'total' })
  t.equal(s.kev, undefined)
})

test('KEV from the CISA ADP, and an ADP CVSS when the CNA gives none', async (t) => {
  const php = cve5Summary('CVE-2024-4577')
  t.same(php.kev, { dateAdded: '2024-06-12', reference: 'https://www.cisa.gov/sites/default/files/feeds/known_exploited_vulnerabilities.json' })
  t.equal(php.ssvc?.exploitation, 'active')
  t.same(php.affected[0].platforms, ['Windows'])
  t.equal(php.affected[0].defaultStatus, 'affected')
  t.equal(php.affected.filter((a) => a.origin === 'adp').length, 3)
  const log4j = cve5Summary('CVE-2021-44228')
  t.same(log4j.cvss, { version: '3.1', score: 10, severity: 'CRITICAL', vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H', origin: 'adp' })
  t.equal(log4j.kev?.dateAdded, '2021-12-10')
  t.same(log4j.affected[0].versions[0].changes?.map((c) => c.at), ['2.3.1', '2.4', '2.12.2', '2.13.0', '2.15.0'])
})

test('CVSS 4.0 is preferred over 3.1 and keeps its version', async (t) => {
  const nginx = cve5Summary('CVE-2025-53859')
  t.equal(nginx.cvss?.version, '4.0')
  t.equal(nginx.cvss?.score, 6.3)
  t.equal(nginx.cvss?.severity, 'MEDIUM')
  const pg = cve5Summary('CVE-2025-8714')
  t.same(pg.cvss, { version: '3.1', score: 8.8, severity: 'HIGH', vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:U/C:H/I:H/A:H', origin: 'cna' })
})

test('commit ranges are kept once per entry, enough to say they cannot be compared', async (t) => {
  const linux = cve5Summary('CVE-2024-26925')
  t.same(linux.affected[0].versions, [{ version: '4b6346dc1edf', status: 'affected', lessThan: '61ac7284346c', versionType: 'git' }])
  t.equal(linux.affected[1].versions.length, 9, 'the version ranges are all kept')
})

test('a rejected record keeps its reason and no affected data', async (t) => {
  const s = cve5Summary('CVE-2024-2370')
  t.equal(s.state, 'REJECTED')
  t.match(s.description, /duplicate of CVE-2018-5341/)
  t.same(s.affected, [])
})

test('every fixture parses, and the summary is much smaller than the record', async (t) => {
  for (const id of allCve5Ids()) {
    const s = cve5Summary(id)
    t.equal(s.id, id)
    const text = cve5Text(id)
    const compact = encodeSummary(s)
    t.same(decodeSummary(compact), s, `${id} round-trips`)
    t.ok(compact.length < text.length / 2, `${id}: ${compact.length} bytes from ${text.length}`)
  }
})

test('anything that is not a CVE record is refused', async (t) => {
  t.equal(parseCve5Json('{"fetchTime":"2025-12-13T14:09:13.084Z","new":[]}'), null)
  t.equal(parseCve5Json('not json'), null)
  t.equal(parseCve5Record({ ...cve5Raw('CVE-2024-31449'), dataType: 'SOMETHING_ELSE' }), null)
  t.equal(parseCve5Record({ cveMetadata: { cveId: 'CVE-24-1' } }), null)
})
