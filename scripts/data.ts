// npm run data -- status | import <source> <file | directory | URL>… | sync <source>… | sync --all
//                  | export <bundle> [--sign-key k.pem] | import <bundle> [--verify-key k.pub.pem]
// Every vulnerability data source through its descriptor (lib/sources/registry.ts): what each holds and how
// old it is, an import from files or URLs, a sync from the official (or configured, or given) URL. Writes
// where the service reads: Redis when REDIS_URL is set, otherwise the embedded files.

import { parseArgs } from 'node:util'
import pino from 'pino'
import pc from 'picocolors'
import { openBackends } from '../lib/backends'
import { loadConfig, type Config } from '../lib/config'
import type { ImportOutcome, Progress, WritableContext } from '../lib/sources/descriptor'
import { DATA_SOURCES, findSource, sourceStatuses } from '../lib/sources/registry'
import { bundleKey, exportBundle, importBundle } from '../lib/sources/bundle'

const NAMES = DATA_SOURCES.map((d) => d.name).join(', ')

export const USAGE = `usage: npm run data -- status [--json]
       npm run data -- import <source> <file | directory | URL>… [--releases a,b] [--complete] [--force] [--json]
       npm run data -- sync <source>… | --all [--url <URL>] [--releases a,b] [--force] [--json]
       npm run data -- export <bundle-file> [--sign-key <ed25519-private.pem>] [--json]
       npm run data -- import <bundle-file> [--verify-key <ed25519-public.pem>] [--json]
sources: ${NAMES}
A bundle holds every source of this install in one checksummed file (signed with --sign-key), for installs
without access to the feeds; import verifies it whole (and its signature, with --verify-key) before writing.
`

interface Out { write: (s: string) => unknown }

function age (seconds: number | null): string {
  if (seconds === null) return ''
  if (seconds < 3600) return `${Math.round(seconds / 60)} min old`
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h old`
  return `${Math.round(seconds / 86_400)} days old`
}

function bytes (n: number | null): string {
  if (n === null) return ''
  return n < 1 << 20 ? `${(n / 1024).toFixed(0)} KB` : `${(n / (1 << 20)).toFixed(1)} MB`
}

function progressLine (err: Out): (p: Progress) => void {
  return (p) => {
    const of = p.total !== null ? ` of ${p.total.toLocaleString('en')}` : ''
    err.write(pc.dim(`  ${p.phase}: ${p.done.toLocaleString('en')}${of} ${p.unit}${p.what !== undefined ? ` (${p.what})` : ''}\n`))
  }
}

/** The command without its process; returns the exit code (0 done, 1 a source failed, 2 usage). */
export async function runData (argv: string[], ctx: WritableContext, out: Out, err: Out = out, opts: { config?: Partial<Config>, signal?: AbortSignal } = {}): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: argv.filter((a) => a !== '--'),
      allowPositionals: true,
      options: {
        json: { type: 'boolean' },
        all: { type: 'boolean' },
        url: { type: 'string' },
        releases: { type: 'string' },
        complete: { type: 'boolean' },
        force: { type: 'boolean' },
        'sign-key': { type: 'string' },
        'verify-key': { type: 'string' },
        help: { type: 'boolean', short: 'h' }
      }
    })
  } catch (e) {
    err.write(`${(e as Error).message}\n${USAGE}`)
    return 2
  }
  const { values, positionals } = parsed
  const [command, ...rest] = positionals
  if (values.help === true) {
    out.write(USAGE)
    return 0
  }
  const releases = values.releases?.split(',').map((s) => s.trim()).filter(Boolean)
  const transfer = { releases, force: values.force, complete: values.complete, config: opts.config, signal: opts.signal, progress: values.json === true ? undefined : progressLine(err) }

  if (command === 'status' && rest.length === 0) {
    const statuses = await sourceStatuses(ctx)
    if (values.json === true) {
      out.write(JSON.stringify(statuses, null, 2) + '\n')
      return 0
    }
    for (const s of statuses) {
      const what = s.imported
        ? `${s.records.toLocaleString('en')} ${s.unit}, imported ${s.importedAt ?? '?'}${s.dataDate !== null ? `, data of ${s.dataDate}` : ''}` +
          [age(s.ageSeconds), bytes(s.sizeBytes)].filter(Boolean).map((x) => `, ${x}`).join('')
        : pc.yellow('not imported')
      out.write(`${pc.bold(s.name.padEnd(15))} ${s.role.padEnd(10)} ${what}\n`)
    }
    return 0
  }

  const run = async (name: string, work: () => Promise<ImportOutcome>): Promise<{ name: string, outcome?: ImportOutcome, error?: string }> => {
    try {
      const outcome = await work()
      if (values.json !== true) {
        out.write(pc.green(`${outcome.summary}\n`))
        for (const p of outcome.problems.slice(0, 5)) out.write(pc.yellow(`  ${p}\n`))
      }
      return { name, outcome }
    } catch (e) {
      if (values.json !== true) err.write(pc.red(`${name}: ${(e as Error).message}\n`))
      return { name, error: (e as Error).message }
    } finally {
      await ctx.sources.flush()
      await ctx.nvd.flush()
    }
  }

  if (command === 'export' && rest.length === 1) return await bundleCommand('export', rest[0])
  if (command === 'import' && rest.length === 1 && findSource(rest[0]) === undefined) return await bundleCommand('import', rest[0])

  async function bundleCommand (what: 'export' | 'import', file: string): Promise<number> {
    try {
      if (what === 'export') {
        const key = values['sign-key'] === undefined ? undefined : bundleKey(values['sign-key'], 'private')
        const r = await exportBundle(ctx, file, { signingKey: key })
        if (values.json === true) out.write(JSON.stringify(r, null, 2) + '\n')
        else out.write(pc.green(`${file}: ${r.nvdRecords.toLocaleString('en')} NVD records, ${Object.keys(r.tables).length} source tables, ${r.signed ? 'signed' : 'unsigned'}, sha256 ${r.sha256}\n`))
      } else {
        const key = values['verify-key'] === undefined ? undefined : bundleKey(values['verify-key'], 'public')
        const r = await importBundle(ctx, file, { verifyKey: key })
        if (values.json === true) out.write(JSON.stringify(r, null, 2) + '\n')
        else {
          out.write(pc.green(`${file} (made ${r.createdAt}): ${r.nvdRecords.toLocaleString('en')} NVD records, ${Object.keys(r.tables).length} source tables imported\n`))
          if (!r.signatureVerified) err.write(pc.yellow(r.signed ? '  signed, but not verified: give --verify-key to check who made it\n' : '  unsigned: its checksum was verified, not who made it\n'))
        }
      }
      return 0
    } catch (e) {
      err.write(pc.red(`data ${what}: ${(e as Error).message}\n`))
      return 1
    }
  }

  let results: Array<{ name: string, outcome?: ImportOutcome, error?: string }>
  if (command === 'import' && rest.length >= 2) {
    const d = findSource(rest[0])
    if (d === undefined) {
      err.write(`no data source named '${rest[0]}' (sources: ${NAMES})\n`)
      return 2
    }
    results = [await run(d.name, async () => await d.import(ctx, rest.slice(1), transfer))]
  } else if (command === 'sync' && (rest.length > 0) !== (values.all === true)) {
    const names = values.all === true ? DATA_SOURCES.map((d) => d.name) : rest
    const unknown = names.filter((n) => findSource(n) === undefined)
    if (unknown.length > 0) {
      err.write(`no data source named ${unknown.map((n) => `'${n}'`).join(', ')} (sources: ${NAMES})\n`)
      return 2
    }
    if (values.url !== undefined && names.length !== 1) {
      err.write('--url names the URL of one source\n')
      return 2
    }
    results = []
    for (const name of names) {
      const d = findSource(name)!
      results.push(await run(name, async () => await d.sync(ctx, { ...transfer, url: values.url })))
    }
  } else {
    err.write(USAGE)
    return 2
  }
  if (values.json === true) out.write(JSON.stringify(results, null, 2) + '\n')
  return results.some((r) => r.error !== undefined) ? 1 : 0
}

async function main (): Promise<number> {
  const config = loadConfig()
  const backends = await openBackends(config, pino({ level: 'warn' }, pino.destination(2)), { results: false })
  process.stderr.write(`data: ${backends.kind === 'redis' ? 'redis' : `files ${config.NVD_INDEX_FILE}, ${config.SOURCES_FILE || '(sources in memory only)'}`}\n`)
  const ac = new AbortController()
  process.once('SIGINT', () => ac.abort())
  try {
    const { cve, sources } = backends.indexes
    return await runData(process.argv.slice(2), { nvd: cve, sources }, process.stdout, process.stderr, { config, signal: ac.signal })
  } finally {
    await backends.close()
  }
}

if (require.main === module) {
  main().then((code) => { process.exitCode = code }, (e: Error) => {
    process.stderr.write(pc.red(`data failed: ${e.message}\n`))
    process.exitCode = 1
  })
}
