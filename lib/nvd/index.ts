// One entry point for the CVE index: Redis when a connection is given, otherwise the embedded
// in-memory index (persisted to filePath when one is given).

import type { Redis } from 'ioredis'
import { createMemoryIndex } from './index-memory'
import { createRedisIndex } from './index-redis'
import type { LocalCveIndex } from './index-common'

export { createMemoryIndex, MemoryIndex, type MemoryIndexOptions } from './index-memory'
export { createRedisIndex, RedisIndex, type RedisIndexOptions } from './index-redis'
export type { LocalCveIndex } from './index-common'

export interface CveIndexOptions {
  redis?: Redis
  /** Application key prefix for Redis (e.g. `vulnscan:`); the index writes under `<prefix>nvd:`. */
  prefix: string
  /** File backing the embedded index; ignored with Redis. */
  filePath?: string
}

export async function createCveIndex (opts: CveIndexOptions): Promise<LocalCveIndex> {
  if (opts.redis !== undefined) return createRedisIndex({ redis: opts.redis, prefix: opts.prefix })
  return await createMemoryIndex(opts.filePath !== undefined ? { filePath: opts.filePath } : {})
}
