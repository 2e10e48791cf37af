// Keeps the local CVE index in step with the NVD: a full pass the first time, then incremental
// passes over lastModified windows from a stored watermark. Every applied page is followed by a
// saved position, so an interrupted run (abort, crash, NVD down) resumes where it stopped.

import { type CvePage, type CveQuery, NVD_MAX_RANGE_DAYS, type RequestOptions, splitWindows } from './client'
import type { CveIndex } from './types'

/** Meta keys this module owns in the index. `lastSync` is also read by the index's stats(). */
export const META_WATERMARK = 'syncWatermark'
export const META_PROGRESS = 'syncProgress'
export const META_LAST_SYNC = 'lastSync'
/**
 * Set by a complete full sync or full feed import: as of this time the index holds every CVE the NVD had,
 * so a product absent from it has no known CVEs and nothing is fetched on demand.
 */
export const META_AUTHORITATIVE = 'authoritativeAsOf'

export interface SyncClient {
  cvePages: (query?: CveQuery, opts?: RequestOptions) => AsyncIterable<CvePage>
}

export type SyncMode = 'full' | 'incremental'

export interface SyncProgress {
  mode: SyncMode
  pages: number
  records: number
  /** The lastMod window being fetched (incremental only). */
  window: { start: string, end: string } | null
  /** Index of the next record to fetch in the current listing, or null when it is complete. */
  nextStartIndex: number | null
  totalResults: number
}

export interface SyncOptions {
  client: SyncClient
  index: CveIndex
  now?: () => Date
  signal?: AbortSignal
  onProgress?: (p: SyncProgress) => void
  /** Fetch everything again even when a watermark exists. */
  full?: boolean
  /**
   * How far before the watermark an incremental run starts. NVD stamps lastModified with its own
   * clock and a record can become visible a little after that stamp; re-reading a margin costs a
   * few repeats (idempotent) where a gap would lose changes for good. Default one hour.
   */
  overlapMs?: number
  /**
   * Start incremental from here when the index has no watermark yet, instead of a full pass:
   * for an index filled from NVD's feed files, the time those files were generated.
   */
  since?: Date | string
  /** Longest lastMod window (NVD allows 120 days). */
  maxWindowDays?: number
}

export interface SyncSummary {
  mode: SyncMode
  /** Whether the run began by finishing an interrupted one. */
  resumed: boolean
  pages: number
  /** Raw records received. */
  records: number
  /** Records the index stored (new or changed). */
  stored: number
  /** Records that could not be normalized (reported, not stored). */
  rejectedRecords: string[]
  windows: number
  watermark: string
  startedAt: string
  finishedAt: string
  durationMs: number
  fetchMs: number
  applyMs: number
}

interface FullProgress {
  v: 1
  mode: 'full'
  runStart: string
  startIndex: number
}

interface IncrementalProgress {
  v: 1
  mode: 'incremental'
  runStart: string
  /** Where the whole run ends. */
  to: string
  windowStart: string
  windowEnd: string
  /** -1 once the window is complete. */
  startIndex: number
}

type Progress = FullProgress | IncrementalProgress

const DONE = -1

function isIso (v: unknown): v is string {
  return typeof v === 'string' && !Number.isNaN(Date.parse(v))
}

function parseProgress (raw: string | null): Progress | null {
  if (raw === null || raw === '') return null
  let p: { v?: unknown, mode?: unknown, runStart?: unknown, to?: unknown, windowStart?: unknown, windowEnd?: unknown, startIndex?: unknown }
  try {
    p = JSON.parse(raw) as typeof p
  } catch {
    return null
  }
  if (p.v !== 1 || !isIso(p.runStart) || typeof p.startIndex !== 'number' || !Number.isInteger(p.startIndex)) return null
  if (p.mode === 'full' && p.startIndex >= 0) return { v: 1, mode: 'full', runStart: p.runStart, startIndex: p.startIndex }
  if (p.mode === 'incremental' && isIso(p.to) && isIso(p.windowStart) && isIso(p.windowEnd) && p.startIndex >= DONE) {
    return { v: 1, mode: 'incremental', runStart: p.runStart, to: p.to, windowStart: p.windowStart, windowEnd: p.windowEnd, startIndex: p.startIndex }
  }
  return null
}

function idOf (raw: unknown): string {
  const id = (raw as { id?: unknown } | null)?.id
  return typeof id === 'string' ? id.slice(0, 40) : '(no id)'
}

/**
 * Upsert a page of raw records. One malformed record must not wedge a sync on its page forever:
 * when the batch fails, the records are stored one by one and the ones that fail are named.
 */
export async function upsertTolerant (index: CveIndex, raw: unknown[]): Promise<{ stored: number, rejected: string[] }> {
  if (raw.length === 0) return { stored: 0, rejected: [] }
  try {
    return { stored: await index.upsertRaw(raw), rejected: [] }
  } catch {
    let stored = 0
    const rejected: string[] = []
    for (const r of raw) {
      try {
        stored += await index.upsertRaw([r])
      } catch {
        rejected.push(idOf(r))
      }
    }
    return { stored, rejected }
  }
}

export async function syncIndex (opts: SyncOptions): Promise<SyncSummary> {
  const { client, index, signal, onProgress } = opts
  const now = opts.now ?? (() => new Date())
  const overlapMs = opts.overlapMs ?? 3_600_000
  const maxWindowDays = Math.min(opts.maxWindowDays ?? NVD_MAX_RANGE_DAYS, NVD_MAX_RANGE_DAYS)
  const t0 = performance.now()
  const startedAt = now().toISOString()
  const summary: SyncSummary = {
    mode: 'incremental',
    resumed: false,
    pages: 0,
    records: 0,
    stored: 0,
    rejectedRecords: [],
    windows: 0,
    watermark: '',
    startedAt,
    finishedAt: '',
    durationMs: 0,
    fetchMs: 0,
    applyMs: 0
  }

  const saveProgress = async (p: Progress | null): Promise<void> => {
    await index.setMeta(META_PROGRESS, p === null ? '' : JSON.stringify(p))
  }

  async function apply (page: CvePage): Promise<void> {
    const a = performance.now()
    summary.records += page.cves.length
    const r = await upsertTolerant(index, page.cves)
    summary.stored += r.stored
    summary.rejectedRecords.push(...r.rejected)
    summary.pages++
    summary.applyMs += performance.now() - a
  }

  /** Pages of one listing, timing the waits for NVD separately from the index writes. */
  async function * pages (query: CveQuery): AsyncGenerator<CvePage> {
    const it = client.cvePages(query, { signal })[Symbol.asyncIterator]()
    for (;;) {
      const f = performance.now()
      const r = await it.next()
      summary.fetchMs += performance.now() - f
      if (r.done === true) return
      yield r.value
    }
  }

  async function runFull (p: FullProgress): Promise<void> {
    summary.mode = 'full'
    await saveProgress(p)
    for await (const page of pages({ startIndex: p.startIndex })) {
      await apply(page)
      p.startIndex = page.nextStartIndex ?? p.startIndex + page.cves.length
      await saveProgress(p)
      onProgress?.({ mode: 'full', pages: summary.pages, records: summary.records, window: null, nextStartIndex: page.nextStartIndex, totalResults: page.totalResults })
    }
    // Changes made while the pass ran are picked up by the next incremental run, which starts
    // from the moment this pass began.
    await index.setMeta(META_WATERMARK, p.runStart)
    // A complete pass holds every CVE the NVD had when it began: products absent from it have none.
    await index.setMeta(META_AUTHORITATIVE, p.runStart)
    summary.watermark = p.runStart
    await saveProgress(null)
  }

  async function runIncremental (p: IncrementalProgress): Promise<void> {
    summary.mode = 'incremental'
    await saveProgress(p)
    for (;;) {
      if (p.startIndex !== DONE) {
        summary.windows++
        const window = { start: p.windowStart, end: p.windowEnd }
        for await (const page of pages({ lastModStartDate: p.windowStart, lastModEndDate: p.windowEnd, startIndex: p.startIndex })) {
          await apply(page)
          p.startIndex = page.nextStartIndex ?? DONE
          await saveProgress(p)
          onProgress?.({ mode: 'incremental', pages: summary.pages, records: summary.records, window, nextStartIndex: page.nextStartIndex, totalResults: page.totalResults })
        }
        p.startIndex = DONE
      }
      await index.setMeta(META_WATERMARK, p.windowEnd)
      summary.watermark = p.windowEnd
      if (Date.parse(p.windowEnd) >= Date.parse(p.to)) break
      const next = splitWindows(new Date(p.windowEnd), new Date(p.to), maxWindowDays)[0]
      p.windowStart = next.start.toISOString()
      p.windowEnd = next.end.toISOString()
      p.startIndex = 0
      await saveProgress(p)
    }
    await saveProgress(null)
  }

  function newIncremental (watermark: string): IncrementalProgress {
    const runStart = now().toISOString()
    const from = new Date(Math.min(Date.parse(watermark) - overlapMs, Date.parse(runStart)))
    const first = splitWindows(from, new Date(runStart), maxWindowDays)[0]
    return { v: 1, mode: 'incremental', runStart, to: runStart, windowStart: first.start.toISOString(), windowEnd: first.end.toISOString(), startIndex: 0 }
  }

  let progress = parseProgress(await index.getMeta(META_PROGRESS))
  if (progress !== null && opts.full === true && progress.mode !== 'full') progress = null
  if (progress !== null) {
    summary.resumed = true
    if (progress.mode === 'full') await runFull(progress)
    else await runIncremental(progress)
  }
  let watermark = await index.getMeta(META_WATERMARK)
  if ((watermark === null || !isIso(watermark)) && opts.since !== undefined && opts.full !== true && !summary.resumed) {
    const since = new Date(opts.since)
    if (Number.isNaN(since.getTime())) throw new RangeError('since is not a valid date')
    watermark = since.toISOString()
  }
  if (!summary.resumed && (opts.full === true || watermark === null || !isIso(watermark))) {
    await runFull({ v: 1, mode: 'full', runStart: now().toISOString(), startIndex: 0 })
  } else {
    // Also after finishing an interrupted run: catch up to now, so one call leaves the index current.
    const mode = summary.mode
    await runIncremental(newIncremental(watermark ?? summary.watermark))
    if (summary.resumed) summary.mode = mode
  }

  const finishedAt = now().toISOString()
  await index.setMeta(META_LAST_SYNC, finishedAt)
  summary.finishedAt = finishedAt
  summary.durationMs = Math.round(performance.now() - t0)
  summary.fetchMs = Math.round(summary.fetchMs)
  summary.applyMs = Math.round(summary.applyMs)
  return summary
}
