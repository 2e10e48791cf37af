// Run by tap before every test run (package.json "tap.before"): removes what test files killed before their teardown
// (a per-file timeout, a crash, Ctrl-C) left behind. Only by age, so that runs going on beside this one are untouched:
// Redis keys under the test prefixes that nothing touched for SWEEP_AGE, and results schemas created that long ago
// (their names carry the creation time: uniqueSchema in test/helper.ts). Never fails the run: a missing Redis or
// PostgreSQL is the tests' business.
import { Redis } from 'ioredis'
import { Client } from 'pg'
import { DATABASE_TEST_URL, databaseAnswers, REDIS_TEST_URL } from '../helper'

const AGE_S = Number(process.env.TEST_SWEEP_AGE_S ?? 6 * 3600)

async function sweepRedis (): Promise<number> {
  const redis = new Redis(REDIS_TEST_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 })
  redis.on('error', () => {})
  let removed = 0
  try {
    await redis.connect()
    for (const pattern of ['vulnscan-test:*', 'vulnscan-test.*']) {
      let cursor = '0'
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
        cursor = next
        if (keys.length === 0) continue
        const idle = await Promise.all(keys.map(async (k) => await redis.object('IDLETIME', k) as number | null))
        const stale = keys.filter((_, i) => (idle[i] ?? 0) >= AGE_S)
        if (stale.length > 0) removed += await redis.unlink(...stale)
      } while (cursor !== '0')
    }
  } catch {
    // No Redis: nothing to sweep.
  } finally {
    redis.disconnect()
  }
  return removed
}

async function sweepSchemas (): Promise<number> {
  const db = new Client({ connectionString: DATABASE_TEST_URL, connectionTimeoutMillis: 2000 })
  db.on('error', () => {})
  let removed = 0
  try {
    await db.connect()
    const { rows } = await db.query<{ name: string }>("SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE 'test\\_%'")
    const cutoff = Date.now() - AGE_S * 1000
    for (const { name } of rows) {
      const stamp = /_t([0-9a-z]{6,10})_[0-9a-f]{8}$/.exec(name)?.[1]
      if (stamp === undefined || parseInt(stamp, 36) > cutoff) continue
      await db.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`)
      removed++
    }
  } catch {
    // No PostgreSQL, or no test database yet: nothing to sweep.
  } finally {
    await db.end().catch(() => {})
  }
  return removed
}

async function main (): Promise<void> {
  // The test database is made once here, before files that run side by side would race to make it.
  await databaseAnswers().catch(() => false)
  const [keys, schemas] = await Promise.all([sweepRedis(), sweepSchemas()])
  if (keys + schemas > 0) console.log(`# swept what killed test files left: ${keys} Redis keys, ${schemas} results schemas (older than ${AGE_S} s)`)
}

void main()
