// A scan reads the same few entries of the source store for every port running the same product (one
// tracker entry per source package, the same CVE records, the same KEV and EPSS rows) while the store
// changes only when an import runs. This wrapper keeps what was read until the store's revision moves,
// looking at the revision at most once per `checkEveryMs`: an import reaches matching within that time,
// and a port costs no round trip for data read before.

import type { Entry, SourceStore } from './source-store'

export interface ReadCacheOptions {
  /** Entries kept, least recently used dropped first (default 100,000). */
  maxEntries?: number
  /** How long a revision read is trusted (default 1000 ms). */
  checkEveryMs?: number
}

const SEP = '\u0000'

export interface ReadCachedStore extends SourceStore {
  /** Look at the revision on the next read whatever the interval (a worker does at the start of each batch). */
  recheck(): void
}

export function withReadCache (inner: SourceStore, opts: ReadCacheOptions = {}): ReadCachedStore {
  const maxEntries = opts.maxEntries ?? 100_000
  const checkEveryMs = opts.checkEveryMs ?? 1000
  const cache = new Map<string, string | null>()
  let revision: string | null = null
  let checkedAt = 0
  let checking: Promise<void> | null = null

  const fresh = async (): Promise<void> => {
    if (Date.now() - checkedAt < checkEveryMs) return
    checking ??= inner.revision().then((r) => {
      checkedAt = Date.now()
      if (r !== revision) cache.clear()
      revision = r
    }).finally(() => { checking = null })
    await checking
  }
  const remember = (key: string, value: string | null): void => {
    cache.set(key, value)
    if (cache.size > maxEntries) cache.delete(cache.keys().next().value as string)
  }
  const hit = (key: string): string | null | undefined => {
    const v = cache.get(key)
    if (v === undefined) return undefined
    // Most recently used moves to the end of the Map's order.
    cache.delete(key)
    cache.set(key, v)
    return v
  }
  // A write from this process: what was cached may be stale, and the next read must see the revision move.
  const wrote = async <T>(p: Promise<T>): Promise<T> => {
    const out = await p
    cache.clear()
    checkedAt = 0
    return out
  }

  return {
    recheck () {
      checkedAt = 0
    },
    async get (table, key) {
      await fresh()
      const k = table + SEP + key
      const v = hit(k)
      if (v !== undefined) return v
      const got = await inner.get(table, key)
      remember(k, got)
      return got
    },
    async getMany (table, keys) {
      await fresh()
      const out: Array<string | null> = new Array(keys.length)
      const missing: number[] = []
      keys.forEach((key, i) => {
        const v = hit(table + SEP + key)
        if (v === undefined) missing.push(i)
        else out[i] = v
      })
      if (missing.length > 0) {
        const got = await inner.getMany(table, missing.map((i) => keys[i]))
        missing.forEach((i, j) => {
          out[i] = got[j]
          remember(table + SEP + keys[i], got[j])
        })
      }
      return out
    },
    put: async (table, entries: Iterable<Entry>) => await wrote(inner.put(table, entries)),
    delete: async (table, keys) => await wrote(inner.delete(table, keys)),
    clear: async (table) => await wrote(inner.clear(table)),
    replace: async (table, batches) => await wrote(inner.replace(table, batches)),
    setMeta: async (key, value) => await wrote(inner.setMeta(key, value)),
    count: async (table) => await inner.count(table),
    scan: (table, batchSize) => inner.scan(table, batchSize),
    async getMeta (key) {
      await fresh()
      const k = SEP + 'meta' + SEP + key
      const v = hit(k)
      if (v !== undefined) return v
      const got = await inner.getMeta(key)
      remember(k, got)
      return got
    },
    revision: async () => await inner.revision(),
    ...(inner.tables !== undefined ? { tables: async () => await (inner.tables as () => Promise<string[]>)() } : {}),
    ...(inner.allMeta !== undefined ? { allMeta: async () => await (inner.allMeta as () => Promise<Array<[string, string]>>)() } : {}),
    flush: async () => await inner.flush(),
    close: async () => await inner.close()
  }
}
