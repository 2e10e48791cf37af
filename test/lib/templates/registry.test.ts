// Directories of templates: TEMPLATES_DIR's separators, duplicate ids, templates:check's report and exit code, and the
// finding a template hit becomes.
import { test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadTemplateSet, templateDirs } from '../../../lib/templates/registry'
import { runCheck } from '../../../scripts/templates-check'
import { exposureVerdict } from '../../../lib/match/exposures'
import { newScanRecord } from '../../../lib/scans'

const GOOD = (id: string): string => `id: ${id}\ninfo:\n  name: Good\n  severity: info\n  tags: nats\ntcp:\n  - host: ["{{Hostname}}"]\n    port: 4222\n    matchers:\n      - type: word\n        words: ["INFO {"]\n`
const BAD = 'id: bad-one\ninfo:\n  name: Bad\n  severity: low\ntcp:\n  - port: 1\n    matchers:\n      - type: size\n        size: [0]\n'

function dirWith (t: { teardown: (fn: () => void) => void }, files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-tpl-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), text)
  }
  return dir
}

test('TEMPLATES_DIR takes commas and the path delimiter', async (t) => {
  t.same(templateDirs(`/a,/b${path.delimiter}/c, `), ['/a', '/b', '/c'])
  t.same(templateDirs(''), [])
})

test('user directories load recursively beside the project set; a taken id is refused', async (t) => {
  const a = dirWith(t, { 'x/one.yaml': GOOD('user-one'), 'dup.yml': GOOD('nats-no-auth'), 'notes.txt': 'ignored' })
  const set = loadTemplateSet({ TEMPLATES_DIR: a, TEMPLATES_SIGNING_CERT: '', TEMPLATES_REQUIRE_SIGNED: false })
  t.ok(set.templates.some((x) => x.id === 'user-one' && x.origin === 'user'))
  t.ok(set.templates.some((x) => x.id === 'nats-no-auth' && x.origin === 'project'))
  t.match(set.refused, [{ id: 'nats-no-auth', origin: 'user', reason: /already taken by nats-no-auth\.yaml/ }])
  const missing = loadTemplateSet({ TEMPLATES_DIR: path.join(a, 'nope'), TEMPLATES_SIGNING_CERT: '', TEMPLATES_REQUIRE_SIGNED: false })
  t.match(missing.refused, [{ reason: 'not a directory' }])
})

test('templates:check prints loaded and refused, and exits 1 on a refusal', async (t) => {
  const config = { TEMPLATES_DIR: '', TEMPLATES_SIGNING_CERT: '', TEMPLATES_REQUIRE_SIGNED: false }
  let out = ''
  const w = { write: (s: string) => { out += s } }
  t.equal(runCheck([dirWith(t, { 'good.yaml': GOOD('good-one') })], config, w), 0)
  t.match(out, /loaded .*good-one \(info\) services nats ports 4222/)
  out = ''
  t.equal(runCheck([dirWith(t, { 'good.yaml': GOOD('good-one'), 'bad.yaml': BAD })], config, w), 1)
  t.match(out, /refused.* bad-one .*bad\.yaml: .*empty or absent reply/)
  t.match(out, /1 loaded, 1 refused/)
  out = ''
  t.equal(runCheck(['--json', dirWith(t, { 'bad.yaml': BAD })], config, w), 1)
  t.match(JSON.parse(out), { loaded: [], refused: [{ id: 'bad-one' }] })
})

test('a template hit becomes a finding of source template, its id the rule', async (t) => {
  const v = exposureVerdict({
    check: 'acme-x',
    evidence: 'template acme-x; matched +PONG; reply: +PONG',
    template: { id: 'acme_x', name: 'ACME X', severity: 'info', cveIds: ['CVE-2022-0543'], description: 'd', tags: ['redis'], matched: ['+PONG'], extracted: ['7.2'], evidence: 'template acme_x; reply: +PONG', remediation: 'fix it' }
  }, { service: 'redis', product: 'Redis', version: '7.2.4', cpe: ['cpe:2.3:a:redis:redis:7.2.4:*:*:*:*:*:*:*'] })
  t.match(v, {
    cveId: 'VULNSCAN-TEMPLATE-ACME-X',
    source: 'template',
    rule: 'acme_x',
    severity: 'none',
    confidence: 'high',
    confidenceScore: 85,
    description: /ACME X \(CVE-2022-0543\): d/,
    criterion: /template acme_x \(CVE-2022-0543\): matched \+PONG; extracted 7\.2/,
    product: 'Redis',
    remediation: 'fix it',
    observed: 'open'
  })
})

test('options.intrusive is kept on the scan record only when true (a scan without it hashes as before)', async (t) => {
  const targets = [{ value: '192.0.2.1', type: 'single_ip' as const }]
  const plain = newScanRecord({ id: 'a', targets }, 'k')
  const off = newScanRecord({ id: 'a', targets, options: { intrusive: false } }, 'k')
  const on = newScanRecord({ id: 'a', targets, options: { intrusive: true } }, 'k')
  t.equal(plain.intrusive, undefined)
  t.equal(off.requestHash, plain.requestHash)
  t.equal(on.intrusive, true)
  t.not(on.requestHash, plain.requestHash)
})
