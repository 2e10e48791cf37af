// The embedded source store: tables in process memory, optionally persisted to one file that an
// import command and a running server share. The server sees a newer file (written by an import in
// another process) at its next revision() call and loads it: no restart needed.
//
// File format, one JSON document per line (gzip when the path ends in .gz):
//   {"format":"vulnscan-sources","version":1,"meta":{...}}
//   ["<table>","<key>","<value>"]   one per entry
// Written whole and renamed over the old one (lib/line-file.ts), so a crash mid-save keeps the old file.

import { fileStamp, readLines, writeLinesAtomic } from '../line-file'
import { checkTable, type Entry, type SourceStore } from './source-store'

const FORMAT = 'vulnscan-sources'
const FORMAT_VERSION = 1
/** How often revision() looks at the file for another process's writes. */
const FILE_CHECK_MS = 1000

export interface MemorySourceStoreOptions {
  /** File to load at open and save to on flush(); without it the store lives only in memory. */
  filePath?: string
}

interface Header {
  format: string
  version: number
  meta?: Record<string, string>
}

type Tables = Map<string, Map<string, string>>

async function readFile (file: string): Promise<{ tables: Tables, meta: Map<string, string> } | null> {
  const rl = await readLines(file)
  if (rl === null) return null
  const tables: Tables = new Map()
  const meta = new Map<string, string>()
  let header: Header | null = null
  for await (const line of rl) {
    if (line === '') continue
    if (header === null) {
      header = JSON.parse(line) as Header
      if (header.format !== FORMAT || header.version !== FORMAT_VERSION) {
        throw new Error(`${file} is not a vulnscan source store file (format ${String(header.format)} v${String(header.version)})`)
      }
      for (const [k, v] of Object.entries(header.meta ?? {})) meta.set(k, v)
      continue
    }
    const [table, key, value] = JSON.parse(line) as [string, string, string]
    let t = tables.get(table)
    if (t === undefined) tables.set(table, t = new Map())
    t.set(key, value)
  }
  if (header === null) throw new Error(`${file} is empty`)
  return { tables, meta }
}

export class MemorySourceStore implements SourceStore {
  private data: Tables = new Map()
  private meta = new Map<string, string>()
  private generation = 0
  private dirty = false
  /** The file as this process last read or wrote it; another stamp means another process wrote it. */
  private stamp: string | null = null
  private lastCheck = 0
  private saving: Promise<void> = Promise.resolve()

  constructor (private readonly opts: MemorySourceStoreOptions = {}) {}

  private table (name: string): Map<string, string> {
    checkTable(name)
    let t = this.data.get(name)
    if (t === undefined) this.data.set(name, t = new Map())
    return t
  }

  private changed (): void {
    this.generation++
    this.dirty = true
  }

  async put (table: string, entries: Iterable<Entry>): Promise<void> {
    const t = this.table(table)
    for (const [k, v] of entries) t.set(k, v)
    this.changed()
  }

  async get (table: string, key: string): Promise<string | null> {
    return this.table(table).get(key) ?? null
  }

  async getMany (table: string, keys: readonly string[]): Promise<Array<string | null>> {
    const t = this.table(table)
    return keys.map((k) => t.get(k) ?? null)
  }

  async delete (table: string, keys: readonly string[]): Promise<void> {
    const t = this.table(table)
    for (const k of keys) t.delete(k)
    this.changed()
  }

  async clear (table: string): Promise<void> {
    checkTable(table)
    this.data.delete(table)
    this.changed()
  }

  async replace (table: string, batches: AsyncIterable<Entry[]> | Iterable<Entry[]>): Promise<number> {
    checkTable(table)
    const next = new Map<string, string>()
    for await (const batch of batches) for (const [k, v] of batch) next.set(k, v)
    this.data.set(table, next)
    this.changed()
    return next.size
  }

  async count (table: string): Promise<number> {
    return this.table(table).size
  }

  async * scan (table: string, batchSize = 1000): AsyncIterable<Array<[string, string]>> {
    let batch: Array<[string, string]> = []
    for (const e of [...this.table(table)]) {
      batch.push(e)
      if (batch.length >= batchSize) {
        yield batch
        batch = []
      }
    }
    if (batch.length > 0) yield batch
  }

  async tables (): Promise<string[]> {
    return [...this.data.entries()].filter(([, t]) => t.size > 0).map(([name]) => name)
  }

  async allMeta (): Promise<Array<[string, string]>> {
    return [...this.meta.entries()]
  }

  async getMeta (key: string): Promise<string | null> {
    return this.meta.get(key) ?? null
  }

  async setMeta (key: string, value: string): Promise<void> {
    this.meta.set(key, value)
    this.changed()
  }

  async revision (): Promise<string> {
    const file = this.opts.filePath
    const now = Date.now()
    if (file !== undefined && !this.dirty && now - this.lastCheck >= FILE_CHECK_MS) {
      this.lastCheck = now
      const stamp = await fileStamp(file)
      if (stamp !== null && stamp !== this.stamp) await this.load()
    }
    return String(this.generation)
  }

  /** Load the file given at open (a missing file is an empty store). */
  async load (): Promise<void> {
    const file = this.opts.filePath
    if (file === undefined) return
    const stamp = await fileStamp(file)
    const read = await readFile(file)
    if (read === null) return
    this.data = read.tables
    this.meta = read.meta
    this.stamp = stamp
    this.generation++
  }

  async flush (): Promise<void> {
    if (this.opts.filePath === undefined || !this.dirty) {
      await this.saving
      return
    }
    this.saving = this.saving.then(async () => await this.save(), async () => await this.save())
    await this.saving
  }

  async close (): Promise<void> {
    await this.flush()
  }

  private async save (): Promise<void> {
    const file = this.opts.filePath
    if (file === undefined || !this.dirty) return
    // Another process (an import) replaced the file since this one read it: its data wins over this one's changes.
    const current = await fileStamp(file)
    if (current !== null && current !== this.stamp) {
      this.dirty = false
      await this.load()
      return
    }
    this.dirty = false
    // Snapshot synchronously so that writes during the save cannot mix two states in one file.
    const header: Header = { format: FORMAT, version: FORMAT_VERSION, meta: Object.fromEntries(this.meta) }
    const snapshot = [...this.data].map(([name, t]) => [name, [...t]] as const)
    try {
      this.stamp = await writeLinesAtomic(file, async (write) => {
        await write(JSON.stringify(header))
        for (const [name, entries] of snapshot) {
          const t = JSON.stringify(name)
          for (const [k, v] of entries) await write(`[${t},${JSON.stringify(k)},${JSON.stringify(v)}]`)
        }
      })
    } catch (err) {
      this.dirty = true
      throw err
    }
  }
}

export async function createMemorySourceStore (opts: MemorySourceStoreOptions = {}): Promise<MemorySourceStore> {
  const store = new MemorySourceStore(opts)
  await store.load()
  return store
}
