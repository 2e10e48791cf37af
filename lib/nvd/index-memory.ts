// The embedded CVE index: everything in process memory, optionally persisted to one file so an
// import and later runs share it. Records are kept deflated (see record-codec); the product index
// is kept grouped by distinct criterion.
//
// File format (one JSON document per line; gzip-compressed when the path ends in .gz, which
// costs save time for little gain since the records are deflated already):
//   {"format":"vulnscan-nvd-index","version":1,"meta":{...},"fetched":{"vendor:product":expiresAtMs}}
//   {"p":"vendor:product","c":<criterion>,"ids":[...],"pf":[[id,[platform criteria]],...]}   one per group
//   {"id":"CVE-...","lm":"<lastModified>","z":"<base64 deflated record JSON>"}              one per CVE
// It is written to a temporary file in the same directory and renamed over the old one, so a
// crash mid-save leaves the previous file intact.

import { createReadStream, createWriteStream, promises as fsp } from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import { createGunzip, createGzip } from 'node:zlib'
import { once } from 'node:events'
import { PassThrough } from 'node:stream'
import { randomBytes } from 'node:crypto'
import { compileTarget, criterionUses, productKeyOf, type CriterionUse, type MatchHit } from './matcher'
import { ProductGroups, expandHits, type GroupHit } from './product-groups'
import { compareModified, decodeJson, decodeRecord, encodeJson } from './record-codec'
import { hitsToMatches, newestPerId, normalizeAll, prepare, type LocalCveIndex } from './index-common'
import type { CpeCriterion, CveMatch, CveRecord, IndexStats } from './types'

const FORMAT = 'vulnscan-nvd-index'
const FORMAT_VERSION = 1
const SLAB_BYTES = 1 << 20

/**
 * Record blobs are copied into large slabs. Small Buffers would otherwise come from Node's
 * shared 8 KB pool, and every long-lived blob would pin a whole pool slab with whatever
 * short-lived data shared it: measured at more than twice the blobs' own size.
 */
class BlobArena {
  private slab = Buffer.allocUnsafeSlow(SLAB_BYTES)
  private used = 0

  store (src: Uint8Array): Buffer {
    const n = src.length
    if (n > SLAB_BYTES >> 4) {
      const own = Buffer.allocUnsafeSlow(n)
      own.set(src)
      return own
    }
    if (this.used + n > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES)
      this.used = 0
    }
    const out = this.slab.subarray(this.used, this.used + n)
    out.set(src)
    this.used += n
    return out
  }
}
const DECODED_CACHE_MAX = 4096
/** How often refresh() looks at the file for another process's writes. */
const REFRESH_CHECK_MS = 1000

async function fileStamp (file: string): Promise<string | null> {
  try {
    const st = await fsp.stat(file)
    return `${st.mtimeMs}:${st.size}:${st.ino}`
  } catch {
    return null
  }
}

export interface MemoryIndexOptions {
  /** File to load at open and save to; without it the index lives only in memory. */
  filePath?: string
  /** Quiet time after the last change before an automatic save (ms). Default 2000. */
  saveDelayMs?: number
  /**
   * Longest a change waits for an automatic save while changes keep coming (ms), so a long
   * import is not re-saved every few seconds (each save writes the whole index). Default 300000.
   */
  maxSaveDelayMs?: number
}

interface Stored {
  lm: string
  blob: Buffer
}

interface Header {
  format: string
  version: number
  meta?: Record<string, string>
  fetched?: Record<string, number>
}

interface GroupLine {
  p: string
  c: CpeCriterion
  ids: string[]
  pf?: Array<[string, string[]]>
}

interface RecordLine {
  id: string
  lm: string
  z: string
}

export class MemoryIndex implements LocalCveIndex {
  private readonly records = new Map<string, Stored>()
  private readonly products = new Map<string, ProductGroups>()
  private readonly meta = new Map<string, string>()
  private readonly fetched = new Map<string, number>()
  private readonly decoded = new Map<string, CveRecord>()
  private readonly arena = new BlobArena()
  private dirty = false
  /** When the oldest unsaved change happened (ms since epoch), 0 when none is pending. */
  private dirtySince = 0
  private timer: NodeJS.Timeout | null = null
  private saving: Promise<void> = Promise.resolve()
  private closed = false
  /** The file as this process last read or wrote it: another stamp means another process (an import) wrote it. */
  private stamp: string | null = null
  private lastCheck = 0

  constructor (private readonly opts: MemoryIndexOptions = {}) {}

  /**
   * Load the file again when another process (nvd:import, nvd:sync) has replaced it since this one read or
   * wrote it, so a running server sees an import without a restart. What this process had not saved yet (an
   * on-demand fetch) gives way to the file: it is fetched again when needed.
   */
  async refresh (): Promise<boolean> {
    const file = this.opts.filePath
    const now = Date.now()
    if (file === undefined || this.closed || now - this.lastCheck < REFRESH_CHECK_MS) return false
    this.lastCheck = now
    const stamp = await fileStamp(file)
    if (stamp === null || stamp === this.stamp) return false
    await this.saving.catch(() => {})
    await this.reload()
    return true
  }

  private async reload (): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    this.dirty = false
    this.dirtySince = 0
    this.records.clear()
    this.products.clear()
    this.meta.clear()
    this.fetched.clear()
    this.decoded.clear()
    await this.load()
  }

  async upsertRaw (raw: unknown[]): Promise<number> {
    return await this.upsertRecords(normalizeAll(raw))
  }

  async upsertRecords (records: CveRecord[]): Promise<number> {
    let stored = 0
    for (const r of newestPerId(records, compareModified)) {
      const prev = this.records.get(r.id)
      if (prev !== undefined && compareModified(r.lastModified, prev.lm) < 0) continue
      const p = prepare(r)
      if (prev !== undefined) {
        const c = compareModified(r.lastModified, prev.lm)
        const oldJson = decodeJson(prev.blob)
        if (c === 0 && oldJson === p.json) continue
        const old = JSON.parse(oldJson) as CveRecord
        this.removeUses(r.id, old.rejected ? [] : criterionUses(old.configurations))
      }
      for (const u of p.uses) this.productFor(u.productKey).add(r.id, u)
      this.records.set(r.id, { lm: r.lastModified, blob: this.arena.store(encodeJson(p.json)) })
      this.decoded.delete(r.id)
      stored++
    }
    if (stored > 0) this.markDirty()
    return stored
  }

  private productFor (key: string): ProductGroups {
    let pg = this.products.get(key)
    if (pg === undefined) {
      pg = new ProductGroups()
      this.products.set(key, pg)
    }
    return pg
  }

  private removeUses (id: string, uses: CriterionUse[]): void {
    for (const u of uses) {
      const pg = this.products.get(u.productKey)
      if (pg === undefined) continue
      pg.remove(id, u)
      if (pg.size === 0) this.products.delete(u.productKey)
    }
  }

  async get (id: string): Promise<CveRecord | null> {
    return this.decode(id)
  }

  async getMany (ids: readonly string[]): Promise<Array<CveRecord | null>> {
    return ids.map((id) => this.decode(id))
  }

  private decode (id: string): CveRecord | null {
    const hit = this.decoded.get(id)
    if (hit !== undefined) return hit
    const s = this.records.get(id)
    if (s === undefined) return null
    const rec = decodeRecord(s.blob)
    if (this.decoded.size >= DECODED_CACHE_MAX) {
      const first = this.decoded.keys().next()
      if (first.done !== true) this.decoded.delete(first.value)
    }
    this.decoded.set(id, rec)
    return rec
  }

  async matchGroups (cpe: string): Promise<GroupHit[]> {
    const t = compileTarget(cpe)
    if (t === null) throw new Error(`not a CPE 2.3 name: ${cpe}`)
    const pg = this.products.get(productKeyOf(t.vendor, t.product))
    return pg === undefined ? [] : pg.match(t)
  }

  async matchHits (cpe: string): Promise<MatchHit[]> {
    return expandHits(await this.matchGroups(cpe))
  }

  async match (cpe: string): Promise<CveMatch[]> {
    const hits = await this.matchHits(cpe)
    return hitsToMatches(hits, await this.getMany(hits.map((h) => h.id)))
  }

  async knowsProduct (vendor: string, product: string): Promise<boolean> {
    const key = productKeyOf(vendor, product)
    if (this.products.has(key)) return true
    const exp = this.fetched.get(key)
    return exp !== undefined && exp > Date.now()
  }

  async markProductFetched (vendor: string, product: string, ttlSeconds: number): Promise<void> {
    this.fetched.set(productKeyOf(vendor, product), Date.now() + ttlSeconds * 1000)
    this.markDirty()
  }

  async stats (): Promise<IndexStats> {
    return { cves: this.records.size, products: this.products.size, lastSync: this.meta.get('lastSync') ?? null }
  }

  async getMeta (key: string): Promise<string | null> {
    return this.meta.get(key) ?? null
  }

  async setMeta (key: string, value: string): Promise<void> {
    this.meta.set(key, value)
    this.markDirty()
  }

  async flush (): Promise<void> {
    if (this.timer !== null) {
      clearTimeout(this.timer)
      this.timer = null
    }
    if (this.opts.filePath === undefined || !this.dirty) {
      await this.saving
      return
    }
    this.saving = this.saving.then(async () => await this.save(), async () => await this.save())
    await this.saving
  }

  async close (): Promise<void> {
    if (this.closed) return
    await this.flush()
    this.closed = true
  }

  private markDirty (): void {
    this.dirty = true
    if (this.opts.filePath === undefined || this.closed) return
    const now = Date.now()
    if (this.dirtySince === 0) this.dirtySince = now
    // Debounced: every change pushes the save back, up to the maximum delay.
    const deadline = this.dirtySince + (this.opts.maxSaveDelayMs ?? 300_000)
    const delay = Math.max(0, Math.min(this.opts.saveDelayMs ?? 2000, deadline - now))
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = null
      this.flush().catch(() => { this.dirty = true })
    }, delay)
    this.timer.unref()
  }

  /** Load the file given at open; a missing file is an empty index. */
  async load (): Promise<void> {
    const file = this.opts.filePath
    if (file === undefined) return
    try {
      await fsp.access(file)
    } catch {
      return
    }
    const head = Buffer.alloc(2)
    const fh = await fsp.open(file, 'r')
    try {
      await fh.read(head, 0, 2, 0)
    } finally {
      await fh.close()
    }
    this.stamp = await fileStamp(file)
    const raw = createReadStream(file, { highWaterMark: 1 << 20 })
    const input = head[0] === 0x1f && head[1] === 0x8b ? raw.pipe(createGunzip()) : raw
    raw.on('error', (err) => input.destroy(err))
    const rl = readline.createInterface({ input, crlfDelay: Infinity })
    let header: Header | null = null
    let lineNo = 0
    for await (const line of rl) {
      lineNo++
      if (line === '') continue
      const doc = JSON.parse(line) as Header | GroupLine | RecordLine
      if (header === null) {
        header = doc as Header
        if (header.format !== FORMAT || header.version !== FORMAT_VERSION) {
          throw new Error(`${file} is not a vulnscan NVD index file (format ${String(header.format)} v${String(header.version)})`)
        }
        for (const [k, v] of Object.entries(header.meta ?? {})) this.meta.set(k, v)
        for (const [k, v] of Object.entries(header.fetched ?? {})) if (v > Date.now()) this.fetched.set(k, v)
        continue
      }
      if ('p' in doc) {
        const pg = this.productFor(doc.p)
        for (const id of doc.ids) pg.add(id, { criterion: doc.c, productKey: doc.p })
        for (const [id, req] of doc.pf ?? []) pg.add(id, { criterion: doc.c, productKey: doc.p, requiresPlatform: req })
      } else if ('id' in doc) {
        this.records.set(doc.id, { lm: doc.lm, blob: this.arena.store(Buffer.from(doc.z, 'base64')) })
      } else {
        throw new Error(`${file}: unexpected line ${lineNo}`)
      }
    }
    if (header === null) throw new Error(`${file} is empty`)
  }

  private async save (): Promise<void> {
    const file = this.opts.filePath
    if (file === undefined) return
    // Another process replaced the file since this one read it: its data wins over this process's unsaved changes.
    const current = await fileStamp(file)
    if (current !== null && current !== this.stamp) {
      await this.reload()
      return
    }
    this.dirty = false
    this.dirtySince = 0
    // Snapshot synchronously so that writes during the save cannot mix two states in one file.
    const header: Header = {
      format: FORMAT,
      version: FORMAT_VERSION,
      meta: Object.fromEntries(this.meta),
      fetched: Object.fromEntries([...this.fetched].filter(([, v]) => v > Date.now()))
    }
    const groupLines: string[] = []
    for (const [p, pg] of this.products) {
      for (const g of pg.export()) {
        const line: GroupLine = { p, c: g.criterion, ids: g.ids }
        if (g.platform.length > 0) line.pf = g.platform
        groupLines.push(JSON.stringify(line))
      }
    }
    const records = [...this.records]
    await fsp.mkdir(path.dirname(path.resolve(file)), { recursive: true })
    const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`
    try {
      const out = createWriteStream(tmp)
      const gz: NodeJS.WritableStream = file.endsWith('.gz') ? createGzip({ level: 1 }) : new PassThrough()
      ;(gz as unknown as NodeJS.ReadableStream).pipe(out)
      // Lines are gathered into large writes: one zlib call per line would dominate the save.
      let pending = ''
      const write = async (line: string): Promise<void> => {
        pending += line + '\n'
        if (pending.length < 1 << 20) return
        const chunk = pending
        pending = ''
        if (!gz.write(chunk)) await once(gz, 'drain')
      }
      await write(JSON.stringify(header))
      for (const l of groupLines) await write(l)
      for (const [id, s] of records) {
        await write(`{"id":${JSON.stringify(id)},"lm":${JSON.stringify(s.lm)},"z":"${s.blob.toString('base64')}"}`)
      }
      if (pending !== '') gz.write(pending)
      gz.end()
      await once(out, 'close')
      const fh = await fsp.open(tmp, 'r')
      try {
        await fh.sync()
      } finally {
        await fh.close()
      }
      await fsp.rename(tmp, file)
      this.stamp = await fileStamp(file)
    } catch (err) {
      this.dirty = true
      if (this.dirtySince === 0) this.dirtySince = Date.now()
      await fsp.rm(tmp, { force: true })
      throw err
    }
  }
}

export async function createMemoryIndex (opts: MemoryIndexOptions = {}): Promise<MemoryIndex> {
  const idx = new MemoryIndex(opts)
  await idx.load()
  return idx
}
