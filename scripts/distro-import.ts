// npm run distro:import -- <Debian tracker JSON | URL> [--ubuntu <file | directory | URL>]
// Imports distribution tracker data into the source store (Redis when REDIS_URL is set,
// otherwise the embedded file beside the NVD index).

import path from 'node:path'
import { Redis } from 'ioredis'
import { runDistroImport } from '../lib/distro/import-command'
import { createMemorySourceStore } from '../lib/sources/memory'
import { createRedisSourceStore } from '../lib/sources/redis'
import type { SourceStore } from '../lib/sources/source-store'
import { loadConfig } from '../plugins/env'

async function openStore (): Promise<{ store: SourceStore, close: () => Promise<void> }> {
  const cfg = loadConfig()
  if (cfg.REDIS_URL !== undefined && cfg.REDIS_URL !== '') {
    const redis = new Redis(cfg.REDIS_URL, { maxRetriesPerRequest: 3 })
    const store = createRedisSourceStore({ redis, prefix: cfg.REDIS_PREFIX + ':' })
    return { store, close: async () => { await store.close(); redis.disconnect() } }
  }
  const store = await createMemorySourceStore({ filePath: path.join(path.dirname(cfg.NVD_INDEX_FILE), 'sources.json.gz') })
  return { store, close: async () => { await store.flush(); await store.close() } }
}

async function main (): Promise<number> {
  const { store, close } = await openStore()
  try {
    return await runDistroImport(process.argv.slice(2).filter((a) => a !== '--'), store,
      (line) => process.stdout.write(line + '\n'), (line) => process.stderr.write(line + '\n'))
  } finally {
    await close()
  }
}

main().then((code) => { process.exitCode = code }, (err: Error) => {
  process.stderr.write(`${err.message}\n`)
  process.exitCode = 1
})
