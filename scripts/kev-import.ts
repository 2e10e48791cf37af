// npm run kev:import -- [<file | URL>] [--force] [--timeout <seconds>]
// Imports CISA's KEV catalog (JSON) into the source store; without an argument, from CISA's feed.
// A download that the server answers with 304 (unchanged since the last import) changes nothing.

import { askedForHelp } from './help'
import pc from 'picocolors'
import { DEFAULT_KEV_URL, importKev } from '../lib/exploit/kev'
import type { SourceStore } from '../lib/sources/source-store'
import { openSourceStore } from './open-source-store'
import { parseImportArgs, type ImportCliOptions, type Out } from './exploit-import-args'

const USAGE = 'usage: npm run kev:import -- [<known_exploited_vulnerabilities.json | URL>] [--force] [--timeout <seconds>]\n'

/** The command without its process: returns the exit code (0 done or unchanged, 1 failed, 2 usage). */
export async function runKevImport (argv: string[], store: SourceStore, out: Out, opts: ImportCliOptions = {}): Promise<number> {
  const args = parseImportArgs(argv)
  if ('error' in args) {
    out.write(pc.red(args.error + '\n') + USAGE)
    return 2
  }
  const source = args.source ?? opts.defaultUrl ?? DEFAULT_KEV_URL
  out.write(`KEV catalog from ${source}\n`)
  try {
    const res = await importKev(source, store, { force: args.force, timeoutMs: args.timeoutMs ?? opts.timeoutMs })
    if (res.status === 'not-modified') {
      out.write(pc.green(`unchanged since the last import (catalog ${res.meta?.catalogVersion ?? 'of unknown version'}); nothing to do\n`))
      return 0
    }
    const ransomware = await countRansomware(store)
    out.write(pc.green(`catalog ${res.meta.catalogVersion ?? '(no version)'} released ${res.meta.dateReleased ?? '(no date)'}: ` +
      `${res.count.toLocaleString('en')} CVEs stored, ${ransomware} with known ransomware use\n`))
    for (const p of res.problems) out.write(pc.yellow(`  ${p}\n`))
    return 0
  } catch (err) {
    out.write(pc.red(`kev:import failed: ${(err as Error).message}\n`))
    return 1
  }
}

async function countRansomware (store: SourceStore): Promise<number> {
  let n = 0
  for await (const batch of store.scan('kev', 2000)) for (const [, v] of batch) if ((JSON.parse(v) as { ransomware: boolean }).ransomware) n++
  return n
}

if (require.main === module && askedForHelp(USAGE)) {
  process.exitCode = 0
} else if (require.main === module) {
  void (async () => {
    const opened = await openSourceStore()
    process.stderr.write(`source store: ${opened.where}\n`)
    try {
      process.exitCode = await runKevImport(process.argv.slice(2), opened.store, process.stderr, { defaultUrl: opened.config.KEV_URL })
    } finally {
      await opened.close()
    }
  })().catch((err: Error) => {
    process.stderr.write(pc.red(`kev:import failed: ${err.message}\n`))
    process.exitCode = 1
  })
}
