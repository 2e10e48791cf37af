// Import NVD JSON 2.0 feed files (nvdcve-2.0-*.json[.gz]): the API envelope with a
// `vulnerabilities` array. The file is streamed, one record at a time, so memory stays flat
// whatever its size; records go to the index in batches.

import { createReadStream } from 'node:fs'
import { createGunzip } from 'node:zlib'
import { pipeline } from 'node:stream/promises'
import { normalizeCve } from './normalize'
import { splitArray } from './feed-split'
import type { CveIndex, CveRecord } from './types'

export interface ImportOptions {
  /** Records per index write. Default 1000. */
  batchSize?: number
  /** Called after each batch with the number of records read so far. */
  onProgress?: (n: number) => void
  /**
   * How the file is cut into records. 'split' (default) scans for element boundaries and
   * JSON.parses each record; 'stream-json' runs stream-json's parser, pick and streamArray,
   * token by token, about ten times slower. Both stream; both give the same records.
   */
  engine?: 'split' | 'stream-json'
}

export interface ImportResult {
  /** Records read and accepted (normalized). */
  records: number
  /** Records rejected as malformed. */
  skipped: number
  /** Why records were skipped (the first 100 reasons). */
  errors: string[]
  /** Records the index actually changed (new or newer than what it held). */
  stored: number
}

const MAX_ERRORS = 100

type Stage = NodeJS.ReadWriteStream

/** stream-json is ESM-only; this CommonJS module loads it with import(). */
async function jsonStages (): Promise<Stage[]> {
  const [{ parser }, { pick }, { streamArray }] = await Promise.all([
    import('stream-json'),
    import('stream-json/filters/pick.js'),
    import('stream-json/streamers/stream-array.js')
  ])
  return [parser.asStream(), pick.asStream({ filter: 'vulnerabilities' }), streamArray.asStream()]
}

interface WithRecords {
  upsertRecords: (records: CveRecord[]) => Promise<number>
}

function hasUpsertRecords (index: CveIndex): index is CveIndex & WithRecords {
  return typeof (index as Partial<WithRecords>).upsertRecords === 'function'
}

async function isGzip (file: string): Promise<boolean> {
  const stream = createReadStream(file, { start: 0, end: 1 })
  const chunks: Buffer[] = []
  for await (const c of stream) chunks.push(c as Buffer)
  const head = Buffer.concat(chunks)
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b
}

export async function importFeed (file: string, index: CveIndex, opts: ImportOptions = {}): Promise<ImportResult> {
  const batchSize = Math.max(1, opts.batchSize ?? 1000)
  const result: ImportResult = { records: 0, skipped: 0, errors: [], stored: 0 }
  let seen = 0
  let batch: CveRecord[] = []
  const direct = hasUpsertRecords(index)

  const note = (msg: string): void => {
    result.skipped++
    if (result.errors.length < MAX_ERRORS) result.errors.push(msg)
  }

  // One batch is written while the next one is read: parsing and index I/O overlap, and at
  // most two batches are ever held in memory.
  let inflight: Promise<void> = Promise.resolve()
  let writeError: Error | null = null
  const flush = async (): Promise<void> => {
    await inflight
    if (writeError !== null) throw writeError
    if (batch.length === 0) return
    const b = batch
    const readSoFar = seen
    batch = []
    inflight = (direct ? index.upsertRecords(b) : index.upsertRaw(b)).then((n) => {
      result.stored += n
      opts.onProgress?.(readSoFar)
    }, (err: Error) => { writeError = err })
  }

  const stages: Stage[] = []
  if (await isGzip(file)) stages.push(createGunzip())
  const streamJson = opts.engine === 'stream-json'
  if (streamJson) stages.push(...await jsonStages())

  const take = async (v: unknown, key: number): Promise<void> => {
    seen++
    const raw = typeof v === 'object' && v !== null && 'cve' in v ? (v as { cve: unknown }).cve : v
    try {
      batch.push(normalizeCve(raw))
      result.records++
    } catch (err) {
      note(`record #${key}: ${(err as Error).message}`)
    }
    if (batch.length >= batchSize) await flush()
  }
  // The consumer is the last stage of the pipeline, so a slow index slows the reading.
  const consume = streamJson
    ? async (src: AsyncIterable<{ key: number, value: unknown }>): Promise<void> => {
      for await (const item of src) await take(item.value, item.key)
    }
    : async (src: AsyncIterable<Buffer>): Promise<void> => {
      let key = 0
      for await (const v of splitArray(src, { key: 'vulnerabilities' })) await take(v, key++)
    }
  try {
    await (pipeline as unknown as (...args: unknown[]) => Promise<void>)(createReadStream(file), ...stages, consume)
  } catch (err) {
    await inflight
    throw new Error(`cannot import ${file}: ${(err as Error).message}`)
  }
  await flush()
  await inflight
  if (writeError !== null) throw writeError
  if (result.skipped > result.errors.length) {
    result.errors.push(`… and ${result.skipped - result.errors.length} more`)
  }
  return result
}
