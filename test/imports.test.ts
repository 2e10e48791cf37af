// The seams hold: lib/ never reaches up into plugins/ or routes/, and Redis and PostgreSQL connections are opened
// in one place only (lib/backends.ts), so connection options, key prefixes and schemas cannot drift apart again.
//
// What the connection check reads: every .ts/.js/.cjs/.mjs file of the project (entry points, lib/, plugins/,
// routes/, schemas/, scripts/, bench/, cli/, sdk/), skipping node_modules and test/. Tests are left out on
// purpose: they look at what the service stored through clients of their own, as outside observers, and
// start private Redis and PostgreSQL servers to restart under it.
import { test } from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'

const ROOT = join(__dirname, '..')
const SKIP = new Set(['node_modules', 'test', '.git'])
const SOURCE = /\.(ts|js|cjs|mjs)$/

function sourceFiles (dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP.has(entry.name)) out.push(...sourceFiles(join(dir, entry.name)))
    } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      out.push(join(dir, entry.name))
    }
  }
  return out
}

const files = sourceFiles(ROOT).map((f) => ({ path: relative(ROOT, f).split(sep).join('/'), text: readFileSync(f, 'utf8') }))

/** Module specifiers of import/export-from statements and require() calls. */
function specifiers (text: string): string[] {
  const out: string[] = []
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"`;]*?from\s*['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    out.push(m[1] ?? m[2] ?? m[3])
  }
  return out
}

test('the scan reads the tree it is meant to', async (t) => {
  const paths = files.map((f) => f.path)
  for (const expected of ['lib/backends.ts', 'worker.ts', 'server.ts', 'plugins/backends.ts', 'scripts/keys.ts', 'bench/http.ts']) {
    t.ok(paths.includes(expected), `${expected} is read`)
  }
  t.notOk(paths.some((p) => p.startsWith('test/') || p.includes('node_modules/')), 'no test or dependency file is read')
  t.ok(specifiers("import { x } from '../plugins/env'\nconst y = require('./routes/z')").length === 2, 'the import reader sees both forms')
})

test('no file under lib/ imports from plugins/, routes/, bench/ or test/', async (t) => {
  const offenders: string[] = []
  for (const f of files.filter((x) => x.path.startsWith('lib/'))) {
    for (const spec of specifiers(f.text)) {
      if (!spec.startsWith('.')) continue
      const target = relative(ROOT, join(ROOT, f.path, '..', spec)).split(sep).join('/')
      if (/^(plugins|routes|bench|test)(\/|$)/.test(target)) offenders.push(`${f.path} imports ${spec}`)
    }
  }
  t.same(offenders, [])
})

test('no Redis or PostgreSQL connection is opened outside lib/backends.ts', async (t) => {
  const offenders: string[] = []
  for (const f of files) {
    if (f.path === 'lib/backends.ts') continue
    f.text.split('\n').forEach((line, i) => {
      if (/new\s+(Redis|Pool|Client)\s*\(|\.duplicate\s*\(/.test(line)) offenders.push(`${f.path}:${i + 1}: ${line.trim()}`)
    })
  }
  t.same(offenders, [])
  const backends = files.find((f) => f.path === 'lib/backends.ts')?.text ?? ''
  t.match(backends, /new Redis\(/, 'lib/backends.ts is where it happens')
  t.match(backends, /new Pool\(/, 'the results database pool too')
})
