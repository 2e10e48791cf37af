// Opens the source store an import command writes to: Redis when REDIS_URL is set, otherwise the
// embedded file beside the NVD index file (until the configuration names one of its own).

import path from 'node:path'
import { Redis } from 'ioredis'
import { createMemorySourceStore } from '../lib/sources/memory'
import { createRedisSourceStore } from '../lib/sources/redis'
import type { SourceStore } from '../lib/sources/source-store'
import { loadConfig } from '../plugins/env'

export interface OpenedSourceStore {
  store: SourceStore
  /** `redis` or the file's path, for the command to say where it wrote. */
  where: string
  close: () => Promise<void>
}

export async function openSourceStore (): Promise<OpenedSourceStore> {
  const cfg = loadConfig()
  if (cfg.REDIS_URL !== undefined && cfg.REDIS_URL !== '') {
    const redis = new Redis(cfg.REDIS_URL, { maxRetriesPerRequest: 3 })
    const store = createRedisSourceStore({ redis, prefix: cfg.REDIS_PREFIX + ':' })
    return { store, where: 'redis', close: async () => { await store.close(); await redis.quit() } }
  }
  const filePath = path.join(path.dirname(cfg.NVD_INDEX_FILE), 'sources.ndjson.gz')
  const store = await createMemorySourceStore({ filePath })
  return { store, where: 'file ' + filePath, close: async () => { await store.close() } }
}
