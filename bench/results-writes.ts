// The results database's write rate alone: first scans and re-scans of N hosts written through
// `PostgresResultsStore.recordHosts` in batches, by a few writers at once, into a schema of this run's own
// (dropped at the end). Quicker to repeat
// than bench/results-scale.ts, which measures every route as well; use it to compare write-path changes
// (interleave runs: the machine's load moves more than most changes do). Beside the rate it prints the CPU a host
// write cost, this process's (`process.cpuUsage`) and PostgreSQL's (user + system from /proc of the server processes
// serving this run: client backends of the bench's database named `vulnscan` that started during the run, found with
// psql, so run it where nothing else connects to that database under that name). CPU a host moves less with the load
// than hosts/s do.
//   npx tsx bench/results-writes.ts [--hosts 4000] [--rescan 2000] [--batch 100] [--writers 2] [--runs 1]
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { openResultsDatabase } from '../lib/backends'
import { loadConfig } from '../lib/config'
import type { HostScanWrite, ResultsStore } from '../lib/store/results-types'
import { resultsData } from './support/results-data'

const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const TARGET_HOSTS_PER_SEC = 2000

const { values: args } = parseArgs({
  options: {
    hosts: { type: 'string', default: '4000' },
    rescan: { type: 'string', default: '2000' },
    batch: { type: 'string', default: '100' },
    writers: { type: 'string', default: '2' },
    runs: { type: 'string', default: '1' }
  }
})
const HOSTS = Number(args.hosts)
const RESCAN = Math.min(Number(args.rescan), HOSTS)
const BATCH = Number(args.batch)
const WRITERS = Number(args.writers)
const RUNS = Number(args.runs)
const T0 = Date.parse('2026-11-20T08:00:00.000Z')

interface Rate { hosts: number, findings: number, seconds: number, nodeMs: number, pgMs: number }

/**
 * CPU milliseconds (user + system) by server process, of the backends serving this run so far. The backends are
 * asked of psql (the project opens its connections in lib/backends.ts alone).
 */
function backendCpu (since: Date): Map<number, number> {
  const sql = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'vulnscan' " +
    `AND backend_start >= '${since.toISOString()}'::timestamptz AND pid <> pg_backend_pid()`
  const pids = execFileSync('psql', ['-X', '-At', '-d', DATABASE_URL, '-c', sql], { encoding: 'utf8' }).split('\n').filter((l) => l !== '').map(Number)
  const out = new Map<number, number>()
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      out.set(pid, (Number(f[11]) + Number(f[12])) * 10)
    } catch { /* the backend has gone (or the server is not on this machine): not counted */ }
  }
  return out
}

function cpuDelta (before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0
  for (const [pid, t] of after) ms += t - (before.get(pid) ?? 0)
  return ms
}

/** Hosts [from, from+count) in batches, `WRITERS` batches in flight; the writes are built before the clock starts. */
async function writeAll (store: ResultsStore, from: number, count: number, scanId: string, rescan: boolean, at: number, since: Date): Promise<Rate> {
  const data = resultsData()
  const batches: HostScanWrite[][] = []
  let findings = 0
  for (let i = from; i < from + count; i += BATCH) {
    const writes: HostScanWrite[] = []
    for (let k = i; k < Math.min(i + BATCH, from + count); k++) writes.push(data.write(k, new Date(at + k).toISOString(), scanId, rescan))
    findings += writes.reduce((n, w) => n + w.findings.length, 0)
    batches.push(writes)
  }
  let next = 0
  const pgBefore = backendCpu(since)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await Promise.all(Array.from({ length: WRITERS }, async () => {
    while (next < batches.length) await store.recordHosts(batches[next++])
  }))
  const seconds = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  const pgMs = cpuDelta(pgBefore, backendCpu(since))
  return { hosts: count, findings, seconds, nodeMs: (cpu.user + cpu.system) / 1000, pgMs }
}

function line (name: string, r: Rate): string {
  const hps = r.hosts / r.seconds
  return `${name.padEnd(10)} ${String(Math.round(hps)).padStart(6)} hosts/s ${String(Math.round(r.findings / r.seconds)).padStart(7)} findings/s ` +
    `(${r.hosts} hosts, ${r.findings} findings, ${r.seconds.toFixed(2)} s; target ${TARGET_HOSTS_PER_SEC} hosts/s: ${hps >= TARGET_HOSTS_PER_SEC ? 'PASS' : 'FAIL'})\n` +
    `${''.padEnd(10)} CPU a host write: Node ${(r.nodeMs / r.hosts).toFixed(2)} ms, PostgreSQL ${(r.pgMs / r.hosts).toFixed(2)} ms`
}

async function run (): Promise<{ first: Rate, rescan: Rate }> {
  const config = loadConfig({ DATABASE_URL, DATABASE_SCHEMA: `bench_writes_${randomBytes(4).toString('hex')}`, DATABASE_POOL_MAX: WRITERS + 1, LOG_LEVEL: 'silent' })
  const since = new Date(Date.now() - 1000)
  const database = await openResultsDatabase(config, { warn: () => {} })
  try {
    const first = await writeAll(database.results, 0, HOSTS, 'bench-1', false, T0, since)
    const rescan = await writeAll(database.results, 0, RESCAN, 'bench-2', true, T0 + 86_400_000, since)
    return { first, rescan }
  } finally {
    await database.purge().catch(() => {})
    await database.close()
  }
}

async function main (): Promise<void> {
  for (let i = 0; i < RUNS; i++) {
    const load = loadavg()[0].toFixed(1)
    const r = await run()
    process.stdout.write(`run ${i + 1} (load ${load})\n  ${line('first scan', r.first)}\n  ${line('re-scan', r.rescan)}\n`)
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`)
  process.exit(1)
})
