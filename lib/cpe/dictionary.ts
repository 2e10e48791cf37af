// Renamed products from the NVD's CPE dictionary (CPE API 2.0, `/cpes/2.0`): a deprecated CPE name lists the names
// that replaced it (`deprecatedBy`). Where the replacement names another vendor:product (nginx:nginx → f5:nginx, a
// product renamed after an acquisition), the pair is a rename, and the alias table learns it from the data instead
// of by hand: the hand-kept aliases (aliases.ts) stay, the imported ones add to them. Renames are stored both ways
// (old → new, new → old), so a scanner that knows either name finds the CVEs filed under the other.

import { createReadStream } from 'node:fs'
import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { createGunzip } from 'node:zlib'
import type { SourceStore } from '../sources/source-store'
import { parseCpe, unescapeCpeValue } from './name'

export const CPE_ALIAS_TABLE = 'cpe-alias'
export const CPE_ALIAS_META = 'cpe-alias:import'

/** One dictionary entry as the CPE API 2.0 gives it (`products[].cpe`), the fields read here. */
export interface DictionaryEntry {
  cpeName: string
  deprecated: boolean
  deprecatedBy: string[]
}

/** An imported alias: the other name, which way the rename went, and a dictionary entry that shows it. */
export interface ImportedAlias {
  vendor: string
  product: string
  /** `renamed-to`: the key's name was deprecated by this one; `renamed-from`: this one was deprecated by the key's. */
  relation: 'renamed-to' | 'renamed-from'
  /** The deprecated CPE name that shows the rename, and what deprecated it. */
  deprecated: string
  by: string
}

/** vendor:product of a CPE 2.3 name, unescaped and lower case; null when it is not one. */
export function pairOf (cpe: string): { vendor: string, product: string } | null {
  const p = parseCpe(cpe)
  if (p === null || p.vendor === '*' || p.product === '*') return null
  return { vendor: unescapeCpeValue(p.vendor).toLowerCase(), product: unescapeCpeValue(p.product).toLowerCase() }
}

/** The entries of one CPE API 2.0 response page; entries that are not objects with a cpeName are skipped. */
export function entriesOfPage (page: unknown): DictionaryEntry[] {
  const products = (page as { products?: unknown } | null)?.products
  if (!Array.isArray(products)) throw new Error('not a CPE API 2.0 response: no products[]')
  const out: DictionaryEntry[] = []
  for (const p of products) {
    const cpe = (p as { cpe?: Record<string, unknown> } | null)?.cpe
    if (cpe === undefined || cpe === null || typeof cpe.cpeName !== 'string') continue
    const by = Array.isArray(cpe.deprecatedBy)
      ? cpe.deprecatedBy.map((d) => (d as { cpeName?: unknown } | null)?.cpeName).filter((n): n is string => typeof n === 'string')
      : []
    out.push({ cpeName: cpe.cpeName, deprecated: cpe.deprecated === true, deprecatedBy: by })
  }
  return out
}

/** Collects the renames a stream of dictionary entries shows. */
export class RenameCollector {
  /** `old vendor:product` → `new vendor:product` → the first entry that showed it. */
  readonly renames = new Map<string, Map<string, { deprecated: string, by: string }>>()
  entries = 0
  deprecated = 0

  add (e: DictionaryEntry): void {
    this.entries++
    if (!e.deprecated) return
    this.deprecated++
    const from = pairOf(e.cpeName)
    if (from === null) return
    const fromKey = `${from.vendor}:${from.product}`
    for (const name of e.deprecatedBy) {
      const to = pairOf(name)
      if (to === null) continue
      const toKey = `${to.vendor}:${to.product}`
      if (toKey === fromKey) continue
      let m = this.renames.get(fromKey)
      if (m === undefined) this.renames.set(fromKey, m = new Map())
      if (!m.has(toKey)) m.set(toKey, { deprecated: e.cpeName, by: name })
    }
  }

  /** The alias rows: each product key with every name it was renamed to or from. */
  aliases (): Map<string, ImportedAlias[]> {
    const out = new Map<string, ImportedAlias[]>()
    const push = (key: string, a: ImportedAlias): void => {
      const list = out.get(key) ?? []
      if (!list.some((x) => x.vendor === a.vendor && x.product === a.product)) list.push(a)
      out.set(key, list)
    }
    for (const [fromKey, targets] of this.renames) {
      const [fv, fp] = splitKey(fromKey)
      for (const [toKey, shown] of targets) {
        const [tv, tp] = splitKey(toKey)
        push(fromKey, { vendor: tv, product: tp, relation: 'renamed-to', ...shown })
        push(toKey, { vendor: fv, product: fp, relation: 'renamed-from', ...shown })
      }
    }
    return out
  }

  /** How many vendor:product renames were found. */
  get count (): number {
    let n = 0
    for (const m of this.renames.values()) n += m.size
    return n
  }
}

function splitKey (key: string): [string, string] {
  const i = key.indexOf(':')
  return [key.slice(0, i), key.slice(i + 1)]
}

export interface AliasImportResult {
  entries: number
  deprecated: number
  renames: number
  products: number
}

/** Replace the imported aliases with what the collector found, and note the import. */
export async function writeAliases (store: SourceStore, c: RenameCollector, from: string, now = new Date()): Promise<AliasImportResult> {
  const rows = c.aliases()
  const entries = [...rows].map(([k, list]) => [k, JSON.stringify(list)] as [string, string])
  await store.replace(CPE_ALIAS_TABLE, [entries])
  const result = { entries: c.entries, deprecated: c.deprecated, renames: c.count, products: rows.size }
  await store.setMeta(CPE_ALIAS_META, JSON.stringify({ importedAt: now.toISOString(), from, ...result }))
  await store.flush()
  return result
}

/** The imported aliases of some vendor:product keys (unescaped, lower case), in the keys' order. */
export async function readAliases (store: SourceStore, keys: readonly string[]): Promise<ImportedAlias[][]> {
  if (keys.length === 0) return []
  const texts = await store.getMany(CPE_ALIAS_TABLE, keys)
  return texts.map((t) => t === null ? [] : JSON.parse(t) as ImportedAlias[])
}

async function readJsonFile (file: string): Promise<unknown> {
  const chunks: Buffer[] = []
  const stream = file.endsWith('.gz') ? createReadStream(file).pipe(createGunzip()) : createReadStream(file)
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8'))
}

/** Every page file of a path: one JSON (or .json.gz) page, or a directory of them in name order. */
export async function pageFiles (p: string): Promise<string[]> {
  if (!(await stat(p)).isDirectory()) return [p]
  const names = (await readdir(p)).filter((n) => /\.json(\.gz)?$/.test(n)).sort()
  return names.map((n) => path.join(p, n))
}

/** Collect the renames of saved CPE API 2.0 pages (a file, or a directory of pages). */
export async function collectFromFiles (p: string, c = new RenameCollector()): Promise<RenameCollector> {
  for (const file of await pageFiles(p)) for (const e of entriesOfPage(await readJsonFile(file))) c.add(e)
  return c
}

export interface CpeApiOptions {
  /** The NVD API base (NVD_API_URL): `<base>/cpes/2.0`. */
  baseUrl: string
  apiKey?: string
  /** Entries per page (the API allows 10,000). */
  pageSize?: number
  /** Pause between pages, to keep inside the NVD's rolling window (6 s without a key, 0.6 s with one). */
  pauseMs?: number
  signal?: AbortSignal
  /** Told after each page. */
  progress?: (seen: number, total: number) => void
  fetch?: typeof fetch
}

/** Page through the CPE API and collect its renames. */
export async function collectFromApi (opts: CpeApiOptions, c = new RenameCollector()): Promise<RenameCollector> {
  const size = opts.pageSize ?? 10_000
  const doFetch = opts.fetch ?? fetch
  const pause = opts.pauseMs ?? (opts.apiKey !== undefined ? 600 : 6000)
  let start = 0
  for (;;) {
    const url = `${opts.baseUrl.replace(/\/+$/, '')}/cpes/2.0?resultsPerPage=${size}&startIndex=${start}`
    const res = await doFetch(url, { headers: opts.apiKey !== undefined ? { apiKey: opts.apiKey } : {}, signal: opts.signal ?? AbortSignal.timeout(120_000) })
    if (!res.ok) throw new Error(`CPE API answered ${res.status} at startIndex ${start}`)
    const page = await res.json() as { totalResults?: unknown, resultsPerPage?: unknown }
    const entries = entriesOfPage(page)
    for (const e of entries) c.add(e)
    const total = typeof page.totalResults === 'number' ? page.totalResults : 0
    start += entries.length
    opts.progress?.(start, total)
    if (entries.length === 0 || start >= total) return c
    if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause))
  }
}
