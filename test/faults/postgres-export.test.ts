// Exports read through a cursor on the results database (issue 29, item 1).
//
// A cursor whose connection is lost while its reader holds a row (issue 29, item 1; seen as a /health
// that stayed degraded after a restart of the results database). The reader then stops early, as a report does when
// its HTTP client goes away: pg-cursor's close() waited for ever for an answer from the dead connection, keeping the
// export's slot and its pool connection, so later exports waited for ever too. Wanted: the reader's stop ends in
// bounded time, and the slot and the connection are given back.
// A reader slower than DATABASE_QUERY_TIMEOUT_MS in all (a large report to a slow client): pg's per-query timer,
// which a cursor never stops, ended the stream early as if it were complete, so the export lost its remaining rows
// without an error. Wanted: every row, however long the whole export takes, while each read stays bounded.
import { test } from 'tap'
import { openResultsDatabase } from '../../lib/backends'
import { loadConfig } from '../../lib/config'
import type { FindingRecord } from '../../lib/domain/findings'
import type { ResultsStore } from '../../lib/store/results-types'
import { postgresServerAvailable, startPrivatePostgres } from '../support/postgres-server'
import { finding, write } from '../support/results'

const ADDRESS = '192.0.2.7'
// More findings than one read of the cursor takes (STREAM_ROWS, 1,000), so the cursor is still open at the first row.
const PORTS = 1200
const QUERY_TIMEOUT_MS = 2000

async function within<T> (ms: number, p: Promise<T>): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), ms) })
  try {
    return await Promise.race([p, late])
  } finally {
    clearTimeout(timer)
  }
}

async function openStore (t: { teardown(fn: () => unknown): void }, schema: string): Promise<{ pg: Awaited<ReturnType<typeof startPrivatePostgres>>, store: ResultsStore }> {
  const pg = await startPrivatePostgres()
  t.teardown(() => pg.destroy())
  // A pool of 2: one export at a time, so an export slot kept for ever shows as the next export never starting.
  const config = loadConfig({ DATABASE_URL: pg.url, DATABASE_SCHEMA: schema, DATABASE_POOL_MAX: 2, DATABASE_QUERY_TIMEOUT_MS: QUERY_TIMEOUT_MS, LOG_LEVEL: 'silent' })
  const database = await openResultsDatabase(config, { warn: () => {} })
  t.teardown(() => database.close())
  const findings = Array.from({ length: PORTS }, (_, i) => finding(ADDRESS, 1 + i, 'CVE-2024-6387', 'OpenSSH', '9.2p1'))
  await database.results.recordHosts([write({ address: ADDRESS, at: '2026-12-08T00:00:00.000Z', scanId: schema, services: findings.map((f) => ({ port: f.port, service: 'ssh', product: 'OpenSSH', version: '9.2p1' })), findings })])
  return { pg, store: database.results }
}

test('an export whose connection is lost mid-stream gives back its slot and connection when its reader stops', async (t) => {
  if (!postgresServerAvailable()) return t.pass('skipped: no PostgreSQL server binaries to run a private cluster')
  const { pg, store } = await openStore(t, 'export_lost')

  const first = store.streamFindings({})[Symbol.asyncIterator]()
  const row = await first.next()
  t.equal(row.done, false, 'the export read its first row')
  t.equal((row.value as FindingRecord).cveId, 'CVE-2024-6387')

  // The connection goes while the reader holds the row (a restart, a failover, idle_in_transaction_session_timeout).
  const ended = await pg.terminateBackends()
  t.equal(ended, 1, 'the export\'s backend was terminated')
  await new Promise((resolve) => setTimeout(resolve, 300))

  // The reader stops early: its client went away.
  const stopped = await within<unknown>(10_000, first.return?.(undefined) ?? Promise.resolve())
  t.not(stopped, 'timeout', 'the reader\'s stop ended in bounded time')

  // The slot and the connection are back: another export runs to the end, and a plain query answers.
  let n = 0
  const second = within(20_000, (async () => { for await (const f of store.streamFindings({})) { if (f.address === ADDRESS) n++ } })())
  t.not(await second, 'timeout', 'the next export started and finished')
  t.equal(n, PORTS, `it read every finding (${n})`)
  await store.ping()
  t.pass('the pool answers')
})

test('an export read more slowly than the per-query limit in all still gives every row', async (t) => {
  if (!postgresServerAvailable()) return t.pass('skipped: no PostgreSQL server binaries to run a private cluster')
  const { store } = await openStore(t, 'export_slow')
  let n = 0
  const at = Date.now()
  for await (const f of store.streamFindings({})) {
    if (f.address === ADDRESS) n++
    // A slow client: the first row held longer than the whole per-query limit.
    if (n === 1) await new Promise((resolve) => setTimeout(resolve, QUERY_TIMEOUT_MS + 1000))
  }
  t.ok(Date.now() - at > QUERY_TIMEOUT_MS, 'the export took longer than the per-query limit')
  t.equal(n, PORTS, `it read every finding (${n}), not only the first read's`)
  await store.ping()
  t.pass('the pool answers')
})
