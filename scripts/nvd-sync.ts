// npm run nvd:sync [-- --full | --since <ISO time>]
// Brings the CVE index (Redis when REDIS_URL is set, otherwise the embedded index file) up to date
// with the NVD API 2.0: a full pass the first time, incremental afterwards. Ctrl-C stops after the
// page in flight; running the command again resumes where it stopped.

import { parseArgs } from 'node:util'
import pino from 'pino'
import pc from 'picocolors'
import { createNvdClient } from '../lib/nvd/client'
import { openBackends } from '../lib/backends'
import { NVD_REQUESTS_WITH_KEY, NVD_REQUESTS_WITHOUT_KEY, NVD_WINDOW_MS } from '../lib/nvd/rate-limiter'
import { syncIndex, type SyncProgress } from '../lib/nvd/sync'
import { loadConfig } from '../lib/config'

const USAGE = `Usage: npm run nvd:sync [-- --full | --since <ISO time>]

  --full           fetch every CVE again even when the index has a watermark
  --since <time>   on an index without a watermark (e.g. filled by nvd:import from feed files),
                   sync only what changed since <time> instead of a full pass

Reads NVD_API_URL, NVD_API_KEY, NVD_RATE_LIMIT, REDIS_URL, REDIS_PREFIX and NVD_INDEX_FILE.
Without an NVD API key the NVD allows 5 requests per 30 s: a first full sync takes about an hour
(with a key, a few minutes). Interrupt it at any time; the next run resumes.`

const n = (x: number): string => x.toLocaleString('en')
const plural = (x: number, word: string): string => `${n(x)} ${word}${x === 1 ? '' : 's'}`

function progressLine (p: SyncProgress, startedMs: number): string {
  const secs = (Date.now() - startedMs) / 1000
  const rate = secs > 0 ? Math.round(p.records / secs) : 0
  if (p.mode === 'full') {
    const done = p.nextStartIndex ?? p.totalResults
    const pct = p.totalResults > 0 ? ((100 * done) / p.totalResults).toFixed(1) : '100.0'
    return `full: ${n(done)} of ${n(p.totalResults)} CVEs (${pct}%), page ${p.pages}, ${n(rate)}/s`
  }
  const w = p.window === null ? '' : ` window ${p.window.start.slice(0, 10)} .. ${p.window.end.slice(0, 10)}:`
  return `incremental:${w} ${n(p.nextStartIndex ?? p.totalResults)} of ${n(p.totalResults)} changed CVEs, ${n(p.records)} in all`
}

async function main (): Promise<number> {
  let values: { full?: boolean, since?: string, help?: boolean }
  try {
    values = parseArgs({
      allowPositionals: false,
      options: { full: { type: 'boolean' }, since: { type: 'string' }, help: { type: 'boolean', short: 'h' } }
    }).values
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`)
    return 2
  }
  if (values.since !== undefined && Number.isNaN(Date.parse(values.since))) {
    process.stderr.write(`--since '${values.since.slice(0, 40)}' is not an ISO time\n${USAGE}\n`)
    return 2
  }
  if (values.help === true) {
    process.stdout.write(USAGE + '\n')
    return 0
  }
  const config = loadConfig()
  const backends = await openBackends(config, pino({ level: 'warn' }, pino.destination(2)), { results: false })
  const index = backends.indexes.cve
  const requestsPerWindow = config.NVD_RATE_LIMIT ?? (config.NVD_API_KEY ? NVD_REQUESTS_WITH_KEY : NVD_REQUESTS_WITHOUT_KEY)
  // With Redis, share the NVD window with the API and workers, which fetch products on demand.
  const limiter = backends.shared?.limiter('nvd', requestsPerWindow, NVD_WINDOW_MS)
  const client = createNvdClient({
    baseUrl: config.NVD_API_URL,
    apiKey: config.NVD_API_KEY,
    requestsPerWindow,
    limiter,
    logger: {
      info: () => {},
      warn: (msg) => process.stderr.write(pc.yellow(msg) + '\n')
    }
  })
  const ac = new AbortController()
  const onSignal = (): void => {
    if (ac.signal.aborted) return
    process.stderr.write('\nstopping after the page in flight; run nvd:sync again to resume\n')
    ac.abort()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  process.stderr.write(`index: ${backends.kind === 'redis' ? 'redis' : 'file ' + config.NVD_INDEX_FILE}; NVD: ${config.NVD_API_URL} ` +
    `(${client.limiter.requestsPerWindow} requests per ${client.limiter.windowMs / 1000} s${limiter !== undefined ? ' shared through Redis' : ''}` +
    `${client.hasApiKey ? ', with API key' : ', no API key'})\n`)
  const started = Date.now()
  try {
    const s = await syncIndex({
      client,
      index,
      full: values.full === true,
      since: values.since,
      signal: ac.signal,
      onProgress: (p) => process.stderr.write(progressLine(p, started) + '\n')
    })
    const stats = await index.stats()
    process.stderr.write(pc.green(`${s.mode} sync${s.resumed ? ' (resumed)' : ''} done: ${plural(s.records, 'record')} in ${plural(s.pages, 'page')}, ` +
      `${n(s.stored)} new or changed, ${(s.durationMs / 1000).toFixed(1)} s ` +
      `(waiting on NVD ${(s.fetchMs / 1000).toFixed(1)} s, indexing ${(s.applyMs / 1000).toFixed(1)} s)\n`))
    for (const id of s.rejectedRecords) process.stderr.write(pc.yellow(`  skipped unreadable record ${id}\n`))
    process.stderr.write(`index holds ${n(stats.cves)} CVEs for ${n(stats.products)} products; changes known up to ${s.watermark}\n`)
    return 0
  } catch (err) {
    if (ac.signal.aborted) {
      process.stderr.write(pc.yellow('interrupted; progress saved\n'))
      return 130
    }
    process.stderr.write(pc.red(`nvd:sync failed: ${(err as Error).message}\n`) + 'progress is saved; run nvd:sync again to resume\n')
    return 1
  } finally {
    await backends.close()
  }
}

main().then((code) => { process.exitCode = code }, (err: Error) => {
  process.stderr.write(pc.red(`nvd:sync failed: ${err.message}\n`))
  process.exitCode = 1
})
