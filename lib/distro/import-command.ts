// The core of `npm run distro:import`: argument handling and reporting around the importers, with
// the store handed in so the script only has to open one.

import { parseArgs } from 'node:util'
import type { SourceStore } from '../sources/source-store'
import { importDebianTracker } from './debian-tracker'
import type { DistroImportResult } from './entries'
import { syncDebianTracker, syncUbuntuOsv, type SyncResult } from './sync'
import { importUbuntuOsv } from './ubuntu-osv'

export const DISTRO_IMPORT_USAGE = `usage: distro:import [<Debian tracker JSON file | URL>] [--ubuntu <OSV file | directory | URL>]…
  [--releases bookworm,trixie,…] [--download-dir <dir>]

A file is imported as it is (.json or .json.gz); a URL is fetched only when it changed since the last
import (ETag / Last-Modified) and an interrupted download resumes where it stopped. With no file and no
--ubuntu, the Debian tracker is synced from DEBIAN_TRACKER_URL.`

export interface DistroImportDeps {
  /** Passed to the syncs; tests point them at a fake server's fetch behaviour. */
  fetch?: typeof fetch
  retryDelayMs?: number
  /** Where the Debian tracker comes from when neither a file nor --ubuntu is named (DEBIAN_TRACKER_URL). */
  defaultUrl?: string
}

const isUrl = (s: string): boolean => /^https?:\/\//i.test(s)

function summary (what: string, r: DistroImportResult): string {
  const skipped = r.skipped ? `, ${r.skipped} skipped (${r.errors.slice(0, 3).join('; ')})` : ''
  return `${what}: ${r.cves} CVE verdicts for ${r.packages} release/source packages${skipped}`
}

function syncLine (what: string, s: SyncResult): string {
  if (!s.imported) return `${what}: not modified since the last import`
  const resumed = s.download.resumed ? `, resumed ${s.download.resumed}×` : ''
  return `${summary(what, s.imported)} (downloaded ${s.download.bytes} bytes${resumed})`
}

/** Run the command; returns the exit code. Lines go to `out`, errors to `err`. */
export async function runDistroImport (argv: string[], store: SourceStore, out: (line: string) => void,
  err: (line: string) => void = out, deps: DistroImportDeps = {}): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        ubuntu: { type: 'string', multiple: true },
        releases: { type: 'string' },
        'download-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' }
      }
    })
  } catch (e) {
    err((e as Error).message)
    err(DISTRO_IMPORT_USAGE)
    return 2
  }
  const { values, positionals } = parsed
  if (values.help) {
    out(DISTRO_IMPORT_USAGE)
    return 0
  }
  const ubuntu = values.ubuntu ?? []
  const fallback = positionals.length === 0 && ubuntu.length === 0 ? deps.defaultUrl : undefined
  if (positionals.length > 1 || (positionals.length === 0 && ubuntu.length === 0 && fallback === undefined)) {
    err(DISTRO_IMPORT_USAGE)
    return 2
  }
  const releases = values.releases?.split(',').map((s) => s.trim()).filter(Boolean)
  const common = { releases, dir: values['download-dir'], fetch: deps.fetch, retryDelayMs: deps.retryDelayMs }
  try {
    const debian = positionals[0] ?? fallback
    if (debian !== undefined) {
      if (isUrl(debian)) out(syncLine('Debian security tracker', await syncDebianTracker(store, { ...common, url: debian })))
      else out(summary('Debian security tracker', await importDebianTracker(debian, store, { releases })))
    }
    const urls = ubuntu.filter(isUrl)
    const paths = ubuntu.filter((u) => !isUrl(u))
    if (urls.length > 1 || (urls.length && paths.length)) {
      err('--ubuntu takes either one URL or files and directories')
      return 2
    }
    if (urls.length) out(syncLine('Ubuntu OSV', await syncUbuntuOsv(store, { ...common, url: urls[0] })))
    if (paths.length) {
      const r = await importUbuntuOsv(paths, store, { releases })
      out(`${summary('Ubuntu OSV', r)} from ${r.records} records`)
    }
  } catch (e) {
    err((e as Error).message)
    return 1
  }
  return 0
}
