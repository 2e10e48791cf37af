// The NVD side of a scan, in one object: the local index, the API client, and the on-demand fetch
// that fills the index for products it has never seen before matching.
import { createNvdClient, type NvdClient } from './client'
import type { LocalCveIndex } from './cve-index'
import { ensureProducts, type EnsureProductsResult, type ProductRef } from './on-demand'
import type { Config } from '../config'

export interface NvdServiceOptions {
  /** The index to fill and match against; its owner (lib/backends.ts) closes it. */
  index: LocalCveIndex
  apiUrl: string
  apiKey?: string
  requestsPerWindow?: number
  productTtlSeconds: number
  /** false: never fetch from the NVD during a scan (air-gapped installs). Default true. */
  onDemand?: boolean
  /** How long a failed fetch keeps every worker on this index from asking the NVD again. Default 300. */
  backoffSeconds?: number
  logger?: { info: (msg: string) => void, warn: (msg: string) => void }
}

export interface NvdService {
  index: LocalCveIndex
  client: NvdClient
  /** Fetch from the NVD the products the index does not know yet; never throws for NVD trouble. */
  ensure(products: ProductRef[], signal?: AbortSignal): Promise<EnsureProductsResult>
}

export function createNvdService (opts: NvdServiceOptions): NvdService {
  const index = opts.index
  // A scan waits on this client: an NVD outage must cost seconds, not the minutes of retries a sync can afford.
  const client = createNvdClient({
    baseUrl: opts.apiUrl,
    apiKey: opts.apiKey,
    requestsPerWindow: opts.requestsPerWindow,
    maxRetries: 1,
    retryBaseMs: 500,
    retryMaxMs: 2000,
    maxRetryAfterMs: 10_000,
    timeoutMs: 20_000,
    logger: opts.logger
  })
  return {
    index,
    client,
    ensure: (products, signal) => ensureProducts({
      client, index, products, ttlSeconds: opts.productTtlSeconds, signal, logger: opts.logger, onDemand: opts.onDemand, backoffSeconds: opts.backoffSeconds
    })
  }
}

/** The service as the configuration sets it up: the API process and the worker build it the same way. */
export function nvdServiceFor (config: Config, index: LocalCveIndex, logger: NvdServiceOptions['logger']): NvdService {
  return createNvdService({
    index,
    apiUrl: config.NVD_API_URL,
    apiKey: config.NVD_API_KEY,
    requestsPerWindow: config.NVD_RATE_LIMIT,
    productTtlSeconds: config.NVD_PRODUCT_TTL,
    onDemand: config.NVD_ON_DEMAND,
    backoffSeconds: config.NVD_BACKOFF,
    logger
  })
}
