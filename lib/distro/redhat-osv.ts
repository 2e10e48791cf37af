// Red Hat's security data in its OSV export (https://security.access.redhat.com/data/osv/, one record per
// advisory, converted from the advisories' CSAF documents) as a data source for RHEL and the rebuilds that
// keep its version-release numbers (CentOS, Rocky Linux, AlmaLinux). Red Hat's OVAL feed is in maintenance;
// the OSV export is what it publishes for tools now. A record:
//   { id: "RHSA-2024:4420", modified, upstream: ["CVE-2024-4467"] (older records: related[]),
//     summary, severity: [{type: CVSS_V3, score}], references: [… classification/#important …],
//     affected: [{ package: { name: "qemu-kvm", ecosystem: "Red Hat:enterprise_linux:8::appstream" },
//                  ranges: [{ type: ECOSYSTEM, events: [{introduced: "0"}, {fixed: "15:6.2.0-50.module+el8.10.0+…"}] }] }] }
// Only the mainline streams (`Red Hat:enterprise_linux:<major>`, any repository) are kept: EUS, AUS, E4S and
// TUS streams pin a minor release a host's os-release does not tell apart, and other products are not
// installed packages of the OS. Package names are Red Hat's components: source packages and binary ones
// (-debuginfo and -debugsource builds left out). The data lists fixes only: a CVE Red Hat has not fixed
// yet has no entry. Where advisories give one package several fixed versions for a CVE (a module stream
// each, a later refix), the highest is kept, as OSV's own reading of several ranges (affected below any
// of them) would have it; a host on an older module stream's fixed build then shows open.
//
// Stored like every tracker (lib/distro/entries.ts): table `distro-rhel`, key `rhel:<major>:<package>`.
// Records merge into what is held: advisories are added to, not withdrawn.

import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { readFeed, readText, type FeedValidators } from '../exploit/feed'
import {
  count, defineSource, isUrl, syncUrl, throttled, type ImportOutcome, type TransferOptions
} from '../sources/descriptor'
import type { Entry, SourceStore } from '../sources/source-store'
import {
  CVE_ID, decodeEntries, defineTracker, distroKey, distroTable, encodeEntries, finishDistroImport, readImportMeta,
  type DistroCveEntry
} from './entries'
import { compareRpmVersions, isRpmVersion } from './rpm-version'
import { trackerStatus, trackerSummary } from './tracker-source'

export const REDHAT_OSV = defineTracker({ family: 'rhel', source: 'redhat-osv', title: 'Red Hat security data' })
export const REDHAT_OSV_URL = 'https://security.access.redhat.com/data/osv'

const MAX_ERRORS = 100
const MAX_LISTING_BYTES = 512 * 1024 * 1024
const MAX_RECORD_BYTES = 64 * 1024 * 1024
/** Records fetched at once during a sync, and per applied batch. */
const FETCH_CONCURRENCY = 8
const BATCH = 64
const SYNC_META = 'distro:rhel:osv-sync'

interface OsvEvent { introduced?: string, fixed?: string }
export interface RedhatRecord {
  id?: string
  modified?: string
  upstream?: string[]
  related?: string[]
  aliases?: string[]
  summary?: string
  affected?: Array<{ package?: { name?: string, ecosystem?: string }, ranges?: Array<{ type?: string, events?: OsvEvent[] }> }>
  references?: Array<{ type?: string, url?: string }>
}

/** `Red Hat:enterprise_linux:9::appstream` → `9`; every other stream or product → null. */
export function redhatRelease (ecosystem: string): string | null {
  const m = /^Red Hat:enterprise_linux:(\d+)(?:::[\w.-]+)?$/.exec(ecosystem)
  return m === null ? null : m[1]
}

/** The CVEs an advisory fixes: `upstream[]` in newer records, `related[]` and `aliases[]` in older ones. */
export function redhatCves (rec: RedhatRecord): string[] {
  const out = new Set<string>()
  for (const list of [rec.upstream, rec.related, rec.aliases]) for (const id of list ?? []) if (typeof id === 'string' && CVE_ID.test(id)) out.add(id)
  return [...out]
}

const RATINGS = ['low', 'moderate', 'important', 'critical']

/** Red Hat's own rating: the classification page the record links to, or the summary's `Important:` prefix. */
export function redhatSeverity (rec: RedhatRecord): string | null {
  for (const r of rec.references ?? []) {
    const m = /\/security\/updates\/classification\/#(\w+)/.exec(r.url ?? '')
    if (m !== null && RATINGS.includes(m[1].toLowerCase())) return m[1].toLowerCase()
  }
  const s = /^(Low|Moderate|Important|Critical):/i.exec(rec.summary ?? '')
  return s === null ? null : s[1].toLowerCase()
}

export interface RedhatVerdict {
  release: string
  pkg: string
  cve: string
  entry: DistroCveEntry
}

/** The verdicts one record gives: per mainline release, package and CVE, fixed in the version of its `fixed` event. */
export function redhatVerdicts (rec: RedhatRecord, note?: (msg: string) => void): RedhatVerdict[] {
  const cves = redhatCves(rec)
  if (cves.length === 0) {
    note?.(`${rec.id ?? 'a record'}: names no CVE`)
    return []
  }
  const urgency = redhatSeverity(rec)
  const out: RedhatVerdict[] = []
  for (const a of rec.affected ?? []) {
    const name = a.package?.name
    const release = a.package?.ecosystem !== undefined ? redhatRelease(a.package.ecosystem) : null
    if (name === undefined || name === '' || release === null) continue
    if (/-debug(info|source)$/.test(name)) continue
    const fixed = (a.ranges ?? []).filter((r) => r.type === undefined || r.type === 'ECOSYSTEM')
      .flatMap((r) => r.events ?? []).find((e) => typeof e.fixed === 'string' && e.fixed !== '')?.fixed
    if (fixed === undefined || !isRpmVersion(fixed)) {
      note?.(`${rec.id ?? 'a record'} ${a.package?.ecosystem} ${name}: no fixed version`)
      continue
    }
    for (const cve of cves) {
      const entry: DistroCveEntry = { status: 'resolved', fixedVersion: fixed, urgency, source: REDHAT_OSV.source }
      if (rec.id !== undefined) entry.note = rec.id
      out.push({ release, pkg: name, cve, entry })
    }
  }
  return out
}

/** Of two verdicts for one package and CVE, the higher fixed version (see the top of this file). */
function merge (had: DistroCveEntry | undefined, next: DistroCveEntry): DistroCveEntry {
  if (had === undefined || had.fixedVersion === null || next.fixedVersion === null) return had ?? next
  return compareRpmVersions(next.fixedVersion, had.fixedVersion) > 0 ? next : had
}

export interface RedhatImportResult {
  records: number
  /** Release/package entries written, and package/CVE verdicts new to the store. */
  packages: number
  cves: number
  skipped: number
  errors: string[]
}

function emptyResult (): RedhatImportResult {
  return { records: 0, packages: 0, cves: 0, skipped: 0, errors: [] }
}

/** Merge a batch of records into the store: each touched package's entries are read, merged and written once. */
export async function applyRedhatRecords (store: SourceStore, records: Iterable<RedhatRecord>, result: RedhatImportResult, keep: Set<string> | null = null): Promise<void> {
  const note = (msg: string): void => {
    result.skipped++
    if (result.errors.length < MAX_ERRORS) result.errors.push(msg)
  }
  const byKey = new Map<string, Map<string, DistroCveEntry>>()
  for (const rec of records) {
    result.records++
    for (const v of redhatVerdicts(rec, note)) {
      if (keep !== null && !keep.has(v.release)) continue
      const key = distroKey({ family: 'rhel', release: v.release, source: v.pkg })
      let m = byKey.get(key)
      if (m === undefined) byKey.set(key, m = new Map())
      m.set(v.cve, merge(m.get(v.cve), v.entry))
    }
  }
  const keys = [...byKey.keys()]
  if (keys.length === 0) return
  const table = distroTable('rhel')
  const held = await store.getMany(table, keys)
  const writes: Entry[] = []
  keys.forEach((key, i) => {
    const current = held[i] === null ? new Map<string, DistroCveEntry>() : decodeEntries(held[i] as string, REDHAT_OSV.source)
    for (const [cve, e] of byKey.get(key) as Map<string, DistroCveEntry>) {
      if (!current.has(cve)) result.cves++
      current.set(cve, merge(current.get(cve), e))
    }
    writes.push([key, encodeEntries(current)])
  })
  await store.put(table, writes)
  result.packages += writes.length
}

async function recordFiles (p: string): Promise<string[]> {
  const s = await stat(p)
  if (!s.isDirectory()) return [p]
  const out: string[] = []
  for (const d of await readdir(p, { withFileTypes: true, recursive: true })) {
    if (d.isFile() && d.name.endsWith('.json')) out.push(path.join(d.parentPath ?? (d as unknown as { path: string }).path, d.name))
  }
  return out.sort()
}

function recordsOf (doc: unknown): RedhatRecord[] {
  return (Array.isArray(doc) ? doc : [doc]).filter((r): r is RedhatRecord => r !== null && typeof r === 'object' && Array.isArray((r as RedhatRecord).affected))
}

/** Record what is held now, for /health and `data status` (packages counted in the table; verdicts added up). */
async function finish (store: SourceStore, result: RedhatImportResult, from: string, validators: { etag?: string, lastModified?: string } = {}): Promise<void> {
  const before = await readImportMeta(store, 'rhel')
  await finishDistroImport(store, 'rhel', {
    packages: await store.count(distroTable('rhel')),
    cves: (before?.cves ?? 0) + result.cves,
    skipped: result.skipped,
    errors: [...result.errors]
  }, from, validators)
}

/** Import OSV records: files holding one record or an array, directories of them, or URLs of such files. */
export async function importRedhatOsv (inputs: string[], store: SourceStore, opts: TransferOptions = {}): Promise<RedhatImportResult> {
  const keep = opts.releases?.length ? new Set(opts.releases) : null
  const result = emptyResult()
  const report = throttled(opts.progress)
  const files: string[] = []
  for (const input of inputs) files.push(...(isUrl(input) ? [input] : await recordFiles(input)))
  let pending: RedhatRecord[] = []
  for (const [i, file] of files.entries()) {
    opts.signal?.throwIfAborted()
    let doc: unknown
    try {
      if (isUrl(file)) {
        const res = await readFeed(file, { label: 'Red Hat OSV' }, async (input) => JSON.parse(await readText(input, MAX_LISTING_BYTES, file)) as unknown)
        if (res.status !== 'ok') continue
        doc = res.value
      } else {
        doc = JSON.parse(await readFile(file, 'utf8'))
      }
    } catch (err) {
      result.skipped++
      if (result.errors.length < MAX_ERRORS) result.errors.push(`${file}: ${(err as Error).message}`)
      continue
    }
    const recs = recordsOf(doc)
    if (recs.length === 0) {
      result.skipped++
      if (result.errors.length < MAX_ERRORS) result.errors.push(`${file}: not an OSV record`)
    }
    pending.push(...recs)
    if (pending.length >= BATCH) {
      await applyRedhatRecords(store, pending, result, keep)
      pending = []
    }
    report({ phase: 'import', done: i + 1, total: files.length, unit: 'files', what: file }, i + 1 === files.length)
  }
  await applyRedhatRecords(store, pending, result, keep)
  await finish(store, result, inputs.join(', '))
  await store.flush()
  return result
}

interface ListingEntry { id: string, modified: string }

interface SyncState {
  /** Every record modified before this was applied, and those at it listed in `atWatermark`. */
  watermark?: string
  atWatermark?: string[]
  /** The listing's validators, trusted only once a run got through it all. */
  validators?: FeedValidators
  complete: boolean
}

async function readSyncState (store: SourceStore): Promise<SyncState> {
  const text = await store.getMeta(SYNC_META)
  if (text === null) return { complete: false }
  try {
    return JSON.parse(text) as SyncState
  } catch {
    return { complete: false }
  }
}

/** The listing: `[{ id, modified }]` as OSV.dev reads REST sources; a list of whole records is taken too. */
function parseListing (doc: unknown): { entries: ListingEntry[], records: RedhatRecord[] } {
  if (!Array.isArray(doc)) throw new Error('Red Hat OSV: all.json is not a list')
  const entries: ListingEntry[] = []
  const records: RedhatRecord[] = []
  for (const x of doc as unknown[]) {
    if (x === null || typeof x !== 'object') continue
    const o = x as Record<string, unknown>
    if (Array.isArray(o.affected)) records.push(o as RedhatRecord)
    else if (typeof o.id === 'string' && typeof o.modified === 'string') entries.push({ id: o.id, modified: o.modified })
  }
  return { entries, records }
}

async function fetchRecord (base: string, id: string, signal?: AbortSignal): Promise<RedhatRecord> {
  // Records are published under the advisory id; files named with `_` for the colon are tried as well.
  const names = [...new Set([id, id.replace(/:/g, '_')])]
  let last = ''
  for (const name of names) {
    const url = `${base}/${encodeURIComponent(name).replace(/%3A/gi, ':')}.json`
    const res = await fetch(url, { signal: signal ?? AbortSignal.timeout(120_000) })
    if (res.status === 404) {
      await res.body?.cancel()
      last = `${url}: HTTP 404`
      continue
    }
    if (!res.ok) {
      await res.body?.cancel()
      throw new Error(`${url}: HTTP ${res.status}`)
    }
    const text = await res.text()
    if (text.length > MAX_RECORD_BYTES) throw new Error(`${url}: larger than ${MAX_RECORD_BYTES} bytes`)
    return JSON.parse(text) as RedhatRecord
  }
  throw new Error(last)
}

export interface RedhatSyncResult extends RedhatImportResult {
  status: 'imported' | 'not-modified'
  /** Advisories the listing has that were applied before (at or under the watermark). */
  current: number
  failed: number
}

/**
 * Sync from the export's listing (`<base>/all.json`): every advisory modified since the last sync is fetched
 * and merged, oldest first; the watermark moves once a batch is in and nothing before it failed, so an
 * interrupted or partly failed sync fetches only what it had not applied.
 */
export async function syncRedhatOsv (store: SourceStore, opts: TransferOptions & { url: string }): Promise<RedhatSyncResult> {
  const base = opts.url.replace(/\/+$/, '')
  const keep = opts.releases?.length ? new Set(opts.releases) : null
  const state = opts.force === true ? { complete: false } : await readSyncState(store)
  const result: RedhatSyncResult = { ...emptyResult(), status: 'imported', current: 0, failed: 0 }
  const listingUrl = `${base}/all.json`
  const listing = await readFeed(listingUrl, { label: 'Red Hat OSV listing', previous: state.complete ? state.validators ?? null : null },
    async (input) => parseListing(JSON.parse(await readText(input, MAX_LISTING_BYTES, listingUrl)) as unknown))
  if (listing.status === 'not-modified') return { ...result, status: 'not-modified' }
  const { entries, records } = listing.value
  if (records.length > 0) await applyRedhatRecords(store, records, result, keep)
  const since = state.watermark === undefined ? null : Date.parse(state.watermark)
  // Records sharing the watermark's time may have been cut off by the last run: those not applied are taken.
  const applied = new Set(state.atWatermark ?? [])
  const todo = entries.filter((e) => since === null || Date.parse(e.modified) > since || (Date.parse(e.modified) === since && !applied.has(e.id)))
    .sort((a, b) => Date.parse(a.modified) - Date.parse(b.modified))
  result.current = entries.length - todo.length
  const report = throttled(opts.progress)
  let watermark = state.watermark
  let atWatermark = [...applied]
  let blocked = false
  for (let i = 0; i < todo.length; i += BATCH) {
    opts.signal?.throwIfAborted()
    const batch = todo.slice(i, i + BATCH)
    const got: Array<RedhatRecord | null> = new Array(batch.length).fill(null)
    let next = 0
    await Promise.all(Array.from({ length: Math.min(FETCH_CONCURRENCY, batch.length) }, async () => {
      while (next < batch.length) {
        const k = next++
        try {
          got[k] = await fetchRecord(base, batch[k].id, opts.signal)
        } catch (err) {
          result.failed++
          result.skipped++
          if (result.errors.length < MAX_ERRORS) result.errors.push(`${batch[k].id}: ${(err as Error).message}`)
        }
      }
    }))
    await applyRedhatRecords(store, got.filter((r): r is RedhatRecord => r !== null), result, keep)
    for (const [k, e] of batch.entries()) {
      if (got[k] === null) blocked = true
      if (blocked) break
      if (e.modified !== watermark) atWatermark = []
      watermark = e.modified
      atWatermark.push(e.id)
    }
    await store.setMeta(SYNC_META, JSON.stringify({ watermark, atWatermark, complete: false } satisfies SyncState))
    report({ phase: 'import', done: Math.min(i + BATCH, todo.length), total: todo.length, unit: 'records', what: listingUrl }, i + BATCH >= todo.length)
  }
  const complete = !blocked
  const done: SyncState = { watermark, atWatermark, complete }
  if (complete && listing.validators !== null) done.validators = listing.validators
  await store.setMeta(SYNC_META, JSON.stringify(done))
  await finish(store, result, base, complete ? { etag: listing.validators?.etag, lastModified: listing.validators?.lastModified } : {})
  await store.flush()
  return result
}

function outcome (r: RedhatImportResult & { status?: 'imported' | 'not-modified', current?: number }, from: string): ImportOutcome {
  const skipped = r.skipped > 0 ? `, ${count(r.skipped)} skipped (${r.errors.slice(0, 3).join('; ')})` : ''
  if (r.status === 'not-modified') {
    return { status: 'not-modified', records: 0, skipped: 0, problems: [], from, summary: `${REDHAT_OSV.title}: not modified since the last sync` }
  }
  return {
    status: 'imported',
    records: r.packages,
    skipped: r.skipped,
    problems: r.errors,
    from,
    summary: `${REDHAT_OSV.title}: ${count(r.records)} advisories applied, ${count(r.packages)} release/package entries written, ` +
      `${count(r.cves)} new CVE verdicts${r.current !== undefined && r.current > 0 ? `, ${count(r.current)} advisories already held` : ''}${skipped}`
  }
}

export const redhatOsvSource = defineSource({
  name: 'redhat-osv',
  title: REDHAT_OSV.title,
  role: 'backports',
  family: 'rhel',
  summary: trackerSummary('rhel', false),
  officialUrl: REDHAT_OSV_URL,
  urlSetting: 'REDHAT_OSV_URL',
  // A watermark over the listing's modification times: a rerun fetches only the advisories not yet applied.
  resumable: true,
  status: async (ctx) => await trackerStatus(ctx, 'rhel'),
  import: async (ctx, inputs, opts = {}) => outcome(await importRedhatOsv(inputs, ctx.sources, opts), inputs.join(', ')),
  async sync (ctx, opts = {}) {
    const url = syncUrl({ officialUrl: REDHAT_OSV_URL, urlSetting: 'REDHAT_OSV_URL' }, opts)
    return outcome(await syncRedhatOsv(ctx.sources, { ...opts, url }), url)
  }
})
