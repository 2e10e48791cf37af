// On-demand fetch for products the index has never seen: a scan finds, say, `acme:widget`, the
// local index has no criteria naming it, so its CVEs are fetched from NVD by virtualMatchString
// before matching. NVD being down must not fail the scan: failures are reported, never thrown.

import { NvdApiError } from './client'
import { META_AUTHORITATIVE, type SyncClient, upsertTolerant } from './sync'
import type { CveIndex } from './types'

/** Until when on-demand fetches are not tried after the NVD failed; in the index, so every worker on it shares it. */
export const META_BACKOFF = 'onDemandBackoffUntil'
/** Why a product missing from a partial index is not checked while on-demand fetches are off. */
export const PARTIAL_INDEX = 'not in the local index, which is partial, and NVD_ON_DEMAND=false: import the whole feed set (nvd:import --complete) or turn on-demand fetches on'

export interface ProductRef {
  vendor: string
  product: string
}

export interface EnsureProductsOptions {
  client: SyncClient
  index: CveIndex
  products: ProductRef[]
  /** How long "fetched, NVD had nothing more" is trusted before asking NVD again. */
  ttlSeconds: number
  signal?: AbortSignal
  logger?: { warn: (msg: string) => void }
  /** Records held in memory per product before they are stored (default 20000). */
  maxHeldRecords?: number
  /** false: never fetch; products the index lacks have no known CVEs (air-gapped installs). Default true. */
  onDemand?: boolean
  /** How long a failed fetch keeps every worker from asking the NVD again (default 300 s). */
  backoffSeconds?: number
  now?: () => number
}

export interface EnsureProductsResult {
  /** Already known to the index; nothing was fetched. */
  known: ProductRef[]
  /** Fetched now; `records` is how many CVE records NVD returned for it (0 is a valid answer). */
  fetched: Array<ProductRef & { records: number }>
  /** Could not be fetched (NVD unreachable, refused, aborted, or an invalid name); matching goes on without them. */
  failed: Array<ProductRef & { error: string }>
  /** Not in the index and not fetched, because the index is authoritative or on-demand fetching is off: no known CVEs. */
  absent: ProductRef[]
}

/** A CPE attribute in formatted-string form: no unescaped colon, wildcard or whitespace. */
const CPE_VALUE = /^(?:[^:\s\\*?]|\\[^\s])+$/

function failureReason (err: unknown): string {
  if (err instanceof NvdApiError) return err.message
  if (err instanceof Error) return err.name === 'AbortError' ? 'aborted' : err.message
  return String(err)
}

/**
 * When NVD cannot be reached at all (or keeps failing after every retry), asking again for each
 * remaining product only multiplies the wait; a refusal of one query (404) says nothing about the next.
 */
function nvdIsDown (err: unknown): boolean {
  return err instanceof NvdApiError ? err.retryable : true
}

export async function ensureProducts (opts: EnsureProductsOptions): Promise<EnsureProductsResult> {
  const { client, index, ttlSeconds, signal } = opts
  const maxHeldRecords = opts.maxHeldRecords ?? 20_000
  const result: EnsureProductsResult = { known: [], fetched: [], failed: [], absent: [] }
  const now = opts.now ?? Date.now
  const seen = new Set<string>()
  const todo: ProductRef[] = []
  for (const p of opts.products) {
    const key = p.vendor.toLowerCase() + ':' + p.product.toLowerCase()
    if (seen.has(key)) continue
    seen.add(key)
    if (!CPE_VALUE.test(p.vendor) || !CPE_VALUE.test(p.product)) {
      result.failed.push({ ...p, error: 'not a CPE vendor/product name' })
      continue
    }
    try {
      if (await index.knowsProduct(p.vendor, p.product)) result.known.push(p)
      else todo.push(p)
    } catch (err) {
      result.failed.push({ ...p, error: `index unavailable: ${failureReason(err)}` })
    }
  }

  if (todo.length === 0) return result
  let downReason: string | null = null
  try {
    // Only an index filled from the whole feed set (nvd:import --complete, or a full sync) may say that a product it has
    // never seen has no CVEs. A partial one, with on-demand fetches off, cannot: such a product is not checked.
    if (await index.getMeta(META_AUTHORITATIVE) !== null) {
      result.absent.push(...todo)
      return result
    }
    if (opts.onDemand === false) {
      for (const p of todo) result.failed.push({ ...p, error: PARTIAL_INDEX })
      return result
    }
    const until = Date.parse(await index.getMeta(META_BACKOFF) ?? '')
    if (until > now()) downReason = `not tried: the NVD failed recently; on-demand fetches resume after ${new Date(until).toISOString()}`
  } catch (err) {
    downReason = `index unavailable: ${failureReason(err)}`
  }
  for (const p of todo) {
    if (downReason === null && signal?.aborted === true) downReason = 'aborted'
    if (downReason !== null) {
      result.failed.push({ ...p, error: downReason })
      continue
    }
    let records = 0
    try {
      const query = { virtualMatchString: `cpe:2.3:*:${p.vendor.toLowerCase()}:${p.product.toLowerCase()}` }
      // The index counts a product as known once it holds any criteria naming it, so a listing cut
      // short must not be stored: pages are held until the last one arrives. Past the bound (a
      // product with a huge history) they are stored as they come, trading that guarantee for memory.
      let held: unknown[] = []
      for await (const page of client.cvePages(query, { signal })) {
        records += page.cves.length
        held.push(...page.cves)
        if (held.length > maxHeldRecords) {
          await upsertTolerant(index, held)
          held = []
        }
      }
      await upsertTolerant(index, held)
      // Only a complete listing may be remembered as fetched; a partial one is retried next time.
      await index.markProductFetched(p.vendor, p.product, ttlSeconds)
      result.fetched.push({ ...p, records })
    } catch (err) {
      const reason = failureReason(err)
      opts.logger?.warn(`on-demand NVD fetch for ${p.vendor}:${p.product} failed: ${reason}`)
      result.failed.push({ ...p, error: signal?.aborted === true ? 'aborted' : reason })
      if (signal?.aborted === true) downReason = 'aborted'
      else if (nvdIsDown(err)) {
        downReason = `not tried: NVD failed for ${p.vendor}:${p.product} (${reason})`
        const until = new Date(now() + (opts.backoffSeconds ?? 300) * 1000).toISOString()
        await index.setMeta(META_BACKOFF, until).catch(() => {})
      }
    }
  }
  return result
}
