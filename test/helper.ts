// Builds the app for tests: explicit config (tests never write process.env), a Redis key prefix, a BullMQ
// prefix and a results schema of its own per test, and a cleanup that deletes only those.
import Fastify, { type FastifyInstance } from 'fastify'
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { Client } from 'pg'
import app, { serverOptions } from '../app'
import { loadConfig, type Config } from '../lib/config'
import { BACKEND_KINDS, openBackends, type BackendKind, type Backends } from '../lib/backends'

export const SERVICE_KEY = 'test-service-key-0123456789abcdef'
/** CREDENTIALS_KEY of the tests' scaled deployments (each on a prefix of its own, so each has its own secrets). */
export const TEST_CREDENTIALS_KEY = '7e57c4ed'.repeat(8)
export const REDIS_TEST_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379'
/** The PostgreSQL database the tests' results schemas live in (created when missing); each test has its own schema. */
export const DATABASE_TEST_URL = process.env.DATABASE_TEST_URL ?? 'postgres://postgres@127.0.0.1:5432/vulnscan_test'

export type Backend = BackendKind

interface Tap {
  teardown(fn: () => unknown): void
  skip?: unknown
}

let redisAvailable: Promise<boolean> | undefined

/** Whether the test Redis answers. With CI=true a missing Redis is an error, never a skip. */
export function redisAnswers (): Promise<boolean> {
  redisAvailable ??= (async () => {
    const probe = new Redis(REDIS_TEST_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2000 })
    try {
      await probe.connect()
      await probe.ping()
      return true
    } catch {
      if (process.env.CI === 'true') throw new Error(`CI=true and no Redis answers at ${REDIS_TEST_URL}`)
      return false
    } finally {
      probe.disconnect()
    }
  })()
  return redisAvailable
}

let databaseAvailable: Promise<boolean> | undefined

/**
 * Whether the test PostgreSQL answers, creating the test database when it is missing. With CI=true a missing
 * PostgreSQL is an error, never a skip.
 */
export function databaseAnswers (): Promise<boolean> {
  databaseAvailable ??= (async () => {
    try {
      await ensureDatabase(DATABASE_TEST_URL)
      return true
    } catch (err) {
      if (process.env.CI === 'true') throw new Error(`CI=true and no PostgreSQL answers at ${DATABASE_TEST_URL}: ${(err as Error).message}`)
      return false
    }
  })()
  return databaseAvailable
}

async function ensureDatabase (url: string): Promise<void> {
  const probe = new Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  probe.on('error', () => {})
  try {
    await probe.connect()
    return
  } catch (err) {
    // 3D000: the database does not exist yet. Anything else (nothing listening, refused login) is final.
    if ((err as { code?: string }).code !== '3D000') throw err
  } finally {
    await probe.end().catch(() => {})
  }
  const target = new URL(url)
  const name = decodeURIComponent(target.pathname.slice(1))
  target.pathname = '/postgres'
  const admin = new Client({ connectionString: target.toString(), connectionTimeoutMillis: 2000 })
  admin.on('error', () => {})
  try {
    await admin.connect()
    await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`)
  } catch (err) {
    // Another test file created it first: 42P04 duplicate_database, or 23505 when both raced the catalog.
    if (!['42P04', '23505'].includes((err as { code?: string }).code ?? '')) throw err
  } finally {
    await admin.end().catch(() => {})
  }
}

/** A results schema name of its own (DATABASE_SCHEMA), like a key prefix. */
export function uniqueSchema (name: string): string {
  // The creation time in the name (base 36 ms, after `_t`) lets test/support/sweep.ts drop schemas that a killed file left.
  return `test_${name.replace(/[^a-z0-9]/g, '_')}_t${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`
}

/** Drop a test's results schema (it may never have been created). */
export async function dropSchema (schema: string, url = DATABASE_TEST_URL): Promise<void> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  c.on('error', () => {})
  try {
    await c.connect()
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  } finally {
    await c.end().catch(() => {})
  }
}

/**
 * The backends to run a contract test against: every one openBackends knows; the scaled one (Redis and
 * PostgreSQL) when both answer (always under CI). VULNSCAN_TEST_BACKENDS (a comma list) narrows them: the fast
 * `npm test` runs the contract tests on the embedded backend, `npm run test:all` on both.
 */
export async function backends (): Promise<Backend[]> {
  const only = (process.env.VULNSCAN_TEST_BACKENDS ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')
  const wanted = only.length > 0 ? BACKEND_KINDS.filter((kind) => only.includes(kind)) : BACKEND_KINDS
  if (!wanted.includes('redis')) return wanted
  const [redis, database] = await Promise.all([redisAnswers(), databaseAnswers()])
  return wanted.filter((kind) => kind !== 'redis' || (redis && database))
}

/** What a test configuration needs for the results database: the test database and a schema of its own. */
function databaseOverrides (name: string): Partial<Config> {
  return { DATABASE_URL: DATABASE_TEST_URL, DATABASE_SCHEMA: uniqueSchema(name), DATABASE_POOL_MAX: 4 }
}

/**
 * Open one backend as the service would, on a key prefix of its own (unless `overrides` names one). The caller
 * purges and closes it, or lets openBackendsIn hand that to the test.
 */
export async function openBackendsFor (kind: Backend, overrides: Partial<Config> = {}): Promise<Backends> {
  // The test database is created on first use (a fresh machine has none).
  if (kind === 'redis' && (overrides.DATABASE_URL ?? DATABASE_TEST_URL) === DATABASE_TEST_URL) await databaseAnswers()
  const prefix = uniquePrefix('backends').replace(/:/g, '.')
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    REDIS_PREFIX: prefix,
    QUEUE_PREFIX: `${prefix}-bull`,
    NVD_INDEX_FILE: '',
    SOURCES_FILE: '',
    ...databaseOverrides('backends'),
    ...(kind === 'redis' ? { REDIS_URL: REDIS_TEST_URL } : {}),
    ...overrides
  }, {})
  return await openBackends(config, { warn: () => {} })
}

/** openBackendsFor, purged and closed when the test ends. */
export async function openBackendsIn (t: Tap, kind: Backend, overrides: Partial<Config> = {}): Promise<Backends> {
  const b = await openBackendsFor(kind, overrides)
  t.teardown(async () => {
    await b.purge()
    await b.close()
  })
  return b
}

export function uniquePrefix (name: string): string {
  return `vulnscan-test:${name}:${randomBytes(4).toString('hex')}`
}

/** Delete every key under a prefix, in batches (never FLUSHALL). */
export async function deletePrefix (redis: Redis, prefix: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    cursor = next
    if (keys.length > 0) await redis.unlink(...keys)
  } while (cursor !== '0')
}

export interface Built {
  app: FastifyInstance
  config: Config
  /** A plain Redis client on the test's prefix (redis backend only). */
  redis?: Redis
}

export interface BuildOptions {
  /** Where the app's pino log lines go (with LOG_LEVEL set in the overrides), for tests that read the logs. */
  logStream?: NodeJS.WritableStream
}

export async function build (t: Tap, backend: Backend = 'memory', overrides: Partial<Config> = {}, opts: BuildOptions = {}): Promise<Built> {
  if (backend === 'redis' && (overrides.DATABASE_URL ?? DATABASE_TEST_URL) === DATABASE_TEST_URL) await databaseAnswers()
  const prefix = uniquePrefix('app')
  const config = loadConfig({
    SERVICE_API_KEY: SERVICE_KEY,
    LOG_LEVEL: 'silent',
    REDIS_PREFIX: prefix.replace(/:/g, '.'),
    QUEUE_PREFIX: `${prefix.replace(/:/g, '.')}-bull`,
    RATE_LIMIT_MAX: 100000,
    AUTH_FAILURE_MAX: 100000,
    WORKER_ENABLED: false,
    NVD_INDEX_FILE: '',
    SOURCES_FILE: '',
    NVD_API_URL: 'http://127.0.0.1:1/rest/json',
    // The fake NVD does not throttle unless a test asks it to; NVD's real 5 per 30 s would only slow tests.
    NVD_RATE_LIMIT: 1000,
    CREDENTIALS_KEY: TEST_CREDENTIALS_KEY,
    ...databaseOverrides('app'),
    ...(backend === 'redis' ? { REDIS_URL: REDIS_TEST_URL } : {}),
    ...overrides
  }, {})
  const options = serverOptions(config)
  if (opts.logStream !== undefined) options.logger = { ...(options.logger as object), stream: opts.logStream }
  const fastify = Fastify(options)
  await fastify.register(app, { config })
  await fastify.ready()
  let redis: Redis | undefined
  if (backend === 'redis') redis = new Redis(REDIS_TEST_URL)
  t.teardown(async () => {
    await fastify.close()
    // Any configuration with REDIS_URL (whatever `backend` says) opened the results database under this schema.
    if (config.REDIS_URL !== undefined) await dropSchema(config.DATABASE_SCHEMA, config.DATABASE_URL)
    if (redis) {
      await deletePrefix(redis, config.REDIS_PREFIX)
      await deletePrefix(redis, config.QUEUE_PREFIX)
      redis.disconnect()
    }
  })
  return { app: fastify, config, redis }
}
