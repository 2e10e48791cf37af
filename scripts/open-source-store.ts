// Opens the source store an import command writes to, through openBackends like every other process:
// Redis when REDIS_URL is set, otherwise the embedded file SOURCES_FILE.

import pino from 'pino'
import { openBackends } from '../lib/backends'
import { loadConfig, type Config } from '../lib/config'
import type { SourceStore } from '../lib/sources/source-store'

export interface OpenedSourceStore {
  store: SourceStore
  config: Config
  /** `redis` or the file's path, for the command to say where it wrote. */
  where: string
  close: () => Promise<void>
}

export async function openSourceStore (): Promise<OpenedSourceStore> {
  const config = loadConfig()
  const backends = await openBackends(config, pino({ level: 'warn' }, pino.destination(2)), { results: false })
  const store = backends.indexes.sources
  const where = backends.kind === 'redis' ? 'redis' : config.SOURCES_FILE !== '' ? `file ${config.SOURCES_FILE}` : 'memory only (SOURCES_FILE is empty)'
  return {
    store,
    config,
    where,
    close: async () => {
      await store.flush()
      await backends.close()
    }
  }
}
