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

/** The project file a relative specifier of `from` names (`.ts` added), or null for a package. */
function resolve (from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null
  const target = relative(ROOT, join(ROOT, from, '..', spec)).split(sep).join('/')
  const paths = new Set(files.map((f) => f.path))
  for (const candidate of [target, `${target}.ts`, `${target}/index.ts`]) if (paths.has(candidate)) return candidate
  return target
}

const REGISTRY = 'lib/sources/registry.ts'
// The shared distribution layer every package matcher uses: families, version orders, banner packages, the backport decision.
const SHARED_DISTRO = /^lib\/distro\/(family|families|package|decide|[a-z]+-version)\.ts$/
// What imports or reports a source's data: CVE records, the trackers, KEV and EPSS, the NVD's importers.
const SOURCE_INTERNALS = (p: string): boolean =>
  p.startsWith('lib/cve5/') || /^lib\/exploit\/(kev|epss|euvd|context|feed)/.test(p) ||
  (p.startsWith('lib/distro/') && !SHARED_DISTRO.test(p)) || /^lib\/nvd\/(sync|feed-import|descriptor)\.ts$/.test(p)
const SOURCE_FOLDERS = /^lib\/(cve5|distro|exploit|nvd|sources)\//
// Allowed beside the registry: the matcher's deciding stages, the per-source import commands kept for their
// users (`npm run data` does the same for every source), and the benches that measure an importer.
const ALLOWED = /^(lib\/match\/|bench\/|scripts\/(cve-import|distro-import|kev-import|epss-import|nvd-import|nvd-sync)\.ts$)/

test('a data source is reached through lib/sources/registry.ts: only it imports descriptors, and outside the sources\' folders nothing imports their internals', async (t) => {
  const registry = files.find((f) => f.path === REGISTRY)
  t.ok(registry, 'the registry is read')
  // Type-only imports (the store and index interfaces) name no source.
  const valueImports = (registry?.text ?? '').split('\n').filter((l) => !/^\s*import type\b/.test(l)).join('\n')
  const descriptors = new Set(specifiers(valueImports).map((s) => resolve(REGISTRY, s)).filter((p): p is string => p !== null && SOURCE_FOLDERS.test(p) && p !== 'lib/sources/descriptor.ts'))
  t.ok(descriptors.size >= 8, `${descriptors.size} descriptor modules`)
  const offenders: string[] = []
  for (const f of files) {
    for (const spec of specifiers(f.text)) {
      const target = resolve(f.path, spec)
      if (target === null) continue
      if (descriptors.has(target) && f.path !== REGISTRY) offenders.push(`${f.path} imports the descriptor module ${target}`)
      else if (SOURCE_INTERNALS(target) && !SOURCE_FOLDERS.test(f.path) && !ALLOWED.test(f.path)) offenders.push(`${f.path} imports ${target}`)
    }
  }
  t.same(offenders, [])
})

// The stores' contracts (types.ts, results-types.ts) are what the rest of the service reads; what is behind them
// (results-merge, the backends' folders, caches) is the stores' own.
const STORE_CONTRACTS = new Set(['lib/store/types.ts', 'lib/store/results-types.ts'])

test('routes never import store internals: sort and filter vocabulary comes from lib/vocabulary.ts and lib/sorting.ts', async (t) => {
  const offenders: string[] = []
  for (const f of files.filter((x) => x.path.startsWith('routes/'))) {
    for (const spec of specifiers(f.text)) {
      const target = resolve(f.path, spec)
      if (target !== null && target.startsWith('lib/store/') && !STORE_CONTRACTS.has(target)) offenders.push(`${f.path} imports ${target}`)
    }
  }
  t.same(offenders, [])
})

test('the shared vocabulary imports nothing above it', async (t) => {
  // lib/vocabulary.ts imports nothing at all; lib/sorting.ts only the vocabulary, address keys, the domain types and
  // the stores' query types.
  const allowed: Record<string, RegExp> = {
    'lib/vocabulary.ts': /^$/,
    'lib/sorting.ts': /^lib\/(vocabulary|addresses)\.ts$|^lib\/store\/(types|results-types)\.ts$|^lib\/domain\/[a-z-]+\.ts$/
  }
  const offenders: string[] = []
  for (const [path, ok] of Object.entries(allowed)) {
    const f = files.find((x) => x.path === path)
    t.ok(f, `${path} is read`)
    for (const spec of specifiers(f?.text ?? '')) {
      const target = resolve(path, spec) ?? `package ${spec}`
      if (!ok.test(target)) offenders.push(`${path} imports ${target}`)
    }
  }
  t.same(offenders, [])
})

// The domain types (findings, severity, confidence, hosts, services) are what the scanner, the matcher, the stores,
// the reports and the routes all speak: they sit under every one of them, so they import only each other and the
// vocabulary (which imports nothing), and no package.
const DOMAIN = /^lib\/domain\//

test('the domain types import nothing above them: only each other and lib/vocabulary.ts', async (t) => {
  const domain = files.filter((x) => DOMAIN.test(x.path))
  t.ok(domain.length >= 5, `${domain.length} domain files are read`)
  const offenders: string[] = []
  for (const f of domain) {
    for (const spec of specifiers(f.text)) {
      const target = resolve(f.path, spec) ?? `package ${spec}`
      if (!DOMAIN.test(target) && target !== 'lib/vocabulary.ts') offenders.push(`${f.path} imports ${target}`)
    }
  }
  t.same(offenders, [])
})

// The CLI and the SDK are clients of the API: they speak its words, and the CLI's --fail-on severities are its own.
const CLIENTS = /^(cli|sdk)\//

test('the domain types have one home: nothing of the service outside lib/domain/ defines a type of the same name', async (t) => {
  const names = new Set<string>()
  for (const f of files.filter((x) => DOMAIN.test(x.path))) {
    for (const m of f.text.matchAll(/^export (?:interface|type) ([A-Z]\w*)\b/gm)) names.add(m[1])
  }
  for (const expected of ['NewFinding', 'FindingRecord', 'Severity', 'Confidence', 'HostRecord', 'HostResult', 'PortResult', 'ServiceInfo', 'Transport']) {
    t.ok(names.has(expected), `${expected} lives in lib/domain/`)
  }
  const offenders: string[] = []
  for (const f of files.filter((x) => !DOMAIN.test(x.path) && !CLIENTS.test(x.path))) {
    for (const m of f.text.matchAll(/^\s*(?:export )?(?:interface|type) ([A-Z]\w*)\b\s*(?:<[^=]*>)?\s*(?:=|\{|extends)/gm)) {
      if (names.has(m[1])) offenders.push(`${f.path} defines ${m[1]}`)
    }
  }
  t.same(offenders, [])
})
