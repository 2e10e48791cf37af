// The NVD as a data source: CPE configurations, CVSS and status of every CVE, kept in the local CVE index
// (not the source store) that the matcher's first stage reads.

import { Type } from '@sinclair/typebox'
import { count, defineSource, defineSummary, nullableText, syncUrl, type ImportOutcome, type SourceContext } from '../sources/descriptor'
import { createNvdClient } from './client'
import { importFeed } from './feed-import'
import { META_AUTHORITATIVE, META_WATERMARK, syncIndex } from './sync'

const TITLE = 'NVD'
export const NVD_API_URL = 'https://services.nvd.nist.gov/rest/json'

async function summaryOf (ctx: SourceContext): Promise<{ cves: number, products: number, lastSync: string | null, authoritativeAsOf: string | null }> {
  const [stats, authoritativeAsOf] = await Promise.all([ctx.nvd.stats(), ctx.nvd.getMeta(META_AUTHORITATIVE)])
  return { ...stats, authoritativeAsOf }
}

export const nvdSource = defineSource({
  name: 'nvd',
  title: TITLE,
  role: 'decides',
  summary: defineSummary({
    key: 'nvd',
    group: 'top',
    required: true,
    schema: Type.Object({
      cves: Type.Integer({ minimum: 0, description: 'CVE records in the local NVD index' }),
      products: Type.Integer({ minimum: 0, description: 'vendor:product pairs with match criteria' }),
      lastSync: nullableText('When the last NVD sync completed'),
      authoritativeAsOf: nullableText('Set by a complete full sync or feed import: products absent from the index have no known CVEs, and nothing is fetched on demand')
    }),
    read: summaryOf,
    present: (v) => ({
      held: `${count(v.cves)} CVEs for ${count(v.products)} products`,
      dates: [{ label: 'last sync', at: v.lastSync }, ...(v.authoritativeAsOf !== null ? [{ label: 'complete as of', at: v.authoritativeAsOf }] : [])]
    })
  }),
  officialUrl: NVD_API_URL,
  urlSetting: 'NVD_API_URL',
  // Every applied page is followed by a saved position: an interrupted sync resumes where it stopped.
  resumable: true,
  async status (ctx) {
    const [s, watermark] = await Promise.all([summaryOf(ctx), ctx.nvd.getMeta(META_WATERMARK)])
    return {
      imported: s.cves > 0,
      importedAt: s.lastSync ?? s.authoritativeAsOf,
      dataDate: watermark ?? s.authoritativeAsOf,
      records: s.cves,
      unit: 'CVEs',
      sizeBytes: null,
      from: null
    }
  },
  async import (ctx, inputs, opts = {}) {
    if (inputs.length === 0) throw new Error('NVD imports feed files (nvdcve-2.0-*.json[.gz])')
    const started = new Date().toISOString()
    const out: ImportOutcome = { status: 'imported', records: 0, skipped: 0, problems: [], from: inputs.join(', '), summary: '' }
    let stored = 0
    for (const [i, file] of inputs.entries()) {
      opts.signal?.throwIfAborted()
      const r = await importFeed(file, ctx.nvd, { onProgress: (n) => opts.progress?.({ phase: 'import', done: n, total: null, unit: 'records', what: file }) })
      opts.progress?.({ phase: 'import', done: i + 1, total: inputs.length, unit: 'files', what: file })
      out.records += r.records
      out.skipped += r.skipped
      out.problems.push(...r.errors.map((e) => `${file}: ${e}`))
      stored += r.stored
    }
    // Feed files are regenerated daily: a complete set is as current as the moment the import began, at best.
    if (opts.complete === true) await ctx.nvd.setMeta(META_AUTHORITATIVE, started)
    await ctx.nvd.flush()
    out.summary = `${TITLE}: ${count(out.records)} records from ${inputs.length} feed file(s), ${count(stored)} new or updated` +
      `${out.skipped > 0 ? `, ${out.skipped} skipped` : ''}${opts.complete === true ? `; complete as of ${started}` : ''}`
    return out
  },
  async sync (ctx, opts = {}) {
    const url = syncUrl({ officialUrl: NVD_API_URL, urlSetting: 'NVD_API_URL' }, opts)
    const client = createNvdClient({ baseUrl: url, apiKey: opts.config?.NVD_API_KEY, requestsPerWindow: opts.config?.NVD_RATE_LIMIT })
    const s = await syncIndex({
      client,
      index: ctx.nvd,
      full: opts.force === true,
      signal: opts.signal,
      onProgress: (p) => opts.progress?.({ phase: 'import', done: p.nextStartIndex ?? p.totalResults, total: p.totalResults, unit: 'records', what: p.window === null ? 'full' : `${p.window.start} .. ${p.window.end}` })
    })
    await ctx.nvd.flush()
    return {
      status: s.records > 0 ? 'imported' : 'not-modified',
      records: s.stored,
      skipped: s.rejectedRecords.length,
      problems: s.rejectedRecords.map((id) => `unreadable record ${id}`),
      from: url,
      summary: `${TITLE}: ${s.mode} sync${s.resumed ? ' (resumed)' : ''}, ${count(s.records)} records in ${count(s.pages)} pages, ${count(s.stored)} new or changed; changes known up to ${s.watermark}`
    }
  },
  cveRecord: {
    label: 'nvd',
    description: 'the NVD record',
    describe: async (ctx, id) => await ctx.nvd.get(id)
  }
})
