// Where storage is chosen and opened: the only code that reads REDIS_URL or DATABASE_URL or opens a Redis or
// PostgreSQL connection. The API
// (plugins/backends.ts), the worker, every script and the benches start here, so connection options and key
// prefixes are decided once. Each backend's pieces sit side by side in their seams (store/, queue/, nvd/);
// another backend is one more opener below and one more line in BACKENDS.
import { StartupError } from './startup'
import { Redis, type RedisOptions } from 'ioredis'
import { Client, Pool, type ClientConfig } from 'pg'
import type { Config } from './config'
import type { Store } from './store/types'
import type { ResultsStore } from './store/results-types'
import type { DeliveryQueue, ScanQueue, ScheduleTimer } from './queue/types'
import type { LocalCveIndex } from './nvd/cve-index'
import type { RateLimiter } from './nvd/rate-limiter'
import { MemoryStore } from './store/memory/store'
import { MemoryResultsStore } from './store/memory/results'
import { MemoryQueue } from './queue/memory/queue'
import { MemoryScheduleTimer } from './queue/memory/schedule-timer'
import { MemoryDeliveryQueue } from './queue/memory/delivery-queue'
import { createMemoryIndex } from './nvd/memory/cve-index'
import { RedisStore } from './store/redis/store'
import { PostgresResultsStore } from './store/postgres/results'
import { migrateResults } from './store/postgres/migrate'
import { BullQueue } from './queue/redis/queue'
import { BullScheduleTimer } from './queue/redis/schedule-timer'
import { BullDeliveryQueue } from './queue/redis/delivery-queue'
import { createRedisIndex } from './nvd/redis/cve-index'
import { createRedisRateLimiter } from './nvd/rate-limiter'
import { SharedRateCounter } from './rate-counter'
import { MemoryInvalidation, RedisInvalidation, type InvalidationChannel } from './invalidation'
import { withHostWriteAnnouncements } from './store/host-page-cache'
import { RedisScanEvents, scanEventsChannel, type ScanEvents } from './scan-events'
import { guardDependency, isConnectionFailure, OutageLog } from './outage'
import type { SourceStore } from './sources/source-store'
import { createMemorySourceStore } from './sources/memory'
import { createRedisSourceStore } from './sources/redis'
import type { IntegrationStore } from './integrations/types'
import { MemoryIntegrationStore } from './store/memory/integrations'
import { RedisIntegrationStore } from './store/redis/integrations'

/** The local indexes scans match against; each data source adds its own member. */
export interface Indexes {
  /** CVE records and their CPE criteria, from the NVD. */
  cve: LocalCveIndex
  /** CVE JSON 5 records, distribution trackers, KEV and EPSS. */
  sources: SourceStore
}

/** What every process of a scaled-out service shares beyond the stores; absent where one process is the whole service. */
export interface SharedCounters {
  /** The per-key HTTP request count (@fastify/rate-limit's store). */
  requests: SharedRateCounter
  /** Failed logins per client address, shared so that spreading guesses over instances does not help. */
  authFailures: SharedRateCounter
  /** A rolling window of calls to an outside API, e.g. `limiter('nvd', 50, 30_000)`. */
  limiter(name: string, requestsPerWindow: number, windowMs: number): RateLimiter
}

export interface Backends {
  readonly kind: BackendKind
  store: Store
  results: ResultsStore
  queue: ScanQueue
  /** Fires schedules at their due times (lib/schedules.ts decides what a due time does). */
  scheduler: ScheduleTimer
  /** Webhook deliveries, with their retries (lib/webhooks/). */
  deliveries: DeliveryQueue
  /** Issue-tracker integrations, their ticket maps and deliveries (lib/integrations/). */
  integrations: IntegrationStore
  /** Integration syncs, with their retries (lib/integrations/jobs.ts). */
  integrationSyncs: DeliveryQueue
  indexes: Indexes
  /** Scan changes, for event streams. */
  scanEvents: ScanEvents
  shared?: SharedCounters
  /** "Your cache of X is stale" between the processes of the service (key changes: API_KEYS_TOPIC). */
  invalidation: InvalidationChannel
  /** Says once per process when Redis or PostgreSQL becomes unreachable and when it answers again (absent in memory). */
  outages?: OutageLog
  /** Close what was opened: the schedule timer and the queue first (no new run starts, running jobs end), then the indexes, then the connections. */
  close(): Promise<void>
  /**
   * Delete everything stored under this configuration's prefixes (REDIS_PREFIX, QUEUE_PREFIX) and its results
   * schema (DATABASE_SCHEMA): for the throwaway prefixes and schemas of tests and benches; call it before close(). Nothing to do in memory, which dies
   * with close().
   */
  purge(): Promise<void>
}

export interface BackendsLogger {
  warn(obj: object, msg: string): void
  info?(msgOrObj: string | object, msg?: string): void
}

export interface OpenOptions {
  /**
   * false: the process never reads or writes hosts and findings (key and vulnerability-data commands), so the
   * scaled backend opens no results database and DATABASE_URL may be unset; `results` then refuses every call.
   */
  results?: boolean
}

const BACKENDS = {
  memory: openMemory,
  redis: openRedis
} as const

export type BackendKind = keyof typeof BACKENDS

/** Every backend openBackends knows; the contract suites run each. */
export const BACKEND_KINDS = Object.keys(BACKENDS) as BackendKind[]

/** The backend a configuration selects: Redis when REDIS_URL is set, otherwise the embedded one. */
export function backendKind (config: Pick<Config, 'REDIS_URL'>): BackendKind {
  return config.REDIS_URL !== undefined && config.REDIS_URL !== '' ? 'redis' : 'memory'
}

export async function openBackends (config: Config, logger: BackendsLogger, opts: OpenOptions = {}): Promise<Backends> {
  return await BACKENDS[backendKind(config)](config, logger, opts)
}

async function openMemory (config: Config): Promise<Backends> {
  const queue = new MemoryQueue()
  const scheduler = new MemoryScheduleTimer()
  const deliveries = new MemoryDeliveryQueue({ attempts: config.WEBHOOK_ATTEMPTS, backoffMs: config.WEBHOOK_BACKOFF_MS })
  const integrationSyncs = new MemoryDeliveryQueue({ attempts: config.WEBHOOK_ATTEMPTS, backoffMs: config.WEBHOOK_BACKOFF_MS })
  const cve = await createMemoryIndex(config.NVD_INDEX_FILE !== '' ? { filePath: config.NVD_INDEX_FILE } : {})
  const sources = await createMemorySourceStore(config.SOURCES_FILE !== '' ? { filePath: config.SOURCES_FILE } : {})
  const invalidation = new MemoryInvalidation()
  const store = new MemoryStore(invalidation)
  return {
    kind: 'memory',
    store,
    invalidation,
    results: new MemoryResultsStore(),
    queue,
    scheduler,
    deliveries,
    integrations: new MemoryIntegrationStore(),
    integrationSyncs,
    indexes: { cve, sources },
    scanEvents: store.events,
    close: async () => {
      await scheduler.close()
      await deliveries.close()
      await integrationSyncs.close()
      await queue.close()
      await cve.close()
      await sources.close()
      await store.close()
      await invalidation.close()
    },
    purge: async () => {}
  }
}

// Every connection is one of these kinds, so each option is decided here once. Those that serve requests also get
// a command timeout (REDIS_COMMAND_TIMEOUT_MS, set where they are opened): a Redis that is stopped rather than down
// keeps its connections open and answers nothing, and without it every request waited as long as the stall.
const CONNECTIONS = {
  // Store, results and counters. A command fails after one reconnect attempt rather than queueing forever:
  // requests get a 503, and a worker's job fails and is retried.
  commands: { maxRetriesPerRequest: 1, enableAutoPipelining: true, connectTimeout: 5000 },
  // The CVE index writes with WATCH transactions, whose state belongs to the connection: nobody else's
  // MULTI/EXEC may clear its watch.
  own: { enableAutoPipelining: false },
  // BullMQ's queues (scans, schedules, deliveries) must not share an auto-pipelined connection; the API adds jobs
  // to them, so they give up like the command connection does.
  queue: { enableAutoPipelining: false, maxRetriesPerRequest: 1 },
  // BullMQ workers and queue events block on their connection and must never give up on a command (no timeout).
  blocking: { maxRetriesPerRequest: null, enableAutoPipelining: false, commandTimeout: undefined },
  // Invalidation messages: a connection in subscribe mode serves nothing else, and resubscribes on reconnect.
  subscriber: { maxRetriesPerRequest: null, enableAutoPipelining: false, autoResubscribe: true, commandTimeout: undefined }
} satisfies Record<string, RedisOptions>

/** The URL without its password, for messages. */
function redactUrl (url: string, variable = 'REDIS_URL'): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return `the configured ${variable}`
  }
}

/** A results store for processes that opened none: every call says so. */
function noResults (): ResultsStore {
  return new Proxy({} as ResultsStore, {
    get: (_, name) => name === 'then' ? undefined : () => { throw new Error(`this process opened no results database (ResultsStore.${String(name)})`) }
  })
}

export interface ResultsDatabase {
  results: ResultsStore
  close(): Promise<void>
  /** Drop the results schema (tests and benches on a throwaway DATABASE_SCHEMA). */
  purge(): Promise<void>
}

/**
 * The results database of the scaled deployment: a pool whose connections see DATABASE_SCHEMA first, after the
 * schema is migrated on a connection of its own. Alone (without Redis) for the write benchmark.
 */
export async function openResultsDatabase (config: Config, logger: BackendsLogger, outages = new OutageLog(logger)): Promise<ResultsDatabase> {
  const url = config.DATABASE_URL ?? ''
  const schema = config.DATABASE_SCHEMA
  const connection: ClientConfig = {
    connectionString: url,
    application_name: 'vulnscan',
    connectionTimeoutMillis: 5000,
    // A server that stops answering (SIGSTOP, a stalled disk, a network partition) fails the query in bounded time;
    // the pool drops the connection the timed-out query was on (it is released with the error).
    query_timeout: config.DATABASE_QUERY_TIMEOUT_MS,
    // The schema name is a checked identifier (lower case, digits, underscore).
    options: `-c search_path=${schema}`
  }
  // Migrations may rewrite large tables: no per-query limit on their own connection.
  const migrator = new Client({ ...connection, query_timeout: undefined })
  // A connection that fails after connecting (the server restarts) emits this rather than throwing.
  migrator.on('error', (err) => logger.warn({ err: { message: err.message } }, 'PostgreSQL migration connection error'))
  try {
    await migrator.connect()
    await migrateResults(migrator, schema, logger.info === undefined ? undefined : { info: (m) => logger.info?.(m) })
  } catch (err) {
    const code = (err as { code?: string }).code
    const fix = code === undefined ? undefined : SETUP_FIX[code]
    const text = `Cannot open the results database at ${redactUrl(url, 'DATABASE_URL')}: ${(err as Error).message}`
    // A refused login, a missing database or a server not listening is the set-up's to fix: said without a stack.
    if (fix !== undefined) throw new StartupError(`${text}. ${fix}`)
    throw new Error(text)
  } finally {
    await migrator.end().catch(() => {})
  }
  const pool = new Pool({ ...connection, max: config.DATABASE_POOL_MAX, idleTimeoutMillis: 30_000 })
  // Idle connections that break (a database restart) are dropped from the pool and replaced on demand.
  pool.on('error', (err) => outages.down('PostgreSQL', err))
  return {
    // Connection failures reach callers as DependencyUnavailableError('PostgreSQL'): a 503, or a job put off.
    results: guardDependency(new PostgresResultsStore({ pool }), 'PostgreSQL', outages),
    close: async () => { await pool.end() },
    purge: async () => { await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`) }
  }
}

/** What to do about the PostgreSQL (and socket) errors that mean the set-up is wrong, by code. */
const SETUP_FIX: Record<string, string> = {
  28000: 'Create the role and a database it owns: createuser --login --pwprompt <role>, then createdb --owner <role> <database> (docs/deployment.md)',
  '28P01': 'Check the password in DATABASE_URL',
  '3D000': 'Create the database: createdb --owner <role> <database> (docs/deployment.md)',
  42501: 'Let the role create a schema in the database (make it the owner, or GRANT CREATE ON DATABASE)',
  ECONNREFUSED: 'Is PostgreSQL running and listening at that address?'
}

async function openRedis (config: Config, logger: BackendsLogger, opts: OpenOptions): Promise<Backends> {
  const url = config.REDIS_URL ?? ''
  const wantResults = opts.results !== false
  if (wantResults && (config.DATABASE_URL === undefined || config.DATABASE_URL === '')) {
    throw new StartupError('REDIS_URL is set but DATABASE_URL is not: the scaled deployment keeps hosts and findings in PostgreSQL. ' +
      'Set DATABASE_URL (e.g. postgres://vulnscan@db.internal:5432/vulnscan), or unset REDIS_URL for the embedded default.')
  }
  const commandTimeout = config.REDIS_COMMAND_TIMEOUT_MS
  const main = new Redis(url, { ...CONNECTIONS.commands, commandTimeout, lazyConnect: true })
  try {
    await main.connect()
  } catch (err) {
    main.disconnect()
    throw new Error(`Cannot reach Redis at ${redactUrl(url)}: ${(err as Error).message}`)
  }
  const outages = new OutageLog(logger)
  let database: ResultsDatabase | undefined
  try {
    database = wantResults ? await openResultsDatabase(config, logger, outages) : undefined
  } catch (err) {
    main.disconnect()
    throw err
  }
  const connections = [main]
  // Later outages are survivable (ioredis reconnects; /health says degraded): said once per process, never a crash.
  // An 'error' listener on every connection is what keeps ioredis from throwing the error at the process.
  const watch = (c: Redis): Redis => {
    c.on('error', (err) => outages.down('Redis', err))
    c.on('ready', () => outages.up('Redis'))
    return c
  }
  watch(main)
  const open = (role: 'own' | 'queue' | 'blocking' | 'subscriber'): Redis => {
    const timeout = role === 'own' || role === 'queue' ? { commandTimeout } : {}
    const c = watch(main.duplicate({ ...CONNECTIONS[role], ...timeout, lazyConnect: false }))
    connections.push(c)
    return c
  }

  // Key layout: `<REDIS_PREFIX>:<kind>:…` for everything of ours, BullMQ under its own QUEUE_PREFIX.
  const prefix = config.REDIS_PREFIX
  // BullMQ's own errors: a lost connection is the outage already told; anything else is worth a line.
  const queueErrors = <Q extends { onError: (err: Error) => void }>(q: Q): Q => {
    q.onError = (err) => {
      if (isConnectionFailure(err)) outages.down('Redis', err)
      else logger.warn({ err: { message: err.message } }, 'queue error')
    }
    return q
  }
  const queue = guardDependency(queueErrors(new BullQueue(open('queue'), config.QUEUE_PREFIX, () => open('blocking'))), 'Redis', outages)
  const scheduler = guardDependency(queueErrors(new BullScheduleTimer(open('queue'), config.QUEUE_PREFIX, () => open('blocking'))), 'Redis', outages)
  const deliveries = guardDependency(queueErrors(new BullDeliveryQueue(open('queue'), config.QUEUE_PREFIX, () => open('blocking'), { attempts: config.WEBHOOK_ATTEMPTS, backoffMs: config.WEBHOOK_BACKOFF_MS })), 'Redis', outages)
  const integrationSyncs = guardDependency(queueErrors(new BullDeliveryQueue(open('queue'), config.QUEUE_PREFIX, () => open('blocking'), { attempts: config.WEBHOOK_ATTEMPTS, backoffMs: config.WEBHOOK_BACKOFF_MS }, 'integrations')), 'Redis', outages)
  const cve = createRedisIndex({ redis: open('own'), prefix: `${prefix}:` })
  const sources = createRedisSourceStore({ redis: main, prefix: `${prefix}:` })
  const requests = new SharedRateCounter(main, `${prefix}:ratelimit:`)
  const authFailures = new SharedRateCounter(main, `${prefix}:authfail:`)
  const store = guardDependency(new RedisStore(main, prefix), 'Redis', outages)
  const invalidation = new RedisInvalidation(open('subscriber'), main, prefix)
  // Subscriber mode takes a connection for itself; opened on the first stream, not before.
  const scanEvents = new RedisScanEvents(watch(main.duplicate({ ...CONNECTIONS.subscriber, lazyConnect: true })), scanEventsChannel(prefix))
  return {
    kind: 'redis',
    store,
    invalidation,
    // Host page caches in every process trust their revision until a write is announced (host-page-cache.ts).
    results: database === undefined ? noResults() : withHostWriteAnnouncements(database.results, invalidation),
    queue,
    scheduler,
    deliveries,
    integrations: guardDependency(new RedisIntegrationStore(main, prefix), 'Redis', outages),
    integrationSyncs,
    indexes: { cve, sources },
    scanEvents,
    outages,
    shared: {
      requests,
      authFailures,
      limiter: (name, requestsPerWindow, windowMs) => createRedisRateLimiter({ redis: main, key: `${prefix}:${name}:ratelimit`, requestsPerWindow, windowMs })
    },
    close: async () => {
      await scheduler.close()
      await deliveries.close()
      await integrationSyncs.close()
      await queue.close()
      await cve.close()
      await store.close()
      await invalidation.close()
      await scanEvents.close()
      requests.close()
      authFailures.close()
      // Nothing is left waiting on a reply by now; quit would wait on a Redis that is down.
      for (const c of connections) c.disconnect()
      await database?.close()
    },
    purge: async () => {
      for (const p of [prefix, config.QUEUE_PREFIX]) {
        let cursor = '0'
        do {
          const [next, keys] = await main.scan(cursor, 'MATCH', `${p}:*`, 'COUNT', 1000)
          cursor = next
          if (keys.length > 0) await main.unlink(...keys)
        } while (cursor !== '0')
      }
      await database?.purge()
    }
  }
}
