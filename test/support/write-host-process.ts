// A process of its own that writes one host through the results store, as a worker would, then exits: what
// another process's host page cache must hear about. Configured by environment: REDIS_URL, REDIS_PREFIX,
// DATABASE_URL, DATABASE_SCHEMA, and WRITE_ADDRESS and WRITE_AT for the host.
import { loadConfig } from '../../lib/config'
import { openBackends } from '../../lib/backends'
import { write } from './results'

async function main (): Promise<void> {
  const env = process.env
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    REDIS_URL: env.REDIS_URL,
    REDIS_PREFIX: env.REDIS_PREFIX,
    QUEUE_PREFIX: `${env.REDIS_PREFIX ?? 'vulnscan'}-bull`,
    DATABASE_URL: env.DATABASE_URL,
    DATABASE_SCHEMA: env.DATABASE_SCHEMA,
    NVD_INDEX_FILE: '',
    SOURCES_FILE: ''
  }, {})
  const backends = await openBackends(config, { warn: () => {} })
  try {
    await backends.results.recordHost(write({
      address: env.WRITE_ADDRESS ?? '',
      at: Date.parse(env.WRITE_AT ?? ''),
      services: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }]
    }))
  } finally {
    await backends.close()
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`)
  process.exit(1)
})
