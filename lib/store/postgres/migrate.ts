// Creates and upgrades the results schema with node-pg-migrate (SQL migrations beside this file). Every API and
// worker process runs it on start; the tool's advisory lock, in wait mode, lets one process migrate while the
// others starting at the same moment wait for it and then find nothing left to do.
import { join } from 'node:path'
import type { Client } from 'pg'

export const MIGRATIONS_DIR = join(__dirname, 'migrations')

export interface MigrateLogger {
  info(msg: string): void
}

/** Bring `schema` up to the newest migration on a connected client of the caller's (left open). */
export async function migrateResults (client: Client, schema: string, log?: MigrateLogger): Promise<string[]> {
  // node-pg-migrate is an ES module: loaded on demand from this CommonJS code.
  const { runner } = await import('node-pg-migrate')
  const ran = await runner({
    dbClient: client,
    schema,
    createSchema: true,
    migrationsTable: 'pgmigrations',
    dir: MIGRATIONS_DIR,
    direction: 'up',
    checkOrder: true,
    singleTransaction: true,
    advisoryLockMode: 'wait',
    log: () => {}
  })
  for (const m of ran) log?.info(`results database: migration ${m.name} applied to schema ${schema}`)
  return ran.map((m) => m.name)
}
