// A vulnerability data source as data, the way a probe is: each source module exports one descriptor,
// lib/sources/registry.ts lists them, and everything that shows, imports or syncs data (health and its
// schema, scan summaries, reports, the CLI, `data status|import|sync`, the matcher's enrichment stage)
// iterates the list. Adding a source is its module, one registry line and, when it decides findings, one
// matcher stage (docs/data-sources.md).

import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { Config } from '../config'
import type { DistroFamily } from '../distro/family'
import type { LocalCveIndex } from '../nvd/cve-index'
import type { CveRecord } from '../nvd/types'
import type { Epss, Kev } from '../domain/findings'
import type { KevCatalogue } from '../vocabulary'
import type { SourceStore } from './source-store'

/**
 * What a source does to a finding:
 * - `decides`: says which product versions a CVE affects (NVD, CVE JSON 5); the matcher gives each a stage,
 *   in an explicit precedence;
 * - `backports`: says which distribution package revision carries a fix (the distribution trackers); the
 *   matcher's distribution stage reads every one through lib/distro/families.ts, by family;
 * - `enriches`: adds context to a finding the others decided (KEV, EPSS), through `enrichment`;
 * - `names-products`: maps product names (CPE dictionaries and the like); no source has this role yet.
 */
export type SourceRole = 'decides' | 'backports' | 'enriches' | 'names-products'

/** Where sources live: the NVD index and the store of every other source (null: none configured). */
export interface SourceContext {
  nvd: LocalCveIndex
  sources: SourceStore | null
}

/** An import or sync writes, so it needs the source store. */
export interface WritableContext {
  nvd: LocalCveIndex
  sources: SourceStore
}

/** The same for every source, for `data status` and anything listing sources side by side. */
export interface SourceStatus {
  imported: boolean
  /** When the last import or sync finished (ISO); null when never. */
  importedAt: string | null
  /** The newest date the data itself carries (last NVD change, newest record update, catalog or score date). */
  dataDate: string | null
  /** What the source holds, counted in `unit`. */
  records: number
  unit: string
  /** Bytes of the last file imported, where the source knows it. */
  sizeBytes: number | null
  /** The file or URL of the last import. */
  from: string | null
}

export interface Progress {
  phase: 'download' | 'import'
  done: number
  /** Null when not known in advance. */
  total: number | null
  unit: 'bytes' | 'records' | 'files'
  /** The file, URL or release being worked on. */
  what?: string
}

export interface TransferOptions {
  /** Called as the work moves on, a few times a second at most. */
  progress?: (p: Progress) => void
  signal?: AbortSignal
  /** Where downloads are kept between runs, so an interrupted one resumes (default: a folder in the OS temp dir). */
  workDir?: string
  /** Distribution trackers: keep only these releases (default every release in the data). */
  releases?: string[]
  /** Fetch even when the server says nothing changed since the last import. */
  force?: boolean
  /** The inputs are the source's whole data set (NVD: every yearly feed file): what they lack has no entry. */
  complete?: boolean
  /** URLs, API keys and rate limits as the service is configured; official defaults for what is absent. */
  config?: Partial<Config>
}

export interface SyncOptions extends TransferOptions {
  /** Sync from here instead of the configured or official URL (a mirror, a test server). */
  url?: string
}

export interface ImportOutcome {
  status: 'imported' | 'not-modified'
  /** What was stored, in the unit of the source's status. */
  records: number
  /** Records or entries left out. */
  skipped: number
  /** The first reasons for what was left out, and warnings. */
  problems: string[]
  /** The files or URL read. */
  from: string
  /** Bytes downloaded, and how often an interrupted download was continued. */
  bytes?: number
  resumed?: number
  /** One line for a person. */
  summary: string
}

/** How a source's summary reads in the CLI and in reports: what it holds and how current it is. */
export interface SourceLine {
  held: string
  dates: Array<{ label: string, at: string | null }>
}

export type SummaryGroup = 'top' | 'distributions'

/**
 * The source's entry in `dataSources` (/health, each scan summary, reports), whose JSON shape the schema
 * fixes. `group: distributions` puts it under `dataSources.distributions`. `required` only for sources every
 * stored summary already has: a new source leaves it false, so summaries stored before it existed still
 * validate.
 */
export interface SourceSummary<K extends string = string, S extends TSchema = TSchema, G extends SummaryGroup = SummaryGroup, R extends boolean = boolean> {
  key: K
  group: G
  required: R
  schema: S
  read(ctx: SourceContext): Promise<Static<S>>
  /** Null when the source was never imported. (A method: a summary of any schema fits the registry's list.) */
  present(value: Static<S>): SourceLine | null
}

/** Keeps the literal key, group and required flag in the summary's type (the registry derives DataSources from them). */
export function defineSummary<const K extends string, S extends TSchema, const G extends SummaryGroup, const R extends boolean> (s: SourceSummary<K, S, G, R>): SourceSummary<K, S, G, R> {
  return s
}

/** The finding fields an enriching source sets. */
export interface EnrichableFields {
  kev: Kev | null
  epss: Epss | null
  euvdId: string | null
  /** Every catalogue that lists the CVE as exploited (`cisa` follows `kev`). */
  kevCatalogues: KevCatalogue[]
}

export interface Enrichment {
  /**
   * Read the source's data for these CVEs at once (one round trip or a few); the function returned gives
   * the fields it sets on one CVE's finding, given what the finding has so far.
   */
  lookup: (sources: SourceStore, cveIds: readonly string[]) => Promise<(cveId: string, current: EnrichableFields) => Partial<EnrichableFields>>
}

/** A CVE as GET /vulnerability/{cveId} shows it. */
export type CveDescription = Omit<CveRecord, 'rejected' | 'configurations'>

export interface CveDescriber {
  /** The `recordSource` value of the answer. */
  label: string
  /** What that value means, for the API documentation. */
  description: string
  describe: (ctx: SourceContext, cveId: string) => Promise<CveDescription | null>
}

export interface DataSourceDescriptor<N extends string = string, Sm extends SourceSummary = SourceSummary> {
  /** Registry name: `data sync <name>`, entries' `source`. */
  name: N
  title: string
  role: SourceRole
  /** Backports: the distribution family whose packages it speaks for. */
  family?: DistroFamily
  summary: Sm
  status: (ctx: SourceContext) => Promise<SourceStatus>
  /** Import from files, directories, archives or URLs, as the source reads them. */
  import: (ctx: WritableContext, inputs: string[], opts?: TransferOptions) => Promise<ImportOutcome>
  /** Bring the data up to date from its official URL (or `urlSetting`'s, or `opts.url`). */
  sync: (ctx: WritableContext, opts?: SyncOptions) => Promise<ImportOutcome>
  officialUrl: string
  /** The configuration variable that replaces `officialUrl` (a mirror), when there is one. */
  urlSetting?: keyof Config
  /** Whether an interrupted sync continues where it stopped rather than starting over. */
  resumable: boolean
  enrichment?: Enrichment
  /** Sources that can show a CVE the way GET /vulnerability/{cveId} answers, tried in registry order. */
  cveRecord?: CveDescriber
}

/** Keeps the literal name and summary type (see defineSummary). */
export function defineSource<const N extends string, Sm extends SourceSummary> (d: DataSourceDescriptor<N, Sm>): DataSourceDescriptor<N, Sm> {
  return d
}

/** The URL a sync reads: the one asked for, else the configured mirror, else the official one. */
export function syncUrl (d: Pick<DataSourceDescriptor, 'officialUrl' | 'urlSetting'>, opts: SyncOptions = {}): string {
  if (opts.url !== undefined && opts.url !== '') return opts.url
  const configured = d.urlSetting !== undefined ? opts.config?.[d.urlSetting] : undefined
  return typeof configured === 'string' && configured !== '' ? configured : d.officialUrl
}

/** Calls `report` at most every `ms` milliseconds, and always for the last value when asked to. */
export function throttled (report: ((p: Progress) => void) | undefined, ms = 250): ((p: Progress, last?: boolean) => void) {
  let at = 0
  return (p, last = false) => {
    if (report === undefined) return
    const now = Date.now()
    if (!last && now - at < ms) return
    at = now
    report(p)
  }
}

/** A date or version string a summary may not have yet. */
export const nullableText = (description: string) => Type.Union([Type.String(), Type.Null()], { description })

/** One input at a time, for sources that read a single file or URL. */
export function single (inputs: string[], what: string): string {
  if (inputs.length !== 1) throw new Error(`${what} imports one file or URL at a time (got ${inputs.length})`)
  return inputs[0]
}

export const isUrl = (s: string): boolean => /^https?:\/\//i.test(s)

export const count = (n: number): string => n.toLocaleString('en')
