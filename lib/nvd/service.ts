// The NVD side of a scan, in one object: the local index, the API client, and the on-demand fetch
// that fills the index for products it has never seen before matching.
import type { Redis } from 'ioredis'
import { createNvdClient, type NvdClient } from './client'
import { createCveIndex, type LocalCveIndex } from './index'
import { ensureProducts, type EnsureProductsResult, type ProductRef } from './on-demand'

export interface NvdServiceOptions {
  redis?: Redis
  /** Application prefix (REDIS_PREFIX); the index writes under `<prefix>:nvd:`. */
  prefix: string
  /** File backing the embedded index; '' keeps it in memory only. */
  indexFile: string
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
  close(): Promise<void>
}

export async function createNvdService (opts: NvdServiceOptions): Promise<NvdService> {
  // The Redis index writes with WATCH transactions, whose state belongs to the connection: it gets one
  // of its own, so nobody else's MULTI/EXEC on a shared connection can clear its watch.
  const redis = opts.redis?.duplicate({ enableAutoPipelining: false })
  const index = await createCveIndex({
    redis,
    prefix: opts.prefix + ':',
    ...(redis === undefined && opts.indexFile !== '' ? { filePath: opts.indexFile } : {})
  })
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
    }),
    close: async () => {
      await index.close()
      redis?.disconnect()
    }
  }
}
