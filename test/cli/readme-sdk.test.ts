// The SDK example of docs/cli.md (the README links it), as printed there: it type-checks in this (CommonJS) project and runs
// against a live server. A top-level await, as the example once had, does not compile here.
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { backends, build, SERVICE_KEY } from '../helper'
import { cleanEnv, listen } from '../support/cli'

const ROOT = join(__dirname, '..', '..')

/** The first ```ts block under the heading `heading` of docs/cli.md (moved there from the README). */
function snippet (heading: string): string {
  const readme = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8')
  const section = readme.slice(readme.indexOf(`\n${heading}\n`))
  const m = /```ts\n([\s\S]*?)```/.exec(section)
  if (m === null) throw new Error(`no ts block under ${heading}`)
  return m[1]
}

/** Type errors of `file` under the project's tsconfig. */
function typeErrors (file: string): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
  if (config === undefined) throw new Error('tsconfig.json did not parse')
  const program = ts.createProgram([file], config.options)
  return ts.getPreEmitDiagnostics(program).filter((d) => d.file?.fileName === file).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
}

/** Writes `text` at the repository root (where `./sdk` resolves, as the README says), removed when the test ends. */
function atRoot (t: { teardown: (fn: () => void) => void }, text: string): string {
  const file = join(ROOT, `readme-example-${randomBytes(4).toString('hex')}.ts`)
  writeFileSync(file, text)
  t.teardown(() => rmSync(file, { force: true }))
  return file
}

test('the README SDK example type-checks as written', async (t) => {
  const code = snippet('## SDK and other languages')
  t.match(code, /import \{ createVulnscanClient \} from '\.\/sdk'/)
  t.same(typeErrors(atRoot(t, code)), [], 'no type errors')
  const topLevel = atRoot(t, "import { createVulnscanClient } from './sdk'\nconst c = createVulnscanClient({ baseUrl: 'http://127.0.0.1:3000' })\nconst r = await c.GET('/health')\nconsole.log(r.data)\n")
  t.match(typeErrors(topLevel).join('\n'), /cannot use 'await' at the top level/, 'the old top-level await form is an error here: the check can fail')
})

test('the README SDK example runs against a live server', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      // No worker: the example posts a scan of 127.0.0.1, which stays queued and is never run.
      const { app } = await build(t, backend, { WORKER_ENABLED: false })
      const { url } = await listen(app)
      const file = atRoot(t, snippet('## SDK and other languages'))
      const out = await new Promise<{ code: number, stdout: string, stderr: string }>((resolve) => {
        execFile(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env: cleanEnv({ VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY }), timeout: 60_000 }, (err, stdout, stderr) => {
          resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr })
        })
      })
      t.equal(out.code, 0, out.stderr)
      const m = /^scan (\S+) queued; 0 critical findings so far$/m.exec(out.stdout)
      t.ok(m, `prints the scan and the count: ${out.stdout}`)
      const scan = await app.inject({ method: 'GET', url: `/app/scan/${m?.[1] ?? 'none'}`, headers: { 'x-api-key': SERVICE_KEY } })
      t.equal(scan.statusCode, 200, 'the scan it posted exists')
    })
  }
})
