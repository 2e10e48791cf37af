// Every `npm run` script answers --help with its usage and exit 0 before it opens anything (nvd:import used to open
// a file named `--help`), and the sample the README imports offline imports.
import { test } from 'tap'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const ROOT = path.join(__dirname, '..', '..')
const SCRIPTS = ['nvd-import', 'nvd-match', 'nvd-sync', 'cve-import', 'distro-import', 'kev-import', 'epss-import', 'keys', 'scan', 'templates-check']

function run (script: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number, stdout: string, stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', `${script}.ts`), ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env }, timeout: 120_000 },
      (err, stdout, stderr) => { resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr }) })
  })
}

test('every script answers --help', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-help-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  // Stores that --help must not open: they would be created here.
  const env = { NVD_INDEX_FILE: path.join(dir, 'nvd.json.gz'), SOURCES_FILE: path.join(dir, 'sources.ndjson.gz') }
  for (const script of SCRIPTS) {
    const r = await run(script, ['--help'], env)
    t.equal(r.code, 0, `${script} --help exits 0: ${r.stderr}`)
    t.match(r.stdout, /usage/i, `${script} prints its usage on stdout`)
    t.notMatch(r.stderr, /ENOENT|Unknown option|unknown option/, `${script} takes --help as a question, not a file or an error`)
  }
  t.same(fs.readdirSync(dir), [], 'no store was opened')
})

test('the shipped sample imports', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-sample-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const r = await run('nvd-import', [path.join(ROOT, 'samples', 'nvdcve-2.0-sample.json')], { NVD_INDEX_FILE: path.join(dir, 'nvd.json.gz') })
  t.equal(r.code, 0, r.stderr)
  t.match(r.stderr, /38 records, 38 new or updated/)
})
