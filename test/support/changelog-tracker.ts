// Debian security tracker data in its real JSON format (`/tracker/data/json`: source package → CVE → releases →
// {status, repositories, fixed_version, urgency}), built from what this machine has installed: every CVE a source
// package's changelog.Debian.gz names is resolved in the version whose entry names it. A fake tracker serves it.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import { DPKG_FORMAT, parseDpkg, type InstalledPackage } from '../../lib/credentialed/inventory'

export interface TrackerRelease {
  status: 'resolved' | 'open' | 'undetermined'
  repositories: Record<string, string>
  fixed_version?: string
  urgency: string
  nodsa?: string
}
export type TrackerJson = Record<string, Record<string, { description?: string, scope?: string, releases: Record<string, TrackerRelease> }>>

/** This machine's installed packages, as the collector reads them over SSH. */
export function installedPackages (): InstalledPackage[] {
  const r = spawnSync('dpkg-query', ['-W', `-f=${DPKG_FORMAT.replace(/\\t/g, '\t').replace(/\\n/g, '\n')}`], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  if (r.status !== 0) throw new Error(`dpkg-query failed: ${r.stderr}`)
  return parseDpkg(r.stdout)
}

/** Each source package with its installed version and its binaries. */
export function installedSources (packages = installedPackages()): Map<string, { version: string, binaries: string[] }> {
  const out = new Map<string, { version: string, binaries: string[] }>()
  for (const p of packages) {
    const s = out.get(p.source)
    if (s === undefined) out.set(p.source, { version: p.sourceVersion, binaries: [p.name.replace(/:.*$/, '')] })
    else s.binaries.push(p.name.replace(/:.*$/, ''))
  }
  return out
}

/** (version, CVEs) of each entry of a Debian changelog, newest first. */
export function changelogEntries (text: string): Array<{ version: string, cves: string[] }> {
  const out: Array<{ version: string, cves: string[] }> = []
  let current: { version: string, cves: Set<string> } | null = null
  for (const line of text.split('\n')) {
    const head = /^[a-z0-9][a-z0-9.+-]* \(([^)\s]+)\) /.exec(line)
    if (head !== null) {
      if (current !== null) out.push({ version: current.version, cves: [...current.cves] })
      current = { version: head[1], cves: new Set() }
      continue
    }
    if (current === null) continue
    for (const m of line.matchAll(/CVE-\d{4}-\d{4,}/g)) current.cves.add(m[0])
  }
  if (current !== null) out.push({ version: current.version, cves: [...current.cves] })
  return out
}

/** The changelog of a source package, read from the doc directory of one of its binaries. */
export function changelogOf (binaries: string[]): string | null {
  for (const b of binaries) {
    const file = `/usr/share/doc/${b}/changelog.Debian.gz`
    if (!existsSync(file)) continue
    try {
      return gunzipSync(readFileSync(file)).toString('utf8')
    } catch {}
  }
  return null
}

export interface ChangelogTracker {
  json: TrackerJson
  /** (source, CVE) pairs resolved at or below the installed version in a release update (`+debNNuM`): fixed_by_distribution. */
  fixedByUpdate: Array<{ source: string, cve: string, fixed: string }>
}

/**
 * Tracker data for `release` from the changelogs of the given sources (all installed ones when absent): a CVE
 * is resolved in the first (oldest) changelog entry that names it.
 */
export function trackerFromChangelogs (release: string, releaseNumber: string, only?: (source: string) => boolean): ChangelogTracker {
  const json: TrackerJson = {}
  const fixedByUpdate: ChangelogTracker['fixedByUpdate'] = []
  for (const [source, s] of installedSources()) {
    if (only !== undefined && !only(source)) continue
    const text = changelogOf(s.binaries)
    if (text === null) continue
    const first = new Map<string, string>()
    for (const e of changelogEntries(text)) for (const cve of e.cves) first.set(cve, e.version)
    if (first.size === 0) continue
    const pkg: TrackerJson[string] = {}
    for (const [cve, version] of first) {
      pkg[cve] = { description: `${source}: ${cve}`, scope: 'local', releases: { [release]: { status: 'resolved', repositories: { [release]: s.version }, fixed_version: version, urgency: 'medium' } } }
      if (new RegExp(`deb${releaseNumber}u\\d+`).test(version)) fixedByUpdate.push({ source, cve, fixed: version })
    }
    json[source] = pkg
  }
  return { json, fixedByUpdate }
}
