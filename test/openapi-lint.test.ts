// openapi.yaml passes Redocly's recommended rules with no error and no warning, so generators and
// reviewers get a clean document; a route that breaks a rule fails here, not in someone's client build.
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parse, stringify } from 'yaml'

const ROOT = join(__dirname, '..')
const REDOCLY = require.resolve('@redocly/cli/bin/cli.js')

interface LintReport { totals: { errors: number, warnings: number, ignored: number }, problems: Array<{ ruleId: string, message: string, severity: string }> }

function lint (file: string): Promise<LintReport> {
  return new Promise((resolve, reject) => {
    // No telemetry or update check: the tests make no outside connections.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }
    execFile(process.execPath, [REDOCLY, 'lint', file, '--format=json'], { cwd: ROOT, env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
      try {
        resolve(JSON.parse(stdout) as LintReport)
      } catch {
        reject(err ?? new Error(`redocly printed no JSON report: ${stdout.slice(0, 500)}`))
      }
    })
  })
}

test('openapi.yaml: no errors and no warnings under the recommended rules', async (t) => {
  const report = await lint(join(ROOT, 'openapi.yaml'))
  t.same(report.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message}`), [], 'no problems')
  t.equal(report.totals.errors, 0)
  t.equal(report.totals.warnings, 0)
  t.equal(report.totals.ignored, 0, 'nothing silenced with an ignore file')
})

test('the lint catches what it should (an operation without operationId or 4xx, an unused component)', async (t) => {
  const doc = parse(readFileSync(join(ROOT, 'openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, { operationId?: string, responses: Record<string, unknown> }>>, components: { schemas: Record<string, unknown> } }
  const health = doc.paths['/health'].get
  delete health.operationId
  for (const status of Object.keys(health.responses)) if (status.startsWith('4')) delete health.responses[status]
  doc.components.schemas.Orphan = { type: 'string' }
  const dir = mkdtempSync(join(tmpdir(), 'vulnscan-lint-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'openapi.yaml')
  writeFileSync(file, stringify(doc))
  const report = await lint(file)
  const rules = new Set(report.problems.map((p) => p.ruleId))
  t.ok(rules.has('operation-operationId'), 'a missing operationId is reported')
  t.ok(rules.has('operation-4xx-response'), 'a missing 4xx response is reported')
  t.ok(rules.has('no-unused-components'), 'an unused component is reported')
})
