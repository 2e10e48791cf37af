// Import of the Debian security tracker's JSON (`/tracker/data/json`, about 75 MB):
// `{ "<source package>": { "<CVE>": { description, scope, debianbug, releases: { "<codename>":
// { status, repositories, fixed_version, urgency, nodsa, nodsa_reason } } } } }`.
// Streamed one source package at a time, so only the largest package's CVEs are ever held.

import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import type { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGunzip } from 'node:zlib'
import type { Entry, SourceStore } from '../sources/source-store'
import {
  CVE_ID, defineTracker, distroKey, distroTable, encodeEntries, finishDistroImport,
  type DistroCveEntry, type DistroImportResult
} from './entries'

export const DEBIAN_TRACKER_URL = 'https://security-tracker.debian.org/tracker/data/json'
export const DEBIAN_TRACKER = defineTracker({ family: 'debian', source: 'debian-tracker', title: 'Debian security tracker' })

export interface DebianImportOptions {
  /** Codenames to keep (default: every release in the data). */
  releases?: string[]
  /** Store entries per `replace` batch (default 2000). */
  batchSize?: number
  /** Whether a stream source is gzip-compressed (file sources are sniffed). */
  gzip?: boolean
  /** Recorded with the import (file path or URL); defaults to the path. */
  from?: string
  /** HTTP validators of the data, kept so a sync can ask for changes only. */
  etag?: string
  lastModified?: string
  /** Size of the downloaded file, recorded with the import. */
  bytes?: number
}

interface TrackerRelease {
  status?: unknown
  fixed_version?: unknown
  urgency?: unknown
  nodsa?: unknown
  nodsa_reason?: unknown
}

const MAX_ERRORS = 100

/** One release's verdict from the tracker's own words; null when the entry says nothing usable. */
export function trackerVerdict (r: TrackerRelease): DistroCveEntry | null {
  const fixed = typeof r.fixed_version === 'string' && r.fixed_version !== '' ? r.fixed_version : null
  const urgency = typeof r.urgency === 'string' && r.urgency !== '' ? r.urgency : null
  const entry = (status: DistroCveEntry['status'], fixedVersion: string | null): DistroCveEntry => {
    const e: DistroCveEntry = { status, fixedVersion, urgency, source: DEBIAN_TRACKER.source }
    const note = [typeof r.nodsa === 'string' && r.nodsa, typeof r.nodsa_reason === 'string' && r.nodsa_reason]
      .filter((s): s is string => typeof s === 'string' && s !== '').join(': ')
    if (note) e.note = `no DSA: ${note}`
    return e
  }
  switch (r.status) {
    // The tracker writes `<not-affected>` as resolved in version 0.
    case 'resolved':
      if (fixed === '0') return entry('not-affected', null)
      return fixed ? entry('resolved', fixed) : null
    case 'open': return entry('open', null)
    case 'undetermined': return entry('undetermined', null)
    default: return null
  }
}

async function isGzipFile (file: string): Promise<boolean> {
  const fh = await open(file, 'r')
  try {
    const { bytesRead, buffer } = await fh.read(Buffer.alloc(2), 0, 2, 0)
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b
  } finally {
    await fh.close()
  }
}

/** stream-json is ESM-only; this CommonJS module loads it with import(). */
async function objectStages (): Promise<NodeJS.ReadWriteStream[]> {
  const [{ parser }, { streamObject }] = await Promise.all([
    import('stream-json'),
    import('stream-json/streamers/stream-object.js')
  ])
  return [parser.asStream(), streamObject.asStream()]
}

/**
 * Read a tracker dump (file path, `.gz` or plain, or a readable stream) into the store, replacing
 * the Debian table as a whole once the new data is complete.
 */
export async function importDebianTracker (source: string | Readable, store: SourceStore, opts: DebianImportOptions = {}): Promise<DistroImportResult> {
  const batchSize = Math.max(1, opts.batchSize ?? 2000)
  const keep = opts.releases?.length ? new Set(opts.releases) : null
  const result: DistroImportResult = { packages: 0, cves: 0, skipped: 0, errors: [] }
  const note = (msg: string): void => {
    result.skipped++
    if (result.errors.length < MAX_ERRORS) result.errors.push(msg)
  }

  const where = typeof source === 'string' ? source : 'stream'
  let gzip = opts.gzip === true
  if (typeof source === 'string') {
    try {
      gzip = await isGzipFile(source)
    } catch (err) {
      throw new Error(`cannot import the Debian security tracker data from ${where}: ${(err as Error).message}`)
    }
  }
  const input = typeof source === 'string' ? createReadStream(source) : source
  const stages: NodeJS.ReadWriteStream[] = []
  if (gzip) stages.push(createGunzip())
  stages.push(...await objectStages())

  // The parse runs as a pipeline feeding a small queue that `replace` drains batch by batch, so
  // reading waits while the store writes.
  const queue: Entry[][] = []
  let wake: (() => void) | null = null
  let ended = false
  let failure: Error | null = null
  let room: (() => void) | null = null
  const signal = (): void => { const w = wake; wake = null; w?.() }

  let batch: Entry[] = []
  const push = async (): Promise<void> => {
    if (!batch.length) return
    queue.push(batch)
    batch = []
    signal()
    while (queue.length >= 2 && !failure) await new Promise<void>((resolve) => { room = resolve })
    if (failure) throw failure
  }

  const consume = async (items: AsyncIterable<{ key: string, value: unknown }>): Promise<void> => {
    for await (const { key: pkg, value } of items) {
      if (typeof value !== 'object' || value === null) {
        note(`${pkg}: not an object`)
        continue
      }
      const byRelease = new Map<string, Map<string, DistroCveEntry>>()
      for (const [cve, info] of Object.entries(value as Record<string, unknown>)) {
        // TEMP- and other tracker-internal ids have no CVE record to match against.
        if (!CVE_ID.test(cve)) continue
        const releases = (info as { releases?: unknown } | null)?.releases
        if (typeof releases !== 'object' || releases === null) {
          note(`${pkg} ${cve}: no releases`)
          continue
        }
        for (const [release, r] of Object.entries(releases as Record<string, TrackerRelease>)) {
          if (!release || (keep && !keep.has(release))) continue
          const verdict = typeof r === 'object' && r !== null ? trackerVerdict(r) : null
          if (!verdict) {
            note(`${pkg} ${cve} ${release}: unusable status ${JSON.stringify((r as TrackerRelease | null)?.status)}`)
            continue
          }
          let m = byRelease.get(release)
          if (!m) byRelease.set(release, m = new Map())
          m.set(cve, verdict)
        }
      }
      for (const [release, entries] of byRelease) {
        batch.push([distroKey({ family: 'debian', release, source: pkg }), encodeEntries(entries)])
        result.packages++
        result.cves += entries.size
      }
      if (batch.length >= batchSize) await push()
    }
    await push()
  }

  const reading = (pipeline as unknown as (...args: unknown[]) => Promise<void>)(input, ...stages, consume)
    .catch((err: Error) => { failure = err })
    .finally(() => { ended = true; signal() })

  async function * batches (): AsyncIterable<Entry[]> {
    for (;;) {
      if (queue.length) {
        const b = queue.shift()!
        const r = room as (() => void) | null
        room = null
        r?.()
        yield b
        continue
      }
      if (failure) throw failure
      if (ended) return
      await new Promise<void>((resolve) => { wake = resolve })
    }
  }

  try {
    await store.replace(distroTable('debian'), batches())
  } catch (err) {
    failure ??= err as Error
    const r = room as (() => void) | null
    room = null
    r?.()
  }
  await reading
  if (failure) {
    throw new Error(`cannot import the Debian security tracker data from ${where}: ${(failure as Error).message}`)
  }
  await finishDistroImport(store, 'debian', result, opts.from ?? (typeof source === 'string' ? source : 'stream'), opts)
  return result
}
