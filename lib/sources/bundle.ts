// The offline bundle: every vulnerability data source of one install (the NVD index and every table of the source
// store, with their metadata) in one versioned, checksummed and optionally signed file, for installs that cannot
// reach the feeds. `npm run data -- export <file>` writes it where the data is; `npm run data -- import <file>`
// verifies it whole before it writes anything, then loads it.
//
// The file is gzip'd lines of JSON: a header, the NVD records, the NVD's metadata, each source table in batches,
// the source store's metadata, and an end line holding the number of lines before it, the SHA-256 of those lines
// (each with its newline) and, when signed, an Ed25519 signature of that digest. A bundle whose digest, line count
// or signature does not hold is refused; with a verify key, so is an unsigned one.
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import { createReadStream, createWriteStream, readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { pipeline } from 'node:stream/promises'
import { Readable } from 'node:stream'
import { createGunzip, createGzip } from 'node:zlib'
import type { CveRecord } from '../nvd/types'
import type { WritableContext } from './descriptor'

export const BUNDLE_FORMAT = 'vulnscan-data-bundle'
export const BUNDLE_VERSION = 1
const NVD_BATCH = 1000
const TABLE_BATCH = 2000

interface Header { format: string, version: number, createdAt: string }
interface End { lines: number, sha256: string, signature: string | null }
type Line =
  | { nvd: CveRecord }
  | { nvdMeta: [string, string] }
  | { table: string, entries: Array<[string, string]> }
  | { meta: [string, string] }

export interface BundleSummary {
  nvdRecords: number
  tables: Record<string, number>
  signed: boolean
  sha256: string
}

/** An Ed25519 key from a PEM file (private for export, public or private for import). */
export function bundleKey (file: string, kind: 'private' | 'public'): KeyObject {
  const pem = readFileSync(file)
  const key = kind === 'private' ? createPrivateKey(pem) : createPublicKey(pem)
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${file}: a bundle key is an Ed25519 key, not ${String(key.asymmetricKeyType)}`)
  return key
}

async function * bundleLines (ctx: WritableContext): AsyncGenerator<Line> {
  if (ctx.nvd.recordIds === undefined || ctx.nvd.allMeta === undefined || ctx.sources.tables === undefined || ctx.sources.allMeta === undefined) {
    throw new Error('this backend cannot list its data for a bundle')
  }
  for await (const ids of ctx.nvd.recordIds(NVD_BATCH)) {
    for (const r of await ctx.nvd.getMany(ids)) if (r !== null) yield { nvd: r }
  }
  for (const m of await ctx.nvd.allMeta()) yield { nvdMeta: m }
  for (const table of await ctx.sources.tables()) {
    for await (const batch of ctx.sources.scan(table, TABLE_BATCH)) yield { table, entries: batch }
  }
  for (const m of await ctx.sources.allMeta()) yield { meta: m }
}

/** Writes the bundle of what `ctx` holds to `file`. */
export async function exportBundle (ctx: WritableContext, file: string, opts: { signingKey?: KeyObject, now?: Date } = {}): Promise<BundleSummary> {
  const hash = createHash('sha256')
  const summary: BundleSummary = { nvdRecords: 0, tables: {}, signed: opts.signingKey !== undefined, sha256: '' }
  let lines = 0
  async function * text (): AsyncGenerator<string> {
    const header: Header = { format: BUNDLE_FORMAT, version: BUNDLE_VERSION, createdAt: (opts.now ?? new Date()).toISOString() }
    for await (const line of (async function * () { yield header; yield * bundleLines(ctx) })()) {
      if ('nvd' in line) summary.nvdRecords++
      if ('table' in line) summary.tables[line.table] = (summary.tables[line.table] ?? 0) + line.entries.length
      const s = JSON.stringify(line) + '\n'
      hash.update(s)
      lines++
      yield s
    }
    summary.sha256 = hash.digest('hex')
    const end: End = { lines, sha256: summary.sha256, signature: opts.signingKey === undefined ? null : sign(null, Buffer.from(summary.sha256), opts.signingKey).toString('base64') }
    yield JSON.stringify({ end }) + '\n'
  }
  await pipeline(Readable.from(text()), createGzip(), createWriteStream(file))
  return summary
}

function lineReader (file: string): AsyncIterable<string> {
  const gunzip = createGunzip()
  const input = createReadStream(file)
  input.on('error', (err) => gunzip.destroy(err))
  return createInterface({ input: input.pipe(gunzip), crlfDelay: Infinity })
}

/** Reads the whole bundle and checks its header, line count, digest and signature; throws naming what is wrong. */
export async function verifyBundle (file: string, opts: { verifyKey?: KeyObject } = {}): Promise<{ header: Header, end: End }> {
  const hash = createHash('sha256')
  let header: Header | null = null
  let end: End | null = null
  let lines = 0
  try {
    for await (const text of lineReader(file)) {
      if (end !== null) throw new Error('lines after the end line')
      if (header === null) {
        header = JSON.parse(text) as Header
        if (header.format !== BUNDLE_FORMAT) throw new Error('not a vulnscan data bundle')
        if (header.version !== BUNDLE_VERSION) throw new Error(`bundle version ${String(header.version)}; this vulnscan reads version ${BUNDLE_VERSION}`)
      } else if (text.startsWith('{"end":')) {
        end = (JSON.parse(text) as { end: End }).end
        continue
      }
      hash.update(text + '\n')
      lines++
    }
  } catch (err) {
    throw new Error(`${file}: refused: ${(err as Error).message}`)
  }
  if (header === null) throw new Error(`${file}: refused: empty`)
  if (end === null) throw new Error(`${file}: refused: no end line (the file is cut short)`)
  if (end.lines !== lines) throw new Error(`${file}: refused: ${lines} lines where the end line says ${end.lines} (the file was changed)`)
  const digest = hash.digest('hex')
  if (digest !== end.sha256) throw new Error(`${file}: refused: its SHA-256 is not the one its end line gives (the file was changed)`)
  if (opts.verifyKey !== undefined) {
    if (end.signature === null) throw new Error(`${file}: refused: not signed, and a verify key was given`)
    if (!verify(null, Buffer.from(digest), opts.verifyKey, Buffer.from(end.signature, 'base64'))) throw new Error(`${file}: refused: the signature does not verify with the given key`)
  }
  return { header, end }
}

/**
 * Verifies the bundle whole, then loads it: the NVD records upserted, each source table replaced whole (readers see
 * the old table until the new one is complete), the metadata set. Nothing is written when verification fails.
 */
export async function importBundle (ctx: WritableContext, file: string, opts: { verifyKey?: KeyObject } = {}): Promise<BundleSummary & { createdAt: string, signatureVerified: boolean }> {
  const { header, end } = await verifyBundle(file, opts)
  const summary = { nvdRecords: 0, tables: {} as Record<string, number>, signed: end.signature !== null, sha256: end.sha256, createdAt: header.createdAt, signatureVerified: opts.verifyKey !== undefined }
  let records: CveRecord[] = []
  let table: { name: string, batches: Array<Array<[string, string]>> } | null = null
  const meta: Array<[string, string]> = []
  const flushRecords = async (): Promise<void> => {
    if (records.length === 0) return
    await ctx.nvd.upsertRecords(records)
    summary.nvdRecords += records.length
    records = []
  }
  const flushTable = async (): Promise<void> => {
    if (table === null) return
    summary.tables[table.name] = await ctx.sources.replace(table.name, table.batches)
    table = null
  }
  let first = true
  for await (const text of lineReader(file)) {
    if (first) { first = false; continue }
    if (text.startsWith('{"end":')) break
    const line = JSON.parse(text) as Line
    if ('nvd' in line) {
      records.push(line.nvd)
      if (records.length >= NVD_BATCH) await flushRecords()
    } else if ('nvdMeta' in line) {
      await flushRecords()
      await ctx.nvd.setMeta(line.nvdMeta[0], line.nvdMeta[1])
    } else if ('table' in line) {
      if (table !== null && table.name !== line.table) await flushTable()
      table ??= { name: line.table, batches: [] }
      table.batches.push(line.entries)
    } else if ('meta' in line) {
      meta.push(line.meta)
    }
  }
  await flushRecords()
  await flushTable()
  // Metadata last: a source reads as imported only once its tables are in.
  for (const [k, v] of meta) await ctx.sources.setMeta(k, v)
  await ctx.sources.flush()
  await ctx.nvd.flush()
  return summary
}
