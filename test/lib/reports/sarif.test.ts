// The SARIF report against the official SARIF 2.1.0 JSON schema (test/fixtures/sarif), and what viewers read from it:
// one result per finding, one rule per CVE with its NVD page and CVSS as security-severity, host and port locations.
import { test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Ajv from 'ajv'
import addFormats from 'ajv-formats'
import { build } from '../../helper'
import { finding } from '../../support/results'
import { seedScan, threeHosts } from '../../support/report-scans'
import { sarifReport, levelOf } from '../../../lib/reports/sarif'
import { remediation, upperBound } from '../../../lib/reports/gather'
import { findingId } from '../../../lib/store/results-merge'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const schema = JSON.parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'sarif', 'sarif-schema-2.1.0.json'), 'utf8')) as Record<string, unknown>

function validator () {
  const ajv = new Ajv({ allErrors: true, strict: false })
  addFormats(ajv)
  return ajv.compile(schema)
}

async function text (gen: AsyncIterable<string>): Promise<string> {
  let out = ''
  for await (const piece of gen) out += piece
  return out
}

interface Log {
  runs: Array<{
    results: Array<{ ruleId: string, ruleIndex: number, level: string, kind: string, message: { text: string }, locations: Array<{ physicalLocation: { artifactLocation: { uri: string } }, logicalLocations: Array<{ name: string }> }>, fingerprints: Record<string, string>, properties: Record<string, unknown> }>
    tool: { driver: { name: string, rules: Array<{ id: string, helpUri?: string, defaultConfiguration: { level: string }, properties: Record<string, unknown>, help: { text: string } }> } }
  }>
}

test('the SARIF report is valid SARIF 2.1.0 and says what viewers show', async (t) => {
  const validate = validator()
  t.notOk(validate({ version: '2.1.0', runs: [{ tool: { driver: { name: 'x' } }, results: [{ message: { text: 'm' }, level: 'critical' }] }] }), 'the schema refuses a level SARIF does not have')
  t.notOk(validate({ version: '2.1.0', runs: [{ tool: { driver: { name: 'x' } }, results: [{ message: { text: 'm' }, locations: [{ physicalLocation: { artifactLocation: { uri: 'tcp://[::1' } } }] }] }] }), 'and a malformed URI')

  const { app } = await build(t)
  const hosts = threeHosts()
  const v6 = '2001:db8::5'
  const unscored = finding(v6, 443, 'CVE-2023-28366', 'Mosquitto', '2.0.15')
  unscored.cvss = null
  unscored.severity = 'unknown'
  hosts.push({ address: v6, services: [{ port: 443, service: 'mqtt', product: 'Mosquitto', version: '2.0.15' }], findings: [unscored] })
  const scan = await seedScan(app, { id: 'sarif-1', at: T0, hosts })
  // A user's decision, kept in the result's properties.
  await app.results.decideFinding(findingId('192.0.2.32', 6379, 'CVE-2022-0543'), 'accepted', 'isolated test box', 'service')

  const raw = await text(sarifReport({ scan, results: app.results, filters: {}, generatedAt: new Date(T0 + 70_000).toISOString() }))
  const log = JSON.parse(raw) as Log
  t.ok(validate(log), 'valid against the SARIF 2.1.0 schema', { errors: validate.errors })

  const run = log.runs[0]
  t.equal(run.tool.driver.name, 'vulnscan')
  t.equal(run.results.length, 5, 'one result per finding')
  t.same(run.tool.driver.rules.map((r) => r.id).sort(), ['CVE-2021-41773', 'CVE-2022-0543', 'CVE-2023-28366', 'CVE-2024-38474', 'CVE-2024-6387'], 'one rule per CVE')
  for (const r of run.results) t.equal(run.tool.driver.rules[r.ruleIndex].id, r.ruleId, `${r.ruleId}: ruleIndex points at its rule`)

  const ssh = run.results.find((r) => r.ruleId === 'CVE-2024-6387')
  t.equal(ssh?.locations[0].physicalLocation.artifactLocation.uri, 'tcp://192.0.2.31:22', 'the host and port as artifact URI')
  t.equal(ssh?.locations[0].logicalLocations[0].name, '192.0.2.31:22', 'and as logical location')
  t.equal(ssh?.fingerprints['vulnscan/finding/v1'], findingId('192.0.2.31', 22, 'CVE-2024-6387'), 'the stable finding id as fingerprint')
  t.match(ssh?.message.text, /^CVE-2024-6387 \(high, CVSS 8\.1\) on 192\.0\.2\.31:22: OpenSSH 9\.2p1\./)
  const mqtt = run.results.find((r) => r.ruleId === 'CVE-2023-28366')
  t.equal(mqtt?.locations[0].physicalLocation.artifactLocation.uri, 'tcp://[2001:db8::5]:443', 'IPv6 in brackets')
  t.equal(mqtt?.level, 'warning', 'no score yet: a warning')
  const accepted = run.results.find((r) => r.ruleId === 'CVE-2022-0543')
  t.match(accepted?.properties, { status: 'accepted', comment: 'isolated test box', source: 'nvd' }, 'the decision rides along')
  for (const r of run.results) {
    const score = r.properties.confidenceScore as number
    t.ok(Number.isInteger(score) && score >= 0 && score <= 100, `${r.ruleId}: the confidence score in the properties`)
    t.equal((r as unknown as { rank: number }).rank, score, `${r.ruleId}: and as SARIF's rank`)
  }
  const sure = JSON.parse(await text(sarifReport({ scan, results: app.results, filters: { minConfidence: 80 }, generatedAt: new Date(T0 + 70_000).toISOString() }))) as Log
  t.ok(sure.runs[0].results.length < run.results.length && sure.runs[0].results.every((r) => (r.properties.confidenceScore as number) >= 80), 'a report filtered by minConfidence holds only the sure ones')

  const rule = (id: string) => run.tool.driver.rules.find((r) => r.id === id)
  t.equal(rule('CVE-2024-6387')?.helpUri, 'https://nvd.nist.gov/vuln/detail/CVE-2024-6387', 'help links to the NVD page')
  t.equal(rule('CVE-2024-6387')?.properties['security-severity'], '8.1', 'CVSS as GitHub reads it')
  t.equal(rule('CVE-2022-0543')?.properties['security-severity'], '10.0')
  t.equal(rule('CVE-2022-0543')?.defaultConfiguration.level, 'error')
  t.notOk('security-severity' in (rule('CVE-2023-28366')?.properties ?? {}), 'no score, no security-severity (never 0)')
  t.match(rule('CVE-2024-6387')?.help.text, /race condition/i, 'the CVE description as help text')
})

test('levels and remediation', async (t) => {
  t.same(['critical', 'high', 'medium', 'low', 'none', 'unknown'].map((s) => levelOf(s as 'high')), ['error', 'error', 'warning', 'note', 'note', 'warning'])
  t.same(upperBound('cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:* >= 8.5, < 9.8'), { version: '9.8', inclusive: false })
  t.same(upperBound('cpe:2.3:a:redis:redis:*:*:*:*:*:*:*:* <= 6.2.6'), { version: '6.2.6', inclusive: true })
  t.same(upperBound('cna: redis/redis ">= 7.0.0, < 7.2.6" (semver)'), { version: '7.2.6', inclusive: false })
  t.equal(upperBound('cpe:2.3:a:vendor:product:1.0:*:*:*:*:*:*:*'), null)
  const base = finding('192.0.2.1', 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
  const record = { ...base, id: 'x', protocol: 'tcp' as const, firstSeen: '', lastSeen: '', lastScanId: 's', status: 'open' as const, confidenceScore: 80, fixedAt: null, comment: null, decidedBy: null, decidedAt: null }
  t.equal(remediation({ ...record, criterion: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:* >= 8.5, < 9.8', rule: 'nvd: …' }), 'Upgrade OpenSSH to 9.8 or later (the first fixed version).')
  t.equal(remediation({ ...record, criterion: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:* <= 9.7', rule: 'nvd: …' }), 'Upgrade OpenSSH beyond 9.7 (the last affected version).')
  t.equal(remediation({ ...record, criterion: 'cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*', rule: 'nvd: exact' }), 'No fixed version known.')
  const distribution = { family: 'debian', release: 'bookworm', sourcePackage: 'openssh', packageVersion: '1:9.2p1-2+deb12u2', fixedVersion: '1:9.2p1-2+deb12u3', trackerStatus: 'resolved', urgency: null }
  t.equal(remediation({ ...record, source: 'distribution', distribution }), 'Upgrade the debian bookworm package openssh to 1:9.2p1-2+deb12u3 or later (the distribution\'s fixed version).')
  t.match(remediation({ ...record, status: 'fixed_by_distribution', observed: 'fixed_by_distribution', distribution }), /already carries the fix/)
})
