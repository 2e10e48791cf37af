// CVE JSON 5 records on a SourceStore, and matching a detected product against them.
//
// Tables:
//   cve5          CVE id → compact summary JSON (record.ts)
//   cve5-product  product key (naming.ts) → JSON array of CVE ids naming that product
// Meta:
//   cve5:count            records held
//   cve5:newest-updated   newest cveMetadata.dateUpdated imported (ISO)
//   cve5:imported-at      when the last import finished (ISO)

import type { CveRecord } from '../nvd/types'
import type { Entry, SourceStore } from '../sources/source-store'
import { DecodedCache } from '../sources/decoded'
import { decideVersion, type VersionDecision } from './affected'
import { entryNames, lookupKeys, recordProductKeys, type CpePair } from './naming'
import { decodeSummary, encodeSummary, type Cve5Cvss, type Cve5Kev, type Cve5Ssvc, type Cve5Summary, type Origin, type VersionStatus } from './record'

// A scan decides the same records for every port running the same product.
const summaries = new DecodedCache(decodeSummary)
const productLists = new DecodedCache((text) => JSON.parse(text) as string[])

export const CVE5_TABLE = 'cve5'
export const CVE5_PRODUCT_TABLE = 'cve5-product'
export const CVE5_META = {
  count: 'cve5:count',
  newestUpdated: 'cve5:newest-updated',
  importedAt: 'cve5:imported-at'
} as const

export interface WriteResult {
  /** Records new to the store. */
  added: number
  /** Records that replaced an older version. */
  updated: number
  /** Records skipped: identical to, or older than, what the store holds. */
  unchanged: number
}

function newer (a: string | undefined, b: string | undefined): boolean {
  if (a === undefined) return false
  if (b === undefined) return true
  return Date.parse(a) > Date.parse(b)
}

async function noteNewest (store: SourceStore, updated: string | undefined): Promise<void> {
  if (updated === undefined) return
  const current = await store.getMeta(CVE5_META.newestUpdated)
  if (current === null || newer(updated, current)) await store.setMeta(CVE5_META.newestUpdated, updated)
}

/**
 * Insert or replace summaries (one batch; callers pass a few thousand at a time). A stored record
 * whose dateUpdated is newer than the incoming one is kept, so an old archive never undoes a
 * newer delta. The product index follows: a replaced record that no longer names a product is
 * removed from that product's list.
 */
export async function writeSummaries (store: SourceStore, batch: readonly Cve5Summary[]): Promise<WriteResult> {
  const byId = new Map<string, Cve5Summary>()
  for (const s of batch) byId.set(s.id, s)
  const ids = [...byId.keys()]
  const result: WriteResult = { added: 0, updated: 0, unchanged: 0 }
  if (ids.length === 0) return result
  const old = await store.getMany(CVE5_TABLE, ids)
  const records: Entry[] = []
  const add = new Map<string, Set<string>>()
  const remove = new Map<string, Set<string>>()
  const touch = (m: Map<string, Set<string>>, key: string, id: string): void => {
    let set = m.get(key)
    if (!set) m.set(key, set = new Set())
    set.add(id)
  }
  let newest: string | undefined
  for (let i = 0; i < ids.length; i++) {
    const s = byId.get(ids[i]) as Cve5Summary
    const text = encodeSummary(s)
    const prevText = old[i]
    let prevKeys: string[] = []
    if (prevText !== null) {
      const prev = decodeSummary(prevText)
      if (prevText === text || newer(prev.updated, s.updated)) {
        result.unchanged++
        continue
      }
      prevKeys = recordProductKeys(prev)
      result.updated++
    } else {
      result.added++
    }
    records.push([s.id, text])
    if (newer(s.updated, newest)) newest = s.updated
    const keys = recordProductKeys(s)
    const keep = new Set(keys)
    for (const k of keys) touch(add, k, s.id)
    for (const k of prevKeys) if (!keep.has(k)) touch(remove, k, s.id)
  }
  const keys = [...new Set([...add.keys(), ...remove.keys()])]
  if (keys.length > 0) {
    const lists = await store.getMany(CVE5_PRODUCT_TABLE, keys)
    const puts: Entry[] = []
    const deletes: string[] = []
    keys.forEach((key, i) => {
      const current = new Set<string>(lists[i] !== null ? JSON.parse(lists[i] as string) as string[] : [])
      for (const id of remove.get(key) ?? []) current.delete(id)
      for (const id of add.get(key) ?? []) current.add(id)
      if (current.size === 0) deletes.push(key)
      else puts.push([key, JSON.stringify([...current].sort())])
    })
    if (deletes.length > 0) await store.delete(CVE5_PRODUCT_TABLE, deletes)
    if (puts.length > 0) await store.put(CVE5_PRODUCT_TABLE, puts)
  }
  if (records.length > 0) await store.put(CVE5_TABLE, records)
  await noteNewest(store, newest)
  return result
}

/**
 * Replace both tables with exactly the given summaries (a full cvelistV5 baseline). Readers see
 * the old data until each table is complete. The product index is built in memory: about 40 bytes
 * per (product, CVE) pair.
 */
export async function replaceAll (store: SourceStore, summaries: AsyncIterable<Cve5Summary> | Iterable<Cve5Summary>, batchSize = 2000): Promise<number> {
  const index = new Map<string, string[]>()
  let newest: string | undefined
  async function * records (): AsyncGenerator<Entry[]> {
    let batch: Entry[] = []
    for await (const s of summaries) {
      batch.push([s.id, encodeSummary(s)])
      if (newer(s.updated, newest)) newest = s.updated
      for (const k of recordProductKeys(s)) {
        const list = index.get(k)
        if (list) list.push(s.id)
        else index.set(k, [s.id])
      }
      if (batch.length >= batchSize) {
        yield batch
        batch = []
      }
    }
    if (batch.length > 0) yield batch
  }
  const count = await store.replace(CVE5_TABLE, records())
  function * products (): Generator<Entry[]> {
    let batch: Entry[] = []
    for (const [k, ids] of index) {
      batch.push([k, JSON.stringify([...new Set(ids)].sort())])
      if (batch.length >= batchSize) {
        yield batch
        batch = []
      }
    }
    if (batch.length > 0) yield batch
  }
  await store.replace(CVE5_PRODUCT_TABLE, products())
  index.clear()
  if (newest !== undefined) await store.setMeta(CVE5_META.newestUpdated, newest)
  return count
}

/** Record the table size and import time in meta; call once an import finishes. */
export async function finishImport (store: SourceStore, now = new Date()): Promise<number> {
  const count = await store.count(CVE5_TABLE)
  await store.setMeta(CVE5_META.count, String(count))
  await store.setMeta(CVE5_META.importedAt, now.toISOString())
  await store.flush()
  return count
}

export async function getCve5 (store: SourceStore, id: string): Promise<Cve5Summary | null> {
  const text = await store.get(CVE5_TABLE, id.toUpperCase())
  return text === null ? null : decodeSummary(text)
}

export interface Cve5Stats {
  records: number
  newestUpdated: string | null
  importedAt: string | null
}

export async function cve5Stats (store: SourceStore): Promise<Cve5Stats> {
  const [count, newestUpdated, importedAt] = await Promise.all([
    store.getMeta(CVE5_META.count), store.getMeta(CVE5_META.newestUpdated), store.getMeta(CVE5_META.importedAt)
  ])
  return { records: count === null ? 0 : Number(count), newestUpdated, importedAt }
}

export interface Cve5Query extends CpePair {
  /** Detected version; without one nothing can be decided and no hit is returned. */
  version?: string
}

export interface Cve5Hit {
  id: string
  /** Whose data decided: the CNA's own affected[] or an ADP's (CISA Vulnrichment). */
  origin: Origin
  /** The ADP's short name when origin is adp. */
  provider?: string
  status: VersionStatus
  /** The exact rule, e.g. `cna: redis/redis ">= 7.0.0, < 7.2.6" (semver)`. */
  rule: string
  /** A listed range decided (medium), or only the entry's defaultStatus (low). Never high: the NVD has not analysed it. */
  confidence: 'medium' | 'low'
  note: string
  /** Platforms the entry is limited to (`Windows`), when the CNA lists any. */
  platforms?: string[]
  cvss?: Cve5Cvss
  cwes?: string[]
  kev?: Cve5Kev
  ssvc?: Cve5Ssvc
  title?: string
  description?: string
  published?: string
  updated?: string
}

export interface MatchOptions {
  /** Also return unaffected and unknown decisions (for comparing sources); default: affected only. */
  all?: boolean
}

const STATUS_RANK: Record<VersionStatus, number> = { affected: 0, unaffected: 1, unknown: 2 }

/** Pick one decision per record: affected beats unaffected beats unknown; at a tie the CNA's. */
function better (a: { d: VersionDecision, origin: Origin }, b: { d: VersionDecision, origin: Origin }): boolean {
  const r = STATUS_RANK[a.d.status] - STATUS_RANK[b.d.status]
  if (r !== 0) return r < 0
  if (a.d.by !== b.d.by) return a.d.by === 'range'
  return a.origin === 'cna' && b.origin === 'adp'
}

/** Decide one record for a detected product; null when none of its entries names the product. */
export function decideRecord (summary: Cve5Summary, query: Cve5Query): Cve5Hit | null {
  if (summary.state === 'REJECTED') return null
  let best: { d: VersionDecision, origin: Origin, provider?: string, platforms?: string[] } | undefined
  for (const entry of summary.affected) {
    if (!entryNames(entry, query)) continue
    const d: VersionDecision = query.version === undefined || query.version.trim() === ''
      ? { status: 'unknown', rule: `${entry.origin}: no version detected`, by: 'undecidable' }
      : decideVersion(entry, query.version)
    const candidate = { d, origin: entry.origin, provider: entry.provider, platforms: entry.platforms }
    if (!best || better(candidate, best)) best = candidate
  }
  if (!best) return null
  const confidence = best.d.by === 'range' ? 'medium' : 'low'
  let note = best.origin === 'cna'
    ? 'Affected versions as stated by the CNA in the CVE record; not analysed by the NVD.'
    : `Affected versions as stated by the ${best.provider ?? 'ADP'} container of the CVE record; not analysed by the NVD.`
  if (best.d.by === 'default') note += ' No listed version covers the detected one: the record\'s default status decided.'
  if (best.platforms) note += ` Only on: ${best.platforms.join(', ')}.`
  const hit: Cve5Hit = { id: summary.id, origin: best.origin, status: best.d.status, rule: best.d.rule, confidence, note }
  if (best.origin === 'adp' && best.provider !== undefined) hit.provider = best.provider
  if (best.platforms) hit.platforms = best.platforms
  for (const k of ['cvss', 'cwes', 'kev', 'ssvc', 'title', 'description', 'published', 'updated'] as const) {
    if (summary[k] !== undefined) (hit as unknown as Record<string, unknown>)[k] = summary[k]
  }
  return hit
}

/**
 * CVE JSON 5 hits for a detected product and version, ordered by CVE id. By default only
 * `affected` ones; `{ all: true }` adds `unaffected` and `unknown` for comparison with other sources.
 */
export async function matchCve5 (store: SourceStore, query: Cve5Query, opts: MatchOptions = {}): Promise<Cve5Hit[]> {
  const lists = await store.getMany(CVE5_PRODUCT_TABLE, lookupKeys(query))
  const ids = new Set<string>()
  for (const l of lists) if (l !== null) for (const id of productLists.get(l)) ids.add(id)
  if (ids.size === 0) return []
  const sorted = [...ids].sort()
  const texts = await store.getMany(CVE5_TABLE, sorted)
  const hits: Cve5Hit[] = []
  for (const text of texts) {
    if (text === null) continue
    const hit = decideRecord(summaries.get(text), query)
    if (hit && (opts.all === true || hit.status === 'affected')) hits.push(hit)
  }
  return hits
}

/** The parts of an NVD CVE record (API 2.0 / feed shape) that say whether the NVD decides. */
export interface NvdDecisionInput {
  vulnStatus?: string
  configurations?: readonly unknown[]
}

/**
 * Whether the NVD's own configurations decide this CVE. They do whenever the NVD record has any
 * configuration, whatever its status; a record without configurations (Received, Awaiting
 * Analysis, Undergoing Analysis, Deferred, Not Scheduled, …) or no NVD record at all leaves the
 * decision to the CVE JSON 5 data.
 */
export function nvdDecides (nvd: NvdDecisionInput | null | undefined): boolean {
  return nvd !== null && nvd !== undefined && Array.isArray(nvd.configurations) && nvd.configurations.length > 0
}

export interface SourceComparison {
  /** Which source's verdict stands: the NVD's when it has configurations. */
  decidedBy: 'nvd' | 'cna' | 'adp'
  affected: boolean
  /** Set when the CVE JSON 5 data says otherwise than the NVD: worth a note on the finding. */
  disagreement?: string
}

/**
 * Put the NVD's verdict (from its configurations) beside the CVE JSON 5 one for the same CVE and
 * product version. The NVD decides; a CNA/ADP verdict that differs is returned as a note.
 */
export function compareWithNvd (nvdAffected: boolean, hit: Cve5Hit | null): SourceComparison {
  const out: SourceComparison = { decidedBy: 'nvd', affected: nvdAffected }
  if (!hit || hit.status === 'unknown') return out
  const cveAffected = hit.status === 'affected'
  if (cveAffected !== nvdAffected) {
    out.disagreement = `NVD says ${nvdAffected ? 'affected' : 'not affected'}; ${hit.origin === 'adp' ? (hit.provider ?? 'ADP') : 'CNA'} says ${hit.status} (${hit.rule})`
  }
  return out
}

/** A CVE record in the shape the NVD index gives a CVE (lib/nvd/types CveRecord), for a CVE the NVD index lacks. */
export function cveDetailOfRecord (s: Cve5Summary): Omit<CveRecord, 'rejected' | 'configurations'> {
  const severity = s.cvss?.severity.toLowerCase()
  return {
    id: s.id,
    published: s.published ?? '',
    lastModified: s.updated ?? s.published ?? '',
    vulnStatus: s.state === 'REJECTED' ? 'Rejected' : 'Not in the NVD index (CVE record)',
    description: s.title !== undefined && s.description === undefined ? s.title : s.description ?? '',
    metrics: [],
    cvss: s.cvss?.score ?? null,
    cvssVersion: s.cvss?.version ?? null,
    cvssVector: s.cvss?.vector ?? null,
    severity: severity === 'critical' || severity === 'high' || severity === 'medium' || severity === 'low' || severity === 'none' ? severity : null,
    cwes: s.cwes ?? [],
    references: [],
    kev: s.kev !== undefined ? { dateAdded: s.kev.dateAdded } : null
  }
}
