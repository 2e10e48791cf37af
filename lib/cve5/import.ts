// Importers for CVE JSON 5 records, all into one SourceStore (source.ts), all usable offline
// except the two that fetch by design (delta files and the CVE Services API):
//   - a directory tree in the cvelistV5 layout (cves/2024/31xxx/CVE-2024-31449.json),
//   - a cvelistV5 bulk archive: the release asset is a zip holding `cves.zip`, which holds the
//     tree; both levels are read entry by entry, never whole (yauzl),
//   - an hourly delta archive (a zip holding the changed records directly),
//   - single record files,
//   - delta files (delta.json / deltaLog.json), whose listed records are fetched from a
//     configurable base URL,
//   - single CVEs from the CVE Services API.
//
// Resuming: each importer keeps a watermark in meta (`cve5:resume:…`) so a re-run skips what a
// previous run finished. A full baseline archive replaces both tables at once (readers keep the
// old data until it is complete), so an interrupted baseline import simply starts over.

import { createWriteStream, promises as fsp, readSync } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pipeline } from 'node:stream/promises'
import { Readable } from 'node:stream'
import { inflateRawSync } from 'node:zlib'
import yauzl from 'yauzl'
import type { SourceStore } from '../sources/source-store'
import { parseCve5Json, parseCve5Record, type Cve5Summary } from './record'
import { CVE5_TABLE, finishImport, replaceAll, writeSummaries } from './source'

export const DEFAULT_CVE_SERVICES_URL = 'https://cveawg.mitre.org'
/** Where delta files' records are fetched from: the cvelistV5 tree as raw files. */
export const DEFAULT_CVELIST_RAW_URL = 'https://raw.githubusercontent.com/CVEProject/cvelistV5/main'

const BATCH = 2000
const RECORD_NAME = /(?:^|\/)(CVE-\d{4}-\d{4,})\.json$/i

export interface ImportResult {
  /** Files or entries read as CVE records. */
  read: number
  added: number
  updated: number
  /** Identical to, or older than, what the store holds. */
  unchanged: number
  /** Not a CVE record (bad JSON, another document). */
  invalid: number
  /** Skipped because a previous run had finished them. */
  resumed: number
  /** Records fetched over the network (delta files, CVE Services). */
  fetched: number
  /** Records a delta file listed that could not be fetched. */
  missing: string[]
  /** Whether the tables were replaced whole (a baseline archive). */
  replaced: boolean
}

export interface ImportOptions {
  onProgress?: (read: number) => void
  batchSize?: number
}

function emptyResult (): ImportResult {
  return { read: 0, added: 0, updated: 0, unchanged: 0, invalid: 0, resumed: 0, fetched: 0, missing: [], replaced: false }
}

/** Collects summaries and writes them in batches, so no import calls put() once per record. */
class BatchWriter {
  private batch: Cve5Summary[] = []
  constructor (private readonly store: SourceStore, readonly result: ImportResult, private readonly size = BATCH,
    private readonly onProgress?: (read: number) => void) {}

  /** Queue one parsed record; returns true when this call flushed a batch. */
  async add (s: Cve5Summary | null): Promise<boolean> {
    this.result.read++
    if (!s) {
      this.result.invalid++
      return false
    }
    this.batch.push(s)
    if (this.batch.length < this.size) return false
    await this.flush()
    return true
  }

  async flush (): Promise<void> {
    if (this.batch.length === 0) return
    const r = await writeSummaries(this.store, this.batch)
    this.batch = []
    this.result.added += r.added
    this.result.updated += r.updated
    this.result.unchanged += r.unchanged
    this.onProgress?.(this.result.read)
  }
}

async function readWatermark<T> (store: SourceStore, key: string): Promise<T | null> {
  const raw = await store.getMeta(key)
  if (raw === null) return null
  try {
    return JSON.parse(raw) as T
  } catch {
    return null
  }
}

// --- directory trees ---------------------------------------------------------------------------

async function listRecordFiles (dir: string): Promise<string[]> {
  const out: string[] = []
  const walk = async (d: string): Promise<void> => {
    const entries = await fsp.readdir(d, { withFileTypes: true })
    for (const e of entries) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) await walk(p)
      else if (e.isFile() && RECORD_NAME.test(e.name)) out.push(p)
    }
  }
  await walk(dir)
  return out.sort()
}

interface DirWatermark {
  /** Last file (relative path, sorted order) of the last written batch. */
  last?: string
  done: boolean
  /** Newest file mtime (ms) seen in the last finished run: the next run reads only newer files. */
  mtime?: number
}

/**
 * Import every `CVE-*.json` under a directory (a cvelistV5 checkout or any part of it). Records
 * are merged: a partial tree never removes anything. A finished run remembers the newest file
 * time, so the next run of the same directory reads only files changed since (a `git pull`).
 */
export async function importDirectory (store: SourceStore, dir: string, opts: ImportOptions = {}): Promise<ImportResult> {
  const root = path.resolve(dir)
  const key = `cve5:resume:dir:${root}`
  const mark = await readWatermark<DirWatermark>(store, key)
  const result = emptyResult()
  const writer = new BatchWriter(store, result, opts.batchSize, opts.onProgress)
  const files = await listRecordFiles(root)
  let newestMtime = mark?.mtime ?? 0
  let pendingLast: string | undefined
  for (const file of files) {
    const rel = path.relative(root, file)
    if (mark && !mark.done && mark.last !== undefined && rel <= mark.last) {
      result.resumed++
      continue
    }
    const st = await fsp.stat(file)
    if (mark?.done === true && mark.mtime !== undefined && st.mtimeMs <= mark.mtime) {
      result.resumed++
      continue
    }
    if (st.mtimeMs > newestMtime) newestMtime = st.mtimeMs
    pendingLast = rel
    if (await writer.add(parseCve5Json(await fsp.readFile(file, 'utf8')))) {
      await store.setMeta(key, JSON.stringify({ last: pendingLast, done: false, mtime: mark?.mtime } satisfies DirWatermark))
    }
  }
  await writer.flush()
  await store.setMeta(key, JSON.stringify({ done: true, mtime: newestMtime } satisfies DirWatermark))
  await finishImport(store)
  return result
}

// --- single files --------------------------------------------------------------------------------

/** Import record files one by one (merged); a file that is not a CVE record counts as invalid. */
export async function importRecordFiles (store: SourceStore, files: readonly string[], opts: ImportOptions = {}): Promise<ImportResult> {
  const result = emptyResult()
  const writer = new BatchWriter(store, result, opts.batchSize, opts.onProgress)
  for (const f of files) await writer.add(parseCve5Json(await fsp.readFile(f, 'utf8')))
  await writer.flush()
  await finishImport(store)
  return result
}

// --- zip archives --------------------------------------------------------------------------------

interface ZipEntryRef {
  name: string
  read: () => Promise<Buffer>
  stream: () => Promise<Readable>
}


/**
 * Serves yauzl's reads from two cached windows of the file (one follows the central directory,
 * one the entries), so reading 300,000 small entries in order costs a read per few megabytes
 * instead of several per entry. Ranges larger than a window (the inner `cves.zip`) stream from disk.
 */
class WindowReader extends yauzl.RandomAccessReader {
  private windows: Array<{ start: number, buf: Buffer }> = []
  constructor (private readonly fh: FileHandle, private readonly size: number, private readonly windowSize = 4 << 20) {
    super()
  }

  slice (start: number, end: number): Buffer {
    for (let i = 0; i < this.windows.length; i++) {
      const w = this.windows[i]
      if (start >= w.start && end <= w.start + w.buf.length) {
        if (i !== 0) this.windows.unshift(...this.windows.splice(i, 1))
        return w.buf.subarray(start - w.start, end - w.start)
      }
    }
    const len = Math.min(Math.max(this.windowSize, end - start), this.size - start)
    const buf = Buffer.allocUnsafe(len)
    let off = 0
    while (off < len) {
      const n = readSync(this.fh.fd, buf, off, len - off, start + off)
      if (n === 0) break
      off += n
    }
    this.windows.unshift({ start, buf: buf.subarray(0, off) })
    this.windows.length = Math.min(this.windows.length, 2)
    return buf.subarray(0, end - start)
  }

  override _readStreamForRange (start: number, end: number): Readable {
    if (end - start > this.windowSize) return this.fh.createReadStream({ start, end: end - 1, autoClose: false })
    return Readable.from([this.slice(start, end)])
  }
}

async function * zipEntries (file: string): AsyncGenerator<ZipEntryRef> {
  const fh = await fsp.open(file, 'r')
  const { size } = await fh.stat()
  const reader = new WindowReader(fh, size)
  try {
    const zip = await yauzl.fromRandomAccessReaderPromise(reader, size, { lazyEntries: true, autoClose: false })
    while (true) {
      const entry = await new Promise<yauzl.Entry | null>((resolve, reject) => {
        const onEntry = (e: yauzl.Entry): void => { cleanup(); resolve(e) }
        const onEnd = (): void => { cleanup(); resolve(null) }
        const onError = (err: Error): void => { cleanup(); reject(err) }
        const cleanup = (): void => {
          zip.off('entry', onEntry)
          zip.off('end', onEnd)
          zip.off('error', onError)
        }
        zip.on('entry', onEntry)
        zip.on('end', onEnd)
        zip.on('error', onError)
        zip.readEntry()
      })
      if (entry === null) return
      if (entry.fileName.endsWith('/')) continue
      const stream = async (): Promise<Readable> => await zip.openReadStreamPromise(entry)
      const read = async (): Promise<Buffer> => {
        // Small entries are inflated in one call from the cached window: no stream per entry.
        const header = reader.slice(entry.relativeOffsetOfLocalHeader, entry.relativeOffsetOfLocalHeader + 30)
        if (header.readUInt32LE(0) !== 0x04034b50) throw new Error(`${entry.fileName}: bad local file header`)
        const fileDataStart = entry.relativeOffsetOfLocalHeader + 30 + header.readUInt16LE(26) + header.readUInt16LE(28)
        const raw = reader.slice(fileDataStart, fileDataStart + entry.compressedSize)
        if (entry.compressionMethod === 0) return Buffer.from(raw)
        if (entry.compressionMethod !== 8) throw new Error(`${entry.fileName}: unsupported compression method ${entry.compressionMethod}`)
        const out = inflateRawSync(raw)
        if (out.length !== entry.uncompressedSize) throw new Error(`${entry.fileName}: size mismatch`)
        return out
      }
      yield { name: entry.fileName, read, stream }
    }
  } finally {
    await fh.close()
  }
}

/** What names an archive for the watermark: its name, size and modification time. */
async function archiveIdentity (file: string): Promise<string> {
  const st = await fsp.stat(file)
  return `${path.basename(file)}:${st.size}:${Math.floor(st.mtimeMs)}`
}

async function * summariesOf (file: string, counter: ImportResult, onProgress?: (n: number) => void): AsyncGenerator<Cve5Summary> {
  for await (const e of zipEntries(file)) {
    if (!RECORD_NAME.test(e.name)) continue
    counter.read++
    const s = parseCve5Json((await e.read()).toString('utf8'))
    if (!s) {
      counter.invalid++
      continue
    }
    if (counter.read % BATCH === 0) onProgress?.(counter.read)
    yield s
  }
}

interface ZipWatermark {
  /** Record entries (in archive order) whose batch was written. */
  entries: number
  done: boolean
}

/**
 * Import a cvelistV5 archive. A baseline release asset (a zip holding `cves.zip`) replaces both
 * tables: the inner zip is streamed to a temporary file beside the system's temp directory and
 * read entry by entry from there. Any other zip of records (the hourly delta archives) is merged.
 * Re-importing an archive already finished does nothing.
 */
export async function importZip (store: SourceStore, file: string, opts: ImportOptions = {}): Promise<ImportResult> {
  const identity = await archiveIdentity(file)
  const key = `cve5:resume:zip:${identity}`
  const mark = await readWatermark<ZipWatermark>(store, key)
  const result = emptyResult()
  if (mark?.done === true) {
    result.resumed = mark.entries
    return result
  }
  let tmp: string | undefined
  try {
    let innerFile: string | undefined
    for await (const e of zipEntries(file)) {
      if (path.posix.basename(e.name) !== 'cves.zip') continue
      tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'vulnscan-cve5-'))
      innerFile = path.join(tmp, 'cves.zip')
      await pipeline(await e.stream(), createWriteStream(innerFile))
      break
    }
    if (innerFile !== undefined) {
      result.added = await replaceAll(store, summariesOf(innerFile, result, opts.onProgress), opts.batchSize)
      result.replaced = true
      await store.setMeta(key, JSON.stringify({ entries: result.read, done: true } satisfies ZipWatermark))
      await finishImport(store)
      return result
    }
  } finally {
    if (tmp !== undefined) await fsp.rm(tmp, { recursive: true, force: true })
  }
  const writer = new BatchWriter(store, result, opts.batchSize, opts.onProgress)
  let index = 0
  for await (const e of zipEntries(file)) {
    if (!RECORD_NAME.test(e.name)) continue
    index++
    if (mark && index <= mark.entries) {
      result.resumed++
      continue
    }
    if (await writer.add(parseCve5Json((await e.read()).toString('utf8')))) {
      await store.setMeta(key, JSON.stringify({ entries: index, done: false } satisfies ZipWatermark))
    }
  }
  await writer.flush()
  await store.setMeta(key, JSON.stringify({ entries: index, done: true } satisfies ZipWatermark))
  await finishImport(store)
  return result
}

// --- fetching records ----------------------------------------------------------------------------

export interface FetchOptions {
  /** Per-request timeout (default 15 s). */
  timeoutMs?: number
  /** Retries after a timeout, a network error, 429 or 5xx (default 3). */
  retries?: number
  /** First retry delay, doubled each time (default 1 s); a Retry-After header wins. */
  backoffMs?: number
  fetch?: typeof fetch
}

/**
 * GET a JSON document with a timeout and retries. 404 gives null; other 4xx throw at once.
 */
export async function fetchJson (url: string, opts: FetchOptions = {}): Promise<unknown> {
  const doFetch = opts.fetch ?? fetch
  const retries = opts.retries ?? 3
  let delay = opts.backoffMs ?? 1000
  for (let attempt = 0; ; attempt++) {
    let retryAfter: number | undefined
    let failure: string
    try {
      const res = await doFetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000) })
      if (res.ok) return await res.json() as unknown
      if (res.status === 404) {
        await res.body?.cancel()
        return null
      }
      failure = `HTTP ${res.status}`
      await res.body?.cancel()
      if (res.status !== 429 && res.status < 500) throw new Error(`${url}: ${failure}`)
      const ra = Number(res.headers.get('retry-after'))
      if (Number.isFinite(ra) && ra > 0) retryAfter = ra * 1000
    } catch (err) {
      if ((err as Error).message.startsWith(url)) throw err
      failure = (err as Error).name === 'TimeoutError' ? 'timed out' : (err as Error).message
    }
    if (attempt >= retries) throw new Error(`${url}: ${failure} after ${attempt + 1} attempts`)
    await new Promise((resolve) => setTimeout(resolve, retryAfter ?? delay))
    delay *= 2
  }
}

export interface CveServicesClient {
  /** The CVE record, or null when CVE Services does not know the id. */
  getRecord: (id: string) => Promise<unknown>
}

/** A small client for the CVE Services API: `GET <baseUrl>/api/cve/<id>` returns the record. */
export function createCveServicesClient (opts: FetchOptions & { baseUrl?: string } = {}): CveServicesClient {
  const base = (opts.baseUrl ?? DEFAULT_CVE_SERVICES_URL).replace(/\/+$/, '')
  return {
    getRecord: async (id) => await fetchJson(`${base}/api/cve/${encodeURIComponent(id.toUpperCase())}`, opts)
  }
}

/** The cvelistV5 path of a record: `cves/2024/31xxx/CVE-2024-31449.json`. */
export function cvelistPath (id: string): string {
  const m = /^CVE-(\d{4})-(\d{4,})$/i.exec(id.trim())
  if (!m) throw new Error(`not a CVE id: ${id}`)
  return `cves/${m[1]}/${m[2].slice(0, -3)}xxx/${id.trim().toUpperCase()}.json`
}

/** Fetch records from a copy of the cvelistV5 tree served over HTTP (GitHub raw, a mirror). */
export function createCvelistFetcher (opts: FetchOptions & { baseUrl?: string } = {}): CveServicesClient {
  const base = (opts.baseUrl ?? DEFAULT_CVELIST_RAW_URL).replace(/\/+$/, '')
  return { getRecord: async (id) => await fetchJson(`${base}/${cvelistPath(id)}`, opts) }
}

/** Fetch and import single CVEs (merged). Unknown ids are listed in `missing`. */
export async function importCveIds (store: SourceStore, ids: readonly string[], client: CveServicesClient): Promise<ImportResult> {
  const result = emptyResult()
  const writer = new BatchWriter(store, result)
  for (const id of ids) {
    const rec = await client.getRecord(id)
    if (rec === null) {
      result.missing.push(id.toUpperCase())
      continue
    }
    result.fetched++
    await writer.add(parseCve5Record(rec))
  }
  await writer.flush()
  await finishImport(store)
  return result
}

// --- delta files ---------------------------------------------------------------------------------

export interface DeltaChange {
  cveId: string
  dateUpdated?: string
}

export interface Delta {
  fetchTime: string
  new: DeltaChange[]
  updated: DeltaChange[]
}

/** Whether a parsed JSON document is a cvelistV5 delta (delta.json) or delta log (deltaLog.json). */
export function isDeltaDocument (doc: unknown): boolean {
  const first = Array.isArray(doc) ? doc[0] : doc
  return first !== null && typeof first === 'object' && 'fetchTime' in first && ('new' in first || 'updated' in first)
}

function changes (list: unknown): DeltaChange[] {
  if (!Array.isArray(list)) return []
  const out: DeltaChange[] = []
  for (const c of list) {
    if (c === null || typeof c !== 'object') continue
    const id = (c as Record<string, unknown>).cveId
    const updated = (c as Record<string, unknown>).dateUpdated
    if (typeof id === 'string' && /^CVE-\d{4}-\d{4,}$/i.test(id)) {
      out.push(typeof updated === 'string' ? { cveId: id.toUpperCase(), dateUpdated: updated } : { cveId: id.toUpperCase() })
    }
  }
  return out
}

/** The deltas of a delta.json or deltaLog.json document, oldest first. */
export function parseDeltas (doc: unknown): Delta[] {
  const list = Array.isArray(doc) ? doc : [doc]
  const out: Delta[] = []
  for (const d of list) {
    if (d === null || typeof d !== 'object') continue
    const o = d as Record<string, unknown>
    if (typeof o.fetchTime !== 'string') continue
    out.push({ fetchTime: o.fetchTime, new: changes(o.new), updated: changes(o.updated) })
  }
  return out.sort((a, b) => Date.parse(a.fetchTime) - Date.parse(b.fetchTime))
}

const DELTA_MARK = 'cve5:resume:delta-fetch-time'

/**
 * Apply delta documents: fetch each new or updated record the store does not already hold at
 * that dateUpdated. Deltas at or before the watermark of a previous run are skipped; the
 * watermark moves past a delta only once all its records were fetched.
 */
export async function importDeltas (store: SourceStore, doc: unknown, client: CveServicesClient): Promise<ImportResult> {
  const result = emptyResult()
  const mark = await store.getMeta(DELTA_MARK)
  const writer = new BatchWriter(store, result)
  // Once a delta could not be completed, later ones must not move the watermark past it.
  let blocked = false
  for (const delta of parseDeltas(doc)) {
    if (mark !== null && Date.parse(delta.fetchTime) <= Date.parse(mark)) {
      result.resumed += delta.new.length + delta.updated.length
      continue
    }
    const wanted = new Map<string, DeltaChange>()
    for (const c of [...delta.new, ...delta.updated]) wanted.set(c.cveId, c)
    const ids = [...wanted.keys()]
    const held = ids.length > 0 ? await store.getMany(CVE5_TABLE, ids) : []
    let complete = true
    for (let i = 0; i < ids.length; i++) {
      const change = wanted.get(ids[i]) as DeltaChange
      const prev = held[i]
      if (prev !== null && change.dateUpdated !== undefined) {
        const prevUpdated = (JSON.parse(prev) as Cve5Summary).updated
        if (prevUpdated !== undefined && Date.parse(prevUpdated) >= Date.parse(change.dateUpdated)) {
          result.resumed++
          continue
        }
      }
      let rec: unknown
      try {
        rec = await client.getRecord(ids[i])
      } catch {
        rec = null
      }
      if (rec === null) {
        result.missing.push(ids[i])
        complete = false
        continue
      }
      result.fetched++
      await writer.add(parseCve5Record(rec))
    }
    await writer.flush()
    if (!complete) blocked = true
    if (!blocked) await store.setMeta(DELTA_MARK, delta.fetchTime)
  }
  await finishImport(store)
  return result
}
