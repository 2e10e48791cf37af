// Import of Ubuntu's CVE data in OSV format (canonical/ubuntu-security-notices, `osv/cve/`): one
// record per CVE, with `affected[]` entries per (ecosystem `Ubuntu:22.04:LTS` /
// `Ubuntu:Pro:18.04:LTS`, source package) and ECOSYSTEM ranges whose `fixed` event is the first
// fixed package version. A release the record does not list is not stated either way.

import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import type { Entry, SourceStore } from '../sources/source-store'
import {
  CVE_ID, defineTracker, distroKey, distroTable, encodeEntries, finishDistroImport,
  type DistroCveEntry, type DistroImportResult
} from './entries'
import { UBUNTU_RELEASES } from './package'

export const UBUNTU_OSV = defineTracker({ family: 'ubuntu', source: 'ubuntu-osv', title: 'Ubuntu OSV' })

export interface UbuntuImportOptions {
  /** Codenames to keep (default: all). */
  releases?: string[]
  /** Also take Ubuntu Pro (ESM) fixes where the standard archive has none (default true). */
  includePro?: boolean
  batchSize?: number
  from?: string
  etag?: string
  lastModified?: string
  bytes?: number
}

interface OsvEvent { introduced?: string, fixed?: string, last_affected?: string }
interface OsvAffected {
  package?: { ecosystem?: string, name?: string }
  ranges?: Array<{ type?: string, events?: OsvEvent[] }>
  ecosystem_specific?: { ubuntu_priority?: string }
  database_specific?: { ubuntu_priority?: string }
}
interface OsvRecord {
  id?: string
  upstream?: string[]
  related?: string[]
  aliases?: string[]
  severity?: Array<{ type?: string, score?: string }>
  affected?: OsvAffected[]
}

const MAX_ERRORS = 100

/** `Ubuntu:22.04:LTS` → jammy; `Ubuntu:Pro:18.04:LTS` → bionic (Pro); FIPS and other streams → null. */
export function ubuntuRelease (ecosystem: string): { release: string, pro: boolean } | null {
  const m = /^Ubuntu:(Pro:)?(\d{2}\.\d{2})(?::LTS)?$/.exec(ecosystem)
  if (!m || !UBUNTU_RELEASES[m[2]]) return null
  return { release: UBUNTU_RELEASES[m[2]], pro: m[1] !== undefined }
}

/** The CVE an Ubuntu OSV record is about: `upstream[]` in newer records, `related[]` in older ones. */
export function ubuntuCveId (rec: OsvRecord): string | null {
  for (const list of [rec.upstream, rec.aliases, rec.related]) {
    const hit = list?.find((id) => CVE_ID.test(id))
    if (hit) return hit
  }
  const own = rec.id?.replace(/^UBUNTU-/, '')
  return own && CVE_ID.test(own) ? own : null
}

function priorityOf (rec: OsvRecord, a: OsvAffected): string | null {
  return a.ecosystem_specific?.ubuntu_priority ?? a.database_specific?.ubuntu_priority ??
    rec.severity?.find((s) => s.type === 'Ubuntu')?.score ?? null
}

/** One affected[] entry's verdict: fixed at its `fixed` event, else still open. */
export function osvVerdict (rec: OsvRecord, a: OsvAffected, pro: boolean): DistroCveEntry | null {
  const ranges = (a.ranges ?? []).filter((r) => r.type === undefined || r.type === 'ECOSYSTEM')
  if (!ranges.length) return null
  const events = ranges.flatMap((r) => r.events ?? [])
  const fixed = events.find((e) => typeof e.fixed === 'string' && e.fixed !== '')?.fixed ?? null
  const introduced = events.find((e) => typeof e.introduced === 'string' && e.introduced !== '0')?.introduced
  const e: DistroCveEntry = { status: fixed ? 'resolved' : 'open', fixedVersion: fixed, urgency: priorityOf(rec, a), source: UBUNTU_OSV.source }
  if (pro) e.note = 'Ubuntu Pro'
  if (introduced) e.introduced = introduced
  return e
}

async function jsonFiles (p: string): Promise<string[]> {
  const s = await stat(p)
  if (!s.isDirectory()) return [p]
  const out: string[] = []
  for (const d of await readdir(p, { withFileTypes: true, recursive: true })) {
    if (d.isFile() && d.name.endsWith('.json')) out.push(path.join(d.parentPath ?? (d as unknown as { path: string }).path, d.name))
  }
  return out.sort()
}

/**
 * Read OSV records (files holding one record or an array of them, or directories of such files)
 * and replace the Ubuntu table with what they say.
 */
export async function importUbuntuOsv (sources: string | string[], store: SourceStore, opts: UbuntuImportOptions = {}): Promise<DistroImportResult & { records: number }> {
  const keep = opts.releases?.length ? new Set(opts.releases) : null
  const includePro = opts.includePro !== false
  const result = { packages: 0, cves: 0, skipped: 0, errors: [] as string[], records: 0 }
  const note = (msg: string): void => {
    result.skipped++
    if (result.errors.length < MAX_ERRORS) result.errors.push(msg)
  }
  // Records are per CVE and the store is per package, so the verdicts are gathered first.
  const byKey = new Map<string, Map<string, DistroCveEntry>>()
  const list = Array.isArray(sources) ? sources : [sources]
  for (const src of list) {
    for (const file of await jsonFiles(src)) {
      let parsed: unknown
      try {
        parsed = JSON.parse(await readFile(file, 'utf8'))
      } catch (err) {
        note(`${file}: ${(err as Error).message}`)
        continue
      }
      for (const rec of (Array.isArray(parsed) ? parsed : [parsed]) as OsvRecord[]) {
        const cve = typeof rec === 'object' && rec !== null ? ubuntuCveId(rec) : null
        if (!cve) {
          note(`${file}: record ${JSON.stringify(rec?.id ?? null)} names no CVE`)
          continue
        }
        result.records++
        for (const a of rec.affected ?? []) {
          const eco = a.package?.ecosystem
          const name = a.package?.name
          if (!eco || !name) continue
          const rel = ubuntuRelease(eco)
          if (!rel || (rel.pro && !includePro) || (keep && !keep.has(rel.release))) continue
          const verdict = osvVerdict(rec, a, rel.pro)
          if (!verdict) {
            note(`${cve} ${eco} ${name}: no ECOSYSTEM range`)
            continue
          }
          const key = distroKey({ family: 'ubuntu', release: rel.release, source: name })
          let m = byKey.get(key)
          if (!m) byKey.set(key, m = new Map())
          const had = m.get(cve)
          // The standard archive's statement wins over a Pro one for the same release.
          if (had && had.note !== 'Ubuntu Pro' && rel.pro) continue
          m.set(cve, verdict)
        }
      }
    }
  }
  const batchSize = Math.max(1, opts.batchSize ?? 2000)
  function * batches (): Iterable<Entry[]> {
    let batch: Entry[] = []
    for (const [key, entries] of byKey) {
      batch.push([key, encodeEntries(entries)])
      result.packages++
      result.cves += entries.size
      if (batch.length >= batchSize) {
        yield batch
        batch = []
      }
    }
    if (batch.length) yield batch
  }
  await store.replace(distroTable('ubuntu'), batches())
  await finishDistroImport(store, 'ubuntu', result, opts.from ?? list.join(', '), opts)
  return result
}
