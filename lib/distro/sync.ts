// Sync of tracker data from its official URL: a conditional GET (ETag / Last-Modified, so an
// unchanged 75 MB file costs one 304), a download into a partial file that resumes with Range
// after a dropped connection, then the same import as from a local file.

import { createWriteStream } from 'node:fs'
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { Readable } from 'node:stream'
import type { SourceStore } from '../sources/source-store'
import { DEBIAN_TRACKER_URL, importDebianTracker, type DebianImportOptions } from './debian-tracker'
import { readImportMeta, type DistroImportResult } from './entries'
import type { DistroFamily } from './family'
import { importUbuntuOsv, type UbuntuImportOptions } from './ubuntu-osv'

export interface DownloadOptions {
  url: string
  /** Where the complete file ends up; `<dest>.partial` holds an unfinished download. */
  dest: string
  /** Validators of the copy already imported: sent as If-None-Match / If-Modified-Since. */
  etag?: string
  lastModified?: string
  /** Attempts in all, resumes after dropped connections included (default 5). */
  attempts?: number
  /** Pause before attempt n is n × this (default 1000 ms). */
  retryDelayMs?: number
  fetch?: typeof fetch
  signal?: AbortSignal
  /** Bytes of the file so far (a resumed download starts where it stopped) and its size when the server says. */
  onProgress?: (bytes: number, total: number | null) => void
}

export interface DownloadResult {
  status: 'downloaded' | 'not-modified'
  /** Size of the complete file. */
  bytes: number
  /** How many times a partial download was continued with Range. */
  resumed: number
  etag?: string
  lastModified?: string
}

interface PartialInfo { url: string, etag?: string, lastModified?: string }

async function sizeOf (file: string): Promise<number> {
  try {
    return (await stat(file)).size
  } catch {
    return 0
  }
}

async function readPartialInfo (file: string, url: string): Promise<PartialInfo | null> {
  try {
    const info = JSON.parse(await readFile(file, 'utf8')) as PartialInfo
    return info.url === url ? info : null
  } catch {
    return null
  }
}

const sleep = async (ms: number, signal?: AbortSignal): Promise<void> => await new Promise((resolve) => {
  if (ms <= 0 || signal?.aborted) return resolve()
  const t = setTimeout(resolve, ms)
  signal?.addEventListener('abort', () => { clearTimeout(t); resolve() }, { once: true })
})

/**
 * Fetch `url` into `dest`. A partial file left by an interrupted run is continued when the server
 * still serves the same version (If-Range); otherwise the download starts over.
 */
export async function downloadResumable (opts: DownloadOptions): Promise<DownloadResult> {
  const doFetch = opts.fetch ?? globalThis.fetch
  const partial = `${opts.dest}.partial`
  const infoFile = `${partial}.json`
  const attempts = Math.max(1, opts.attempts ?? 5)
  const delay = opts.retryDelayMs ?? 1000
  await mkdir(path.dirname(opts.dest), { recursive: true })
  let resumed = 0
  let lastError: Error | null = null
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (attempt > 1) await sleep(delay * (attempt - 1), opts.signal)
    opts.signal?.throwIfAborted()
    const info = await readPartialInfo(infoFile, opts.url)
    const have = info && (info.etag || info.lastModified) ? await sizeOf(partial) : 0
    // Compressed transfer would make byte ranges refer to a different representation.
    const headers: Record<string, string> = { 'accept-encoding': 'identity' }
    if (have > 0 && info) {
      headers.range = `bytes=${have}-`
      headers['if-range'] = (info.etag ?? info.lastModified)!
    } else {
      if (opts.etag) headers['if-none-match'] = opts.etag
      if (opts.lastModified) headers['if-modified-since'] = opts.lastModified
    }
    let res: Response
    try {
      res = await doFetch(opts.url, { headers, signal: opts.signal, redirect: 'follow' })
    } catch (err) {
      lastError = err as Error
      continue
    }
    if (res.status === 304) {
      await res.body?.cancel()
      return { status: 'not-modified', bytes: 0, resumed, etag: opts.etag, lastModified: opts.lastModified }
    }
    const range = /^bytes (\d+)-/.exec(res.headers.get('content-range') ?? '')
    const append = res.status === 206 && range !== null && Number(range[1]) === have && have > 0
    if (res.status !== 200 && !append) {
      await res.body?.cancel()
      if (res.status === 206 || res.status === 416) {
        // The server cannot continue where we stopped: start over on the next attempt.
        await rm(infoFile, { force: true })
        lastError = new Error(`${opts.url}: cannot resume (HTTP ${res.status})`)
        continue
      }
      lastError = new Error(`${opts.url}: HTTP ${res.status} ${res.statusText}`)
      if (res.status >= 500 || res.status === 429) continue
      throw lastError
    }
    const etag = res.headers.get('etag') ?? undefined
    const lastModified = res.headers.get('last-modified') ?? undefined
    if (append) {
      resumed++
    } else {
      const fresh: PartialInfo = { url: opts.url }
      if (etag) fresh.etag = etag
      if (lastModified) fresh.lastModified = lastModified
      await writeFile(infoFile, JSON.stringify(fresh))
    }
    if (!res.body) throw new Error(`${opts.url}: empty response`)
    const length = Number(res.headers.get('content-length'))
    const total = res.headers.has('content-length') && Number.isFinite(length) ? (append ? have : 0) + length : null
    let got = append ? have : 0
    // Every byte received reaches the file before its size is measured, also when the connection drops: a pipeline
    // destroyed the file stream with what it had not written yet (all of it while the file was still opening), so
    // the next attempt fetched those bytes again, or started over, depending on the machine's load.
    const out = createWriteStream(partial, { flags: append ? 'a' : 'w' })
    // A write that fails (a full disk) fails the attempt; it must never be an unhandled 'error' event.
    let writeError: Error | null = null
    out.on('error', (err) => { writeError ??= err })
    let failed: Error | null = null
    try {
      for await (const chunk of Readable.fromWeb(res.body as import('node:stream/web').ReadableStream)) {
        got += (chunk as Uint8Array).length
        opts.onProgress?.(got, total)
        if (!out.write(chunk)) {
          if (writeError !== null || out.destroyed) break
          await once(out, 'drain')
        }
      }
    } catch (err) {
      failed = err as Error
    }
    if (writeError === null && !out.destroyed) await new Promise<void>((resolve) => { out.once('close', resolve); out.end() })
    else out.destroy()
    failed = writeError ?? failed
    if (failed !== null) {
      lastError = failed
      continue
    }
    const size = await sizeOf(partial)
    if (total !== null && size !== total) {
      lastError = new Error(`${opts.url}: connection closed after ${size} bytes`)
      continue
    }
    const kept = (await readPartialInfo(infoFile, opts.url)) ?? { url: opts.url }
    await rename(partial, opts.dest)
    await rm(infoFile, { force: true })
    return { status: 'downloaded', bytes: size, resumed, etag: kept.etag, lastModified: kept.lastModified }
  }
  throw new Error(`cannot download ${opts.url} after ${attempts} attempts: ${lastError?.message ?? 'unknown error'}`)
}

export interface SyncOptions {
  /** Official URL by default; tests and mirrors set their own. */
  url?: string
  /** Where downloads are kept between runs (default: a folder in the OS temp dir). */
  dir?: string
  attempts?: number
  retryDelayMs?: number
  fetch?: typeof fetch
  signal?: AbortSignal
  /** Download progress, as downloadResumable reports it. */
  onProgress?: (bytes: number, total: number | null) => void
}

export interface SyncResult {
  download: DownloadResult
  /** Absent when the server said nothing changed since the last import. */
  imported?: DistroImportResult
}

export function defaultDir (): string {
  return path.join(os.tmpdir(), 'vulnscan-distro')
}

/** Download a family's data into the work directory unless it is unchanged since that family's last import. */
async function downloadChanged (store: SourceStore, family: DistroFamily, url: string, name: string, opts: SyncOptions): Promise<{ dest: string, download: DownloadResult }> {
  const last = await readImportMeta(store, family)
  const same = last?.from === url
  const dest = path.join(opts.dir ?? defaultDir(), name)
  const download = await downloadResumable({
    url,
    dest,
    etag: same ? last?.etag : undefined,
    lastModified: same ? last?.lastModified : undefined,
    attempts: opts.attempts,
    retryDelayMs: opts.retryDelayMs,
    fetch: opts.fetch,
    signal: opts.signal,
    onProgress: opts.onProgress
  })
  return { dest, download }
}

/** Download the Debian tracker JSON when it changed since the last import, then import it. */
export async function syncDebianTracker (store: SourceStore, opts: SyncOptions & Pick<DebianImportOptions, 'releases'> = {}): Promise<SyncResult> {
  const url = opts.url ?? DEBIAN_TRACKER_URL
  const { dest, download } = await downloadChanged(store, 'debian', url, 'debian-tracker.json', opts)
  if (download.status === 'not-modified') return { download }
  const imported = await importDebianTracker(dest, store, {
    releases: opts.releases, from: url, etag: download.etag, lastModified: download.lastModified, bytes: download.bytes
  })
  await rm(dest, { force: true })
  return { download, imported }
}

/** Download one file of Ubuntu OSV records (a JSON array or one record) when it changed, then import it. */
export async function syncUbuntuOsv (store: SourceStore, opts: SyncOptions & Pick<UbuntuImportOptions, 'releases' | 'includePro'> & { url: string }): Promise<SyncResult> {
  const { dest, download } = await downloadChanged(store, 'ubuntu', opts.url, 'ubuntu-osv.json', opts)
  if (download.status === 'not-modified') return { download }
  const imported = await importUbuntuOsv(dest, store, {
    releases: opts.releases, includePro: opts.includePro, from: opts.url, etag: download.etag, lastModified: download.lastModified, bytes: download.bytes
  })
  await rm(dest, { force: true })
  return { download, imported }
}
