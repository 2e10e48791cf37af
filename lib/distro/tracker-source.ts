// What every distribution tracker's descriptor shares: its entry under `dataSources.distributions` (the
// shape /health has always had), its status from the import record, and its import outcome.

import { Type } from '@sinclair/typebox'
import { count, defineSummary, type ImportOutcome, type Progress, type SourceContext, type SourceStatus } from '../sources/descriptor'
import { readImportMeta, type DistroImportResult } from './entries'
import type { DistroFamily } from './family'
import type { SyncResult } from './sync'

export const TRACKER_SUMMARY_SCHEMA = Type.Union([Type.Object({
  importedAt: Type.String({ description: 'When the tracker data was imported' }),
  packages: Type.Integer({ minimum: 0, description: 'Source packages with entries' }),
  cves: Type.Integer({ minimum: 0, description: 'Package and CVE entries' })
}), Type.Null()], { description: 'null when never imported' })

/** The tracker's entry in `dataSources.distributions`, keyed by its family. */
export function trackerSummary<const F extends DistroFamily, const R extends boolean> (family: F, required: R) {
  return defineSummary({
    key: family,
    group: 'distributions',
    required,
    schema: TRACKER_SUMMARY_SCHEMA,
    read: async (ctx: SourceContext) => {
      const m = ctx.sources === null ? null : await readImportMeta(ctx.sources, family)
      return m === null ? null : { importedAt: m.importedAt, packages: m.packages, cves: m.cves }
    },
    present: (v) => v === null ? null : { held: `${count(v.packages)} packages, ${count(v.cves)} CVEs`, dates: [{ label: 'imported', at: v.importedAt }] }
  })
}

export async function trackerStatus (ctx: SourceContext, family: DistroFamily): Promise<SourceStatus> {
  const m = ctx.sources === null ? null : await readImportMeta(ctx.sources, family)
  return {
    imported: m !== null,
    importedAt: m?.importedAt ?? null,
    // The trackers carry no date of their own: the HTTP Last-Modified of the file is the closest.
    dataDate: m?.lastModified !== undefined ? new Date(m.lastModified).toISOString() : null,
    records: m?.packages ?? 0,
    unit: 'packages',
    sizeBytes: m?.bytes ?? null,
    from: m?.from ?? null
  }
}

export function importedOutcome (title: string, r: DistroImportResult, from: string, extra: Partial<ImportOutcome> = {}): ImportOutcome {
  const skipped = r.skipped > 0 ? `, ${count(r.skipped)} skipped (${r.errors.slice(0, 3).join('; ')})` : ''
  return {
    status: 'imported',
    records: r.packages,
    skipped: r.skipped,
    problems: r.errors,
    from,
    summary: `${title}: ${count(r.cves)} CVE verdicts for ${count(r.packages)} release/source packages${skipped}`,
    ...extra
  }
}

export function syncOutcome (title: string, s: SyncResult, from: string): ImportOutcome {
  if (s.imported === undefined) {
    return { status: 'not-modified', records: 0, skipped: 0, problems: [], from, bytes: 0, resumed: s.download.resumed, summary: `${title}: not modified since the last import` }
  }
  const out = importedOutcome(title, s.imported, from, { bytes: s.download.bytes, resumed: s.download.resumed })
  out.summary += ` (downloaded ${count(s.download.bytes)} bytes${s.download.resumed > 0 ? `, resumed ${s.download.resumed}×` : ''})`
  return out
}

/** A download's progress in the descriptor's terms. */
export function downloadProgress (report: ((p: Progress) => void) | undefined, what: string): ((bytes: number, total: number | null) => void) | undefined {
  if (report === undefined) return undefined
  let at = 0
  return (bytes, total) => {
    const now = Date.now()
    if (now - at < 250 && bytes !== total) return
    at = now
    report({ phase: 'download', done: bytes, total, unit: 'bytes', what })
  }
}
