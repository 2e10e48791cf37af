// CVE.org's CVE JSON 5 records (cvelistV5, with CISA's ADP Vulnrichment container) as a data source: the
// CNA's and CISA's affected versions, which decide where the NVD has not analysed a CVE.

import { promises as fsp } from 'node:fs'
import { Type } from '@sinclair/typebox'
import { count, defineSource, defineSummary, isUrl, nullableText, syncUrl, type ImportOutcome, type WritableContext } from '../sources/descriptor'
import {
  DEFAULT_CVELIST_RAW_URL, createCvelistFetcher, fetchJson, importDeltas, importDirectory, importRecordFiles, importZip,
  isDeltaDocument, type ImportResult
} from './import'
import { cve5Stats, cveDetailOfRecord, getCve5 } from './source'

const TITLE = 'CVE records (CVE JSON 5)'

function line (r: ImportResult): string {
  const parts = [`${count(r.read)} read`, `${count(r.added)} added`, `${count(r.updated)} updated`, `${count(r.unchanged)} unchanged`]
  if (r.fetched > 0) parts.push(`${count(r.fetched)} fetched`)
  if (r.resumed > 0) parts.push(`${count(r.resumed)} already imported`)
  if (r.invalid > 0) parts.push(`${count(r.invalid)} not CVE records`)
  if (r.missing.length > 0) parts.push(`${r.missing.length} not found`)
  return parts.join(', ')
}

function add (into: ImportOutcome, r: ImportResult, what: string): void {
  into.records += r.added + r.updated
  into.skipped += r.invalid + r.missing.length
  if (r.missing.length > 0) into.problems.push(`${what}: not found: ${r.missing.slice(0, 5).join(', ')}${r.missing.length > 5 ? ', …' : ''}`)
  into.summary += `${into.summary === '' ? '' : '; '}${what}: ${line(r)}`
}

/** Apply a delta.json or deltaLog.json document, fetching its records from a cvelistV5 tree at `base`. */
async function applyDeltas (ctx: WritableContext, doc: unknown, base: string): Promise<ImportResult> {
  return await importDeltas(ctx.sources, doc, createCvelistFetcher({ baseUrl: base }))
}

export const cve5Source = defineSource({
  name: 'cve5',
  title: TITLE,
  role: 'decides',
  summary: defineSummary({
    key: 'cve5',
    group: 'top',
    required: true,
    schema: Type.Object({
      records: Type.Integer({ minimum: 0, description: 'CVE JSON 5 records (CNA and CISA ADP affected data)' }),
      newestUpdated: nullableText('The newest record update imported'),
      importedAt: nullableText('When records were last imported')
    }),
    read: async (ctx) => ctx.sources === null ? { records: 0, newestUpdated: null, importedAt: null } : await cve5Stats(ctx.sources),
    present: (v) => v.importedAt === null && v.records === 0
      ? null
      : { held: `${count(v.records)} records`, dates: [{ label: 'newest update', at: v.newestUpdated }, { label: 'imported', at: v.importedAt }] }
  }),
  officialUrl: DEFAULT_CVELIST_RAW_URL,
  // Directories and archives remember how far an import got; deltas move a watermark only once all their records are in.
  resumable: true,
  async status (ctx) {
    const s = ctx.sources === null ? { records: 0, newestUpdated: null, importedAt: null } : await cve5Stats(ctx.sources)
    return { imported: s.importedAt !== null, importedAt: s.importedAt, dataDate: s.newestUpdated, records: s.records, unit: 'records', sizeBytes: null, from: null }
  },
  async import (ctx, inputs, opts = {}) {
    if (inputs.length === 0) throw new Error(`${TITLE}: name a cvelistV5 directory, zip, record files or delta files`)
    const base = syncUrl({ officialUrl: DEFAULT_CVELIST_RAW_URL }, opts)
    const out: ImportOutcome = { status: 'imported', records: 0, skipped: 0, problems: [], from: inputs.join(', '), summary: '' }
    const onProgress = (n: number): void => opts.progress?.({ phase: 'import', done: n, total: null, unit: 'records' })
    const records: string[] = []
    for (const input of inputs) {
      opts.signal?.throwIfAborted()
      if (isUrl(input)) {
        const doc = await fetchJson(input)
        if (doc === null || !isDeltaDocument(doc)) throw new Error(`${input}: not a cvelistV5 delta document`)
        add(out, await applyDeltas(ctx, doc, base), input)
        continue
      }
      const st = await fsp.stat(input).catch(() => null)
      if (st === null) throw new Error(`${input}: no such file or directory`)
      if (st.isDirectory()) add(out, await importDirectory(ctx.sources, input, { onProgress }), input)
      else if (input.toLowerCase().endsWith('.zip')) add(out, await importZip(ctx.sources, input, { onProgress }), input)
      else {
        let doc: unknown
        try {
          doc = JSON.parse(await fsp.readFile(input, 'utf8'))
        } catch {
          doc = undefined
        }
        if (doc !== undefined && isDeltaDocument(doc)) add(out, await applyDeltas(ctx, doc, base), input)
        else records.push(input)
      }
    }
    if (records.length > 0) add(out, await importRecordFiles(ctx.sources, records, { onProgress }), records.length === 1 ? records[0] : `${records.length} record files`)
    out.summary = `${TITLE}: ${out.summary}`
    return out
  },
  async sync (ctx, opts = {}) {
    // The delta log lists the changes of the last 30 days; a sync at least that often misses nothing.
    const base = syncUrl({ officialUrl: DEFAULT_CVELIST_RAW_URL }, opts).replace(/\/+$/, '')
    const url = `${base}/cves/deltaLog.json`
    const doc = await fetchJson(url)
    if (doc === null || !isDeltaDocument(doc)) throw new Error(`${url}: not a cvelistV5 delta log`)
    const out: ImportOutcome = { status: 'imported', records: 0, skipped: 0, problems: [], from: url, summary: '' }
    add(out, await applyDeltas(ctx, doc, base), url)
    if (out.records === 0 && out.skipped === 0) out.status = 'not-modified'
    out.summary = `${TITLE}: ${out.summary}`
    return out
  },
  cveRecord: {
    label: 'cve',
    description: 'the NVD index does not hold it, and this comes from its CVE JSON 5 record (CNA and CISA ADP data)',
    describe: async (ctx, id) => {
      const record = ctx.sources === null ? null : await getCve5(ctx.sources, id)
      return record === null ? null : cveDetailOfRecord(record)
    }
  }
})
