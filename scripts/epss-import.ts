// npm run epss:import -- [<epss_scores-YYYY-MM-DD.csv[.gz] | URL>] [--force] [--timeout <seconds>]
// Streams FIRST's EPSS scores into the source store; without an argument, from FIRST's current file.
// Bad rows are counted and the first ones shown; they never stop the import.

import { askedForHelp } from './help'
import pc from 'picocolors'
import { DEFAULT_EPSS_URL, importEpss } from '../lib/exploit/epss'
import type { SourceStore } from '../lib/sources/source-store'
import { openSourceStore } from './open-source-store'
import { parseImportArgs, type ImportCliOptions, type Out } from './exploit-import-args'

const USAGE = 'usage: npm run epss:import -- [<epss_scores-YYYY-MM-DD.csv[.gz] | URL>] [--force] [--timeout <seconds>]\n'

/** The command without its process: returns the exit code (0 done or unchanged, 1 failed, 2 usage). */
export async function runEpssImport (argv: string[], store: SourceStore, out: Out, opts: ImportCliOptions = {}): Promise<number> {
  const args = parseImportArgs(argv)
  if ('error' in args) {
    out.write(pc.red(args.error + '\n') + USAGE)
    return 2
  }
  const source = args.source ?? opts.defaultUrl ?? DEFAULT_EPSS_URL
  out.write(`EPSS scores from ${source}\n`)
  const started = Date.now()
  try {
    const res = await importEpss(source, store, { force: args.force, timeoutMs: args.timeoutMs ?? opts.timeoutMs })
    if (res.status === 'not-modified') {
      out.write(pc.green(`unchanged since the last import (scores of ${res.meta?.scoreDate ?? 'an unknown date'}); nothing to do\n`))
      return 0
    }
    const secs = ((Date.now() - started) / 1000).toFixed(1)
    out.write(pc.green(`model ${res.meta.modelVersion ?? '(not stated)'}, scores of ${res.meta.scoreDate ?? '(date not stated)'}: ` +
      `${res.stored.toLocaleString('en')} CVEs stored from ${res.rows.toLocaleString('en')} rows in ${secs} s\n`))
    if (res.bad > 0) out.write(pc.yellow(`${res.bad.toLocaleString('en')} bad rows skipped\n`))
    if (res.duplicates > 0) out.write(pc.yellow(`${res.duplicates.toLocaleString('en')} CVEs listed more than once (the later row kept)\n`))
    for (const p of res.problems) out.write(pc.yellow(`  ${p}\n`))
    return 0
  } catch (err) {
    out.write(pc.red(`epss:import failed: ${(err as Error).message}\n`))
    return 1
  }
}

if (require.main === module && askedForHelp(USAGE)) {
  process.exitCode = 0
} else if (require.main === module) {
  void (async () => {
    const opened = await openSourceStore()
    process.stderr.write(`source store: ${opened.where}\n`)
    try {
      process.exitCode = await runEpssImport(process.argv.slice(2), opened.store, process.stderr, { defaultUrl: opened.config.EPSS_URL })
    } finally {
      await opened.close()
    }
  })().catch((err: Error) => {
    process.stderr.write(pc.red(`epss:import failed: ${err.message}\n`))
    process.exitCode = 1
  })
}
