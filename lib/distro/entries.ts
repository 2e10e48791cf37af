// The stored form of distribution tracker data: one SourceStore entry per (family, release,
// source package) holding that package's CVEs. A scan looks up one key per detected package, so
// the whole tracker never has to be read to decide one port.

import type { SourceStore } from '../sources/source-store'
import { DecodedCache } from '../sources/decoded'
import type { DistroFamily } from './family'

/**
 * A tracker's verdict for one CVE in one release: fixed in a package version (`resolved`), not
 * affected at all, still open (`open`, including no-DSA and unimportant issues), or not yet
 * looked at (`undetermined`).
 */
export type DistroStatus = 'resolved' | 'not-affected' | 'open' | 'undetermined'

/** The data source (its registry name) whose tracker gave an entry: the one defined for the entry's family. */
export type DistroSource = string

export interface DistroCveEntry {
  status: DistroStatus
  /** The first package version that carries the fix, for `resolved`. */
  fixedVersion: string | null
  /** Debian urgency (`unimportant`, `low`, …) or Ubuntu priority. */
  urgency: string | null
  /** Debian's no-DSA note, or the Ubuntu Pro origin of a fix. */
  note?: string
  /** Ubuntu: the first affected version when the record names one other than 0. */
  introduced?: string
  source: DistroSource
}

export interface DistroPackageKey {
  family: DistroFamily
  release: string
  source: string
}

/** A tracker module declares itself once: the family whose table it writes, its source name and its title. */
export interface TrackerIdentity {
  family: DistroFamily
  /** The data source's registry name, e.g. `debian-tracker`. */
  source: string
  /** How findings name it in their rule, e.g. `Debian security tracker`. */
  title: string
}

const TRACKERS = new Map<DistroFamily, TrackerIdentity>()
const TITLES = new Map<string, string>()

/**
 * Declare the tracker that writes a family's table. Entries read from that table carry its source name;
 * a family has one tracker (its table is replaced or merged by that tracker's imports only).
 */
export function defineTracker (t: TrackerIdentity): TrackerIdentity {
  const had = TRACKERS.get(t.family)
  if (had !== undefined && had.source !== t.source) throw new Error(`the ${t.family} table is already written by ${had.source}`)
  TRACKERS.set(t.family, t)
  TITLES.set(t.source, t.title)
  return t
}

/** The tracker defined for a family, if its module is loaded. */
export function trackerOf (family: DistroFamily): TrackerIdentity | undefined {
  return TRACKERS.get(family)
}

/** A tracker's title for a finding's rule; its source name when no module defined it. */
export function trackerTitle (source: string): string {
  return TITLES.get(source) ?? source
}

/** Each family has its own table so a full import of one replaces it without touching the other. */
export function distroTable (family: DistroFamily): string {
  return `distro-${family}`
}

export function distroKey (k: DistroPackageKey): string {
  return `${k.family}:${k.release}:${k.source}`
}

/** Meta key under which an import records when and from what it last ran. */
export function distroMetaKey (family: DistroFamily): string {
  return `distro:${family}:import`
}

export interface DistroImportMeta {
  importedAt: string
  /** File or URL the data came from. */
  from: string
  packages: number
  cves: number
  etag?: string
  lastModified?: string
  /** Size of the file imported, when the import read one file. */
  bytes?: number
}

const STATUS_CODES: Record<DistroStatus, string> = { resolved: 'r', 'not-affected': 'n', open: 'o', undetermined: 'u' }
const STATUS_BY_CODE = new Map(Object.entries(STATUS_CODES).map(([k, v]) => [v, k as DistroStatus]))

type Packed = [string, string | null, string | null, string?, string?]

/**
 * Encode one package's CVE map compactly: the full Debian tracker holds about a million of them. The source
 * is not stored: a family's table holds one tracker's entries. (Values written before held a second code
 * letter for it after the status letter; reading ignores it.)
 */
export function encodeEntries (entries: Map<string, DistroCveEntry>): string {
  const out: Record<string, Packed> = {}
  for (const [cve, e] of entries) {
    const packed: Packed = [STATUS_CODES[e.status], e.fixedVersion, e.urgency]
    if (e.note !== undefined || e.introduced !== undefined) packed.push(e.note ?? '')
    if (e.introduced !== undefined) packed.push(e.introduced)
    out[cve] = packed
  }
  return JSON.stringify(out)
}

export function decodeEntries (text: string, source: DistroSource): Map<string, DistroCveEntry> {
  const raw = JSON.parse(text) as Record<string, Packed>
  const out = new Map<string, DistroCveEntry>()
  for (const [cve, p] of Object.entries(raw)) {
    const status = STATUS_BY_CODE.get(p[0][0])
    if (!status) throw new Error(`bad stored distribution entry for ${cve}`)
    const e: DistroCveEntry = { status, fixedVersion: p[1], urgency: p[2], source }
    if (p[3]) e.note = p[3]
    if (p[4]) e.introduced = p[4]
    out.set(cve, e)
  }
  return out
}

// Every port of a host, and every host, running one package reads the same entries: one cache per family,
// since the same text in two tables comes from two trackers.
const decoded = new Map<DistroFamily, DecodedCache<Map<string, DistroCveEntry>>>()

function decoderOf (family: DistroFamily): DecodedCache<Map<string, DistroCveEntry>> {
  let cache = decoded.get(family)
  if (cache === undefined) {
    decoded.set(family, cache = new DecodedCache((text) => decodeEntries(text, TRACKERS.get(family)?.source ?? `${family} tracker`)))
  }
  return cache
}

/** Every CVE the tracker lists for one package in one release, or null when it lists none. */
export async function readDistroEntries (store: SourceStore, key: DistroPackageKey): Promise<Map<string, DistroCveEntry> | null> {
  const text = await store.get(distroTable(key.family), distroKey(key))
  return text === null ? null : decoderOf(key.family).get(text)
}

/** The tracker's verdict for one CVE of one package, or null when it has none. */
export async function readDistroEntry (store: SourceStore, key: DistroPackageKey, cve: string): Promise<DistroCveEntry | null> {
  return (await readDistroEntries(store, key))?.get(cve) ?? null
}

export async function readImportMeta (store: SourceStore, family: DistroFamily): Promise<DistroImportMeta | null> {
  const text = await store.getMeta(distroMetaKey(family))
  return text === null ? null : JSON.parse(text) as DistroImportMeta
}

/** What every importer returns. */
export interface DistroImportResult {
  /** Store entries written: (release, source package) pairs. */
  packages: number
  /** (release, source package, CVE) verdicts stored. */
  cves: number
  /** Records or entries left out, with the first reasons. */
  skipped: number
  errors: string[]
}

export const CVE_ID = /^CVE-\d{4}-\d{4,}$/

/** Record what an import of one family brought in (for /health, and the next sync's conditional GET), and make it durable. */
export async function finishDistroImport (store: SourceStore, family: DistroFamily, result: DistroImportResult,
  from: string, validators: { etag?: string, lastModified?: string, bytes?: number }): Promise<void> {
  if (result.skipped > result.errors.length) result.errors.push(`… and ${result.skipped - result.errors.length} more`)
  const meta: DistroImportMeta = { importedAt: new Date().toISOString(), from, packages: result.packages, cves: result.cves }
  if (validators.etag) meta.etag = validators.etag
  if (validators.lastModified) meta.lastModified = validators.lastModified
  if (validators.bytes !== undefined) meta.bytes = validators.bytes
  await store.setMeta(distroMetaKey(family), JSON.stringify(meta))
  await store.flush()
}
