// One count of findings for a scan in every view: the scan's summary (as the worker writes it), the JSON, SARIF and
// HTML reports and the CLI's line all say the same (lib/finding-counts.ts: standing findings by severity). A finding a
// user accepted before the scan saw it again, and a standing finding an earlier scan left on a port this scan did not
// cover, are where they used to disagree.
import { test } from 'tap'
import { countFindings, countsText } from '../../../lib/finding-counts'
import { findingId } from '../../../lib/store/results-merge'
import { backends, build, SERVICE_KEY } from '../../helper'
import { finding } from '../../support/results'
import { seedScan } from '../../support/report-scans'

const A = '192.0.2.41'
const auth = { 'x-api-key': SERVICE_KEY }

test('every view counts a scan\'s findings the same way', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const T0 = Date.parse('2026-03-01T00:00:00.000Z')
      const ssh = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
      const http = { port: 80, service: 'http', product: 'Apache httpd', version: '2.4.49' }
      const https = { port: 443, service: 'https', product: 'Apache httpd', version: '2.4.49' }
      // The first scan sees three findings, one on 443; the user accepts one on 80.
      await seedScan(app, {
        id: 'count-1', at: T0, hosts: [{ address: A, services: [ssh, http, https],
          findings: [finding(A, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1'), finding(A, 80, 'CVE-2021-41773', 'Apache httpd', '2.4.49'), finding(A, 443, 'CVE-2024-38474', 'Apache httpd', '2.4.49')] }]
      })
      await app.results.decideFinding(findingId(A, 80, 'CVE-2021-41773'), 'accepted', 'behind a WAF', 'test')
      // The second scan covers 22 and 80 only, and sees both findings again.
      const scan = await seedScan(app, {
        id: 'count-2', at: T0 + 3600_000, hosts: [{ address: A, services: [ssh, http],
          findings: [finding(A, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1'), finding(A, 80, 'CVE-2021-41773', 'Apache httpd', '2.4.49')] }]
      })
      const listed = (await app.inject({ url: '/vulnerability?scanId=count-2&limit=500', headers: auth })).json<{ items: Array<{ severity: string, status: string }> }>().items
      const expected = countFindings(listed)
      t.equal(expected.standing, 1, 'one standing finding: the accepted one is listed, not counted')
      t.equal(expected.listed, 2)

      const summary = scan.summary!.findings
      t.same(summary, expected.bySeverity, 'the scan summary counts the same')

      const json = (await app.inject({ url: '/app/scan/count-2/report?format=json', headers: auth })).json<{ totals: { standingBySeverity: unknown } }>()
      t.same(json.totals.standingBySeverity, expected.bySeverity, 'the JSON report counts the same')

      const sarif = (await app.inject({ url: '/app/scan/count-2/report?format=sarif', headers: auth })).json<{ runs: Array<{ properties: { counts: unknown } }> }>()
      t.same(sarif.runs[0].properties.counts, expected, 'SARIF counts the same')

      const html = (await app.inject({ url: '/app/scan/count-2/report?format=html', headers: auth })).body
      t.match(html, `<th class="num" id="standing-total">${expected.standing}</th>`, 'the HTML summary counts the same')
      const hostRow = new RegExp(`<a href="#host-${A.replace(/\./g, '\\.')}">[^<]*</a></td><td[^>]*>[^]*?</td><td[^>]*>up</td><td rowspan="\\d+" class="num">(\\d+)</td>`).exec(html)
      t.equal(hostRow?.[1], String(expected.standing), 'the HTML hosts table gives the host this scan\'s standing findings, not every scan\'s')

      t.match(countsText(expected), /^1 finding: 1 (critical|high) \(1 more listed, not counted: accepted, false positive or fixed\)$/, 'the CLI line says the same')
    })
  }
})
