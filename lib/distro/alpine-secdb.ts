// Alpine's security database (secdb) as a data source: per release and repository, one JSON file
// (`https://secdb.alpinelinux.org/v3.20/main.json`, `community.json`) listing for each origin package the
// versions that fixed each CVE:
//   { distroversion: "v3.20", reponame: "main", urlprefix, apkurl, archs,
//     packages: [{ pkg: { name: "openssl", secfixes: { "3.0.5-r0": ["CVE-2022-2097"], "0": ["CVE-2022-1292"] } } }] }
// The key "0" lists CVEs that never affected the package. An entry may name several ids ("CVE-2018-7540
// XSA-252"); only CVE ids are kept. A CVE listed under several versions (fixed again on another branch)
// keeps the highest: the branch's current line carries every listed fix, and an older build that only had
// the first one is reported open rather than fixed. Secdb lists fixes only: a CVE it does not name is not
// decided either way.
//
// Stored like every tracker (lib/distro/entries.ts): table `distro-alpine`, key `alpine:<major.minor>:<origin>`.
// Files merge: importing v3.20/main.json replaces the entries of the packages it lists and leaves the rest.

import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { readFeed, readText, type FeedValidators } from '../exploit/feed'
import {
  count, defineSource, isUrl, syncUrl, throttled, type ImportOutcome, type SourceContext, type TransferOptions
} from '../sources/descriptor'
import type { Entry, SourceStore } from '../sources/source-store'
import { compareApkVersions } from './apk-version'
import { CVE_ID, defineTracker, distroKey, distroTable, encodeEntries, finishDistroImport, readImportMeta, type DistroCveEntry } from './entries'
import { trackerStatus, trackerSummary } from './tracker-source'

export const ALPINE_SECDB = defineTracker({ family: 'alpine', source: 'alpine-secdb', title: 'Alpine secdb' })
export const ALPINE_SECDB_URL = 'https://secdb.alpinelinux.org'
/** The repositories secdb publishes a file for, per release. */
export const ALPINE_REPOS = ['main', 'community'] as const

/** The largest secdb file is a few MB; anything far larger is not secdb. */
const MAX_FILE_BYTES = 128 * 1024 * 1024
const MAX_ERRORS = 100
/** Where each file's import is recorded (counts and HTTP validators), keyed `<release>/<repo>`. */
const FILES_META = 'distro:alpine:files'

interface SecdbFile {
  distroversion?: unknown
  reponame?: unknown
  packages?: unknown
}

export interface SecdbParse {
  /** `3.20` for `v3.20`; `edge` stays. */
  release: string
  repo: string
  /** Origin package → CVE → verdict. */
  packages: Map<string, Map<string, DistroCveEntry>>
  skipped: number
  errors: string[]
}

/** `v3.20` → `3.20`; null for what is not a release name. */
export function alpineRelease (distroversion: string): string | null {
  const m = /^v?(\d+\.\d+)$/.exec(distroversion.trim())
  if (m !== null) return m[1]
  return distroversion.trim() === 'edge' ? 'edge' : null
}

const CVE_IN_TEXT = /CVE-\d{4}-\d{4,}/g

/** Read one secdb document. Throws when it is not one (no release, no package list). */
export function parseSecdb (doc: unknown, where = 'secdb file'): SecdbParse {
  const d = doc as SecdbFile | null
  if (d === null || typeof d !== 'object' || typeof d.distroversion !== 'string' || !Array.isArray(d.packages)) {
    throw new Error(`${where}: not an Alpine secdb file (no distroversion or packages)`)
  }
  const release = alpineRelease(d.distroversion)
  if (release === null) throw new Error(`${where}: distroversion ${JSON.stringify(d.distroversion)} is not a release`)
  const out: SecdbParse = { release, repo: typeof d.reponame === 'string' ? d.reponame : 'main', packages: new Map(), skipped: 0, errors: [] }
  const note = (msg: string): void => {
    out.skipped++
    if (out.errors.length < MAX_ERRORS) out.errors.push(msg)
  }
  for (const item of d.packages as unknown[]) {
    const pkg = (item as { pkg?: { name?: unknown, secfixes?: unknown } } | null)?.pkg
    if (pkg === undefined || pkg === null || typeof pkg.name !== 'string' || pkg.name === '') {
      note('a package entry without a name')
      continue
    }
    if (pkg.secfixes === undefined || pkg.secfixes === null) continue
    if (typeof pkg.secfixes !== 'object') {
      note(`${pkg.name}: secfixes is not an object`)
      continue
    }
    const cves = out.packages.get(pkg.name) ?? new Map<string, DistroCveEntry>()
    for (const [version, ids] of Object.entries(pkg.secfixes as Record<string, unknown>)) {
      if (!Array.isArray(ids)) {
        note(`${pkg.name} ${version}: not a list of ids`)
        continue
      }
      for (const text of ids) {
        if (typeof text !== 'string') continue
        for (const cve of text.match(CVE_IN_TEXT) ?? []) {
          if (!CVE_ID.test(cve)) continue
          const had = cves.get(cve)
          if (version === '0') {
            // Not affected, unless a version also lists it as fixed.
            if (had === undefined) cves.set(cve, { status: 'not-affected', fixedVersion: null, urgency: null, source: ALPINE_SECDB.source })
            continue
          }
          if (had === undefined || had.fixedVersion === null || compareApkVersions(version, had.fixedVersion) > 0) {
            cves.set(cve, { status: 'resolved', fixedVersion: version, urgency: null, source: ALPINE_SECDB.source })
          }
        }
      }
    }
    if (cves.size > 0) out.packages.set(pkg.name, cves)
  }
  return out
}

interface FileRecord {
  packages: number
  cves: number
  from: string
  importedAt: string
  validators?: FeedValidators
  bytes?: number
}

type FilesMeta = Record<string, FileRecord>

async function readFilesMeta (store: SourceStore): Promise<FilesMeta> {
  const text = await store.getMeta(FILES_META)
  if (text === null) return {}
  try {
    return JSON.parse(text) as FilesMeta
  } catch {
    return {}
  }
}

export interface AlpineImportResult {
  /** Files read, and those left alone (not modified, or a release not asked for). */
  files: number
  unchanged: number
  packages: number
  cves: number
  skipped: number
  errors: string[]
}

/** Write one parsed file's entries (each package's entries replaced whole) and record the file. */
async function store1 (store: SourceStore, parsed: SecdbParse, from: string, result: AlpineImportResult,
  extra: { validators?: FeedValidators | null, bytes?: number }): Promise<void> {
  const batch: Entry[] = []
  let cves = 0
  for (const [name, entries] of parsed.packages) {
    batch.push([distroKey({ family: 'alpine', release: parsed.release, source: name }), encodeEntries(entries)])
    cves += entries.size
  }
  if (batch.length > 0) await store.put(distroTable('alpine'), batch)
  const files = await readFilesMeta(store)
  const rec: FileRecord = { packages: batch.length, cves, from, importedAt: new Date().toISOString() }
  if (extra.validators != null) rec.validators = extra.validators
  if (extra.bytes !== undefined) rec.bytes = extra.bytes
  files[`${parsed.release}/${parsed.repo}`] = rec
  await store.setMeta(FILES_META, JSON.stringify(files))
  result.files++
  result.packages += batch.length
  result.cves += cves
  result.skipped += parsed.skipped
  for (const e of parsed.errors) if (result.errors.length < MAX_ERRORS) result.errors.push(`${from}: ${e}`)
}

/** The import record every tracker keeps (lib/distro/entries.ts), summed over the files held. */
async function finish (store: SourceStore, result: AlpineImportResult, from: string): Promise<void> {
  const files = Object.values(await readFilesMeta(store))
  const newest = files.map((f) => f.validators?.lastModified).filter((d): d is string => d !== undefined).sort((a, b) => Date.parse(a) - Date.parse(b)).pop()
  const bytes = files.reduce((n, f) => n + (f.bytes ?? 0), 0)
  await finishDistroImport(store, 'alpine', {
    packages: await store.count(distroTable('alpine')),
    cves: files.reduce((n, f) => n + f.cves, 0),
    skipped: result.skipped,
    errors: [...result.errors]
  }, from, { lastModified: newest, bytes: bytes > 0 ? bytes : undefined })
}

async function jsonFiles (p: string): Promise<string[]> {
  const s = await stat(p)
  if (!s.isDirectory()) return [p]
  const out: string[] = []
  for (const d of await readdir(p, { withFileTypes: true, recursive: true })) {
    if (d.isFile() && d.name.endsWith('.json')) out.push(path.join(d.parentPath ?? (d as unknown as { path: string }).path, d.name))
  }
  return out.sort()
}

async function readJson (input: Readable, where: string): Promise<{ doc: unknown, bytes: number }> {
  const text = await readText(input, MAX_FILE_BYTES, where)
  try {
    return { doc: JSON.parse(text), bytes: Buffer.byteLength(text) }
  } catch (err) {
    throw new Error(`${where}: not JSON (${(err as Error).message})`)
  }
}

/** Import secdb files: paths, directories holding them (`v3.20/main.json` …), or URLs of files. */
export async function importAlpineSecdb (inputs: string[], store: SourceStore, opts: TransferOptions = {}): Promise<AlpineImportResult> {
  const keep = opts.releases?.length ? new Set(opts.releases.map((r) => alpineRelease(r) ?? r)) : null
  const result: AlpineImportResult = { files: 0, unchanged: 0, packages: 0, cves: 0, skipped: 0, errors: [] }
  const files: string[] = []
  for (const input of inputs) files.push(...(isUrl(input) ? [input] : await jsonFiles(input)))
  const report = throttled(opts.progress)
  for (const [i, file] of files.entries()) {
    opts.signal?.throwIfAborted()
    const res = await readFeed(file, { label: 'Alpine secdb' }, async (input) => await readJson(input, file))
    if (res.status !== 'ok') continue
    const parsed = parseSecdb(res.value.doc, file)
    if (keep !== null && !keep.has(parsed.release)) {
      result.unchanged++
      continue
    }
    await store1(store, parsed, file, result, { validators: res.validators, bytes: res.value.bytes })
    report({ phase: 'import', done: i + 1, total: files.length, unit: 'files', what: file }, i + 1 === files.length)
  }
  await finish(store, result, inputs.join(', '))
  await store.flush()
  return result
}

/** The releases secdb publishes, from its index page (links `v3.20/`, `edge/`). */
export async function listAlpineReleases (base: string, signal?: AbortSignal): Promise<string[]> {
  const res = await fetch(`${base}/`, { signal: signal ?? AbortSignal.timeout(60_000) })
  if (!res.ok) throw new Error(`Alpine secdb: ${base}/ answered HTTP ${res.status}`)
  const html = await res.text()
  const found = new Set<string>()
  for (const m of html.matchAll(/href="(v\d+\.\d+|edge)\/?"/g)) found.add(m[1])
  if (found.size === 0) throw new Error(`Alpine secdb: ${base}/ lists no release`)
  return [...found]
}

/**
 * Bring every release up to date from secdb: each file is asked for with the validators of its last import,
 * so an unchanged file costs one 304, and each is recorded as soon as it is in, so an interrupted sync
 * continues with the files it had not reached.
 */
export async function syncAlpineSecdb (store: SourceStore, opts: TransferOptions & { url: string }): Promise<AlpineImportResult> {
  const base = opts.url.replace(/\/+$/, '')
  const releases = opts.releases?.length ? opts.releases.map((r) => r.startsWith('v') || r === 'edge' ? r : `v${r}`) : await listAlpineReleases(base, opts.signal)
  const result: AlpineImportResult = { files: 0, unchanged: 0, packages: 0, cves: 0, skipped: 0, errors: [] }
  const held = await readFilesMeta(store)
  const targets = releases.flatMap((r) => ALPINE_REPOS.map((repo) => ({ release: r, repo, url: `${base}/${r}/${repo}.json` })))
  const report = throttled(opts.progress)
  for (const [i, t] of targets.entries()) {
    opts.signal?.throwIfAborted()
    const known = held[`${alpineRelease(t.release) ?? t.release}/${t.repo}`]
    const previous = opts.force === true ? null : known?.validators ?? null
    let res
    try {
      res = await readFeed(t.url, { label: 'Alpine secdb', previous }, async (input) => await readJson(input, t.url))
    } catch (err) {
      // A release without a community repository, or one that disappeared: the others go on.
      result.skipped++
      if (result.errors.length < MAX_ERRORS) result.errors.push((err as Error).message)
      continue
    }
    if (res.status === 'not-modified') result.unchanged++
    else await store1(store, parseSecdb(res.value.doc, t.url), t.url, result, { validators: res.validators, bytes: res.value.bytes })
    report({ phase: 'import', done: i + 1, total: targets.length, unit: 'files', what: t.url }, i + 1 === targets.length)
  }
  if (result.files > 0 || (await readImportMeta(store, 'alpine')) === null) await finish(store, result, base)
  await store.flush()
  return result
}

function outcome (r: AlpineImportResult, from: string): ImportOutcome {
  const skipped = r.skipped > 0 ? `, ${count(r.skipped)} skipped (${r.errors.slice(0, 3).join('; ')})` : ''
  return {
    status: r.files === 0 && r.unchanged > 0 && r.skipped === 0 ? 'not-modified' : 'imported',
    records: r.packages,
    skipped: r.skipped,
    problems: r.errors,
    from,
    summary: `${ALPINE_SECDB.title}: ${count(r.cves)} CVE verdicts for ${count(r.packages)} release/origin packages from ${r.files} file(s)` +
      `${r.unchanged > 0 ? `, ${r.unchanged} unchanged` : ''}${skipped}`
  }
}

export const alpineSecdbSource = defineSource({
  name: 'alpine-secdb',
  title: ALPINE_SECDB.title,
  role: 'backports',
  family: 'alpine',
  summary: trackerSummary('alpine', false),
  officialUrl: ALPINE_SECDB_URL,
  urlSetting: 'ALPINE_SECDB_URL',
  // One small file per release and repository, each recorded once in: a rerun asks only for the rest.
  resumable: true,
  status: async (ctx: SourceContext) => await trackerStatus(ctx, 'alpine'),
  import: async (ctx, inputs, opts = {}) => outcome(await importAlpineSecdb(inputs, ctx.sources, opts), inputs.join(', ')),
  async sync (ctx, opts = {}) {
    const url = syncUrl({ officialUrl: ALPINE_SECDB_URL, urlSetting: 'ALPINE_SECDB_URL' }, opts)
    return outcome(await syncAlpineSecdb(ctx.sources, { ...opts, url }), url)
  }
})
