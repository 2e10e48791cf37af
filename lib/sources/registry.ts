// Every vulnerability data source, one line each. Order matters twice: it is the order sources are shown
// in (health, reports, the CLI, `data status`), and the order of the matcher's enrichment stage and of the
// CVE detail fallback. Adding a source: its module exporting one descriptor (lib/sources/descriptor.ts),
// one line here, and, when it decides findings, one matcher stage (docs/data-sources.md).

import { Type, type Static, type TObject, type TSchema, type TUnsafe } from '@sinclair/typebox'
import { cve5Source } from '../cve5/descriptor'
import { alpineSecdbSource } from '../distro/alpine-secdb'
import { debianTrackerSource } from '../distro/debian-source'
import { redhatOsvSource } from '../distro/redhat-osv'
import { ubuntuOsvSource } from '../distro/ubuntu-source'
import { epssSource } from '../exploit/epss-source'
import { euvdSource } from '../exploit/euvd-source'
import { kevSource } from '../exploit/kev-source'
import type { LocalCveIndex } from '../nvd/cve-index'
import { nvdSource } from '../nvd/descriptor'
import type { DataSourceDescriptor, SourceContext, SourceLine, SourceRole, SourceStatus, SourceSummary } from './descriptor'
import type { SourceStore } from './source-store'

export const DATA_SOURCES = [
  nvdSource,
  cve5Source,
  debianTrackerSource,
  ubuntuOsvSource,
  alpineSecdbSource,
  redhatOsvSource,
  kevSource,
  epssSource,
  euvdSource
] as const

type Summaries = (typeof DATA_SOURCES)[number]['summary']
type Shape<U extends SourceSummary> =
  { [S in U as S['required'] extends true ? S['key'] : never]: Static<S['schema']> } &
  { [S in U as S['required'] extends true ? never : S['key']]?: Static<S['schema']> }

/**
 * What data a scan is matched against and how current each source is: one entry per source (its summary's
 * key), the distribution trackers under `distributions`. The type follows the registry.
 */
export type DataSources = Shape<Extract<Summaries, { group: 'top' }>> & { distributions: Shape<Extract<Summaries, { group: 'distributions' }>> }

export type DataSourceName = (typeof DATA_SOURCES)[number]['name']

const ALL: readonly DataSourceDescriptor[] = DATA_SOURCES

/** The descriptor of a source by its registry name (undefined for an unknown name). */
export function findSource (name: string): DataSourceDescriptor | undefined {
  return ALL.find((d) => d.name === name)
}

export function sourcesWithRole (role: SourceRole): DataSourceDescriptor[] {
  return ALL.filter((d) => d.role === role)
}

/** The enriching sources' lookups, in registry order (the matcher applies them in that order). */
export const ENRICHERS = ALL.flatMap((d) => d.enrichment !== undefined ? [{ name: d.name, ...d.enrichment }] : [])

/** Sources that can show a CVE for GET /vulnerability/{cveId}, tried in registry order. */
export const CVE_DESCRIBERS = ALL.flatMap((d) => d.cveRecord !== undefined ? [d.cveRecord] : [])

const DISTRIBUTIONS_DESCRIPTION = 'Distribution security trackers (backported fixes)'

function objectOf (summaries: SourceSummary[], extra: Record<string, TSchema> = {}, at?: number, options: Record<string, unknown> = {}): TObject {
  const props: Record<string, TSchema> = {}
  summaries.forEach((s, i) => {
    if (i === at) Object.assign(props, extra)
    props[s.key] = s.required ? s.schema : Type.Optional(s.schema)
  })
  if (at === undefined || at >= summaries.length) Object.assign(props, extra)
  return Type.Object(props, options)
}

/** The `DataSources` schema, built from the registry; its static type is DataSources. */
export function dataSourcesSchema (): TUnsafe<DataSources> {
  const summaries = ALL.map((d) => d.summary)
  const top = summaries.filter((s) => s.group === 'top')
  const distros = summaries.filter((s) => s.group === 'distributions')
  // `distributions` sits where the first tracker is in the registry, as /health has always shown it.
  const firstDistro = summaries.findIndex((s) => s.group === 'distributions')
  const at = firstDistro < 0 ? undefined : summaries.slice(0, firstDistro).filter((s) => s.group === 'top').length
  const distributions = objectOf(distros, {}, undefined, { description: DISTRIBUTIONS_DESCRIPTION })
  const schema = objectOf(top, distros.length > 0 ? { distributions } : {}, at, {
    $id: 'DataSources',
    description: 'The vulnerability data findings are matched against, and how current each source is'
  })
  return Type.Unsafe<DataSources>(schema)
}

/** Every source's summary for /health and a scan's summary. A source that cannot be read fails the whole answer. */
export async function dataSources (nvd: LocalCveIndex, sources: SourceStore | null): Promise<DataSources> {
  const ctx: SourceContext = { nvd, sources }
  // A file store loads what another process imported; Redis answers the current revision.
  if (sources !== null) await sources.revision()
  const values = await Promise.all(ALL.map(async (d) => await d.summary.read(ctx)))
  const out: Record<string, unknown> = {}
  const distributions: Record<string, unknown> = {}
  ALL.forEach((d, i) => {
    if (d.summary.group === 'distributions') distributions[d.summary.key] = values[i]
    else out[d.summary.key] = values[i]
  })
  if (ALL.some((d) => d.summary.group === 'distributions')) out.distributions = distributions
  return out as DataSources
}

export interface SourceView {
  name: string
  title: string
  /** Null: the summary says the source was never imported, or the summary does not have it (an older scan). */
  line: SourceLine | null
  /** Whether the summary has an entry for the source at all. */
  reported: boolean
}

/** Each source's line from a `dataSources` object (a scan's, or /health's), in registry order. */
export function sourceLines (d: Partial<Record<string, unknown>> & { distributions?: Partial<Record<string, unknown>> }): SourceView[] {
  return ALL.map((s) => {
    const where = s.summary.group === 'distributions' ? d.distributions : d
    const value = where?.[s.summary.key]
    if (value === undefined) return { name: s.name, title: s.title, line: null, reported: false }
    return { name: s.name, title: s.title, line: s.summary.present(value as never), reported: true }
  })
}

export interface SourceStatusEntry extends SourceStatus {
  name: string
  title: string
  role: SourceRole
  /** Seconds since the data's own date, or since the import when the data carries none; null when never imported. */
  ageSeconds: number | null
  resumable: boolean
  officialUrl: string
}

/** Every source's status, for `data status`. */
export async function sourceStatuses (ctx: SourceContext, now = Date.now()): Promise<SourceStatusEntry[]> {
  if (ctx.sources !== null) await ctx.sources.revision()
  return await Promise.all(ALL.map(async (d) => {
    const s = await d.status(ctx)
    const at = Date.parse(s.dataDate ?? s.importedAt ?? '')
    return {
      name: d.name,
      title: d.title,
      role: d.role,
      ...s,
      ageSeconds: Number.isNaN(at) ? null : Math.max(0, Math.round((now - at) / 1000)),
      resumable: d.resumable,
      officialUrl: d.officialUrl
    }
  }))
}
