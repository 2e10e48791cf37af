// `vulnscan vulns` with ENISA's EU KEV beside CISA's: the table marks each catalogue and shows the EUVD id, --json
// carries kevCatalogues and euvdId, --kev takes a catalogue (any other word is a usage error, exit 2).
import { test } from 'tap'
import { build, SERVICE_KEY } from '../helper'
import { cli, listen } from '../support/cli'
import { finding, write } from '../support/results'

test('vulns: KEV and EU columns, the EUVD id, --kev eu|cisa', async (t) => {
  const { app } = await build(t)
  const { url } = await listen(app)
  const env = { VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY, COLUMNS: '200' }
  const a = '192.0.2.40'
  await app.results.recordHost(write({
    address: a,
    at: Date.now(),
    services: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }, { port: 80, service: 'http', product: 'Apache httpd', version: '2.4.49' }],
    findings: [
      { ...finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1'), kevCatalogues: ['eu'], euvdId: 'EUVD-2024-0001' },
      { ...finding(a, 80, 'CVE-2021-41773', 'Apache httpd', '2.4.49'), kevCatalogues: ['cisa', 'eu'], euvdId: 'EUVD-2021-0002' },
      finding(a, 80, 'CVE-2024-38474', 'Apache httpd', '2.4.49')
    ]
  }))

  const table = await cli(['vulns'], env)
  t.equal(table.code, 0, table.stderr)
  t.match(table.stdout, /CVE-2021-41773 .*KEV(\+ransomware)? EU /, 'both catalogues on the row')
  t.match(table.stdout, /CVE-2024-6387 .* EU .*192\.0\.2\.40/, 'the EU KEV alone')
  t.match(table.stdout, /EUVD-2021-0002/, 'the EUVD id under the CVE id')
  t.notMatch(table.stdout, /CVE-2024-38474 [^\n]*(KEV|EU )/, 'neither catalogue: nothing marked')

  const eu = await cli(['vulns', '--kev', 'eu', '--json'], env)
  t.equal(eu.code, 0, eu.stderr)
  const page = JSON.parse(eu.stdout) as { items: Array<{ cveId: string, kevCatalogues: string[], euvdId: string | null }> }
  t.same(page.items.map((f) => [f.cveId, f.kevCatalogues, f.euvdId]).sort(),
    [['CVE-2021-41773', ['cisa', 'eu'], 'EUVD-2021-0002'], ['CVE-2024-6387', ['eu'], 'EUVD-2024-0001']])
  const cisa = await cli(['vulns', '--kev', 'cisa', '--json'], env)
  t.same((JSON.parse(cisa.stdout) as typeof page).items.map((f) => f.cveId), ['CVE-2021-41773'])
  const any = await cli(['vulns', '--kev', '--json'], env)
  t.same((JSON.parse(any.stdout) as typeof page).items.map((f) => f.cveId).sort(), ['CVE-2021-41773', 'CVE-2024-6387'], '--kev alone: any catalogue')

  const bad = await cli(['vulns', '--kev', 'us'], env)
  t.equal(bad.code, 2)
  t.match(bad.stderr, /--kev must be one of: cisa, eu \(got 'us'\)/)
})
