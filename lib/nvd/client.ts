// NVD CVE API 2.0 client: rate-limited, retrying, paging and date-window splitting.
// The API key travels only in the `apiKey` header; it never appears in URLs, logs or errors.

import {
  abortReason, type Clock, createRateLimiter, NVD_REQUESTS_WITH_KEY, NVD_REQUESTS_WITHOUT_KEY,
  NVD_WINDOW_MS, type RateLimiter, systemClock
} from './rate-limiter'

export const DEFAULT_NVD_BASE_URL = 'https://services.nvd.nist.gov/rest/json'
export const NVD_MAX_RESULTS_PER_PAGE = 2000
/** NVD rejects any date range longer than 120 consecutive days. */
export const NVD_MAX_RANGE_DAYS = 120
const DAY_MS = 86_400_000
const MAX_REWINDS = 50

export interface NvdLogger {
  info: (msg: string) => void
  warn: (msg: string) => void
}

export interface CveQuery {
  cveId?: string
  cpeName?: string
  virtualMatchString?: string
  lastModStartDate?: Date | string
  lastModEndDate?: Date | string
  noRejected?: boolean
  resultsPerPage?: number
  startIndex?: number
}

export interface DateWindow {
  start: Date
  end: Date
}

export interface CvePage {
  startIndex: number
  /** How many results this page holds (NVD echoes the count it returned). */
  resultsPerPage: number
  totalResults: number
  timestamp: string
  /** The raw `vulnerabilities[].cve` objects, untouched. */
  cves: unknown[]
  /** The lastMod window this page belongs to, when the query had one. */
  window: DateWindow | null
  windowIndex: number
  windowCount: number
  /** Where the next page of this window starts, or null when this was the window's last page. */
  nextStartIndex: number | null
}

export interface NvdClientOptions {
  baseUrl: string
  apiKey?: string
  /** Default: 5 without a key, 50 with one (NVD's published limits). */
  requestsPerWindow?: number
  windowMs?: number
  maxRetries?: number
  /** First backoff step; doubles each retry, with jitter. */
  retryBaseMs?: number
  retryMaxMs?: number
  /** Upper bound on a server-sent Retry-After, so a hostile or broken server cannot stall a sync for hours. */
  maxRetryAfterMs?: number
  timeoutMs?: number
  /** Page size used when a query does not say; NVD's maximum is 2000. */
  resultsPerPage?: number
  maxResponseBytes?: number
  fetch?: typeof fetch
  logger?: NvdLogger
  clock?: Clock
  /** Share one limiter between clients that use the same key (NVD counts per key / per address). */
  limiter?: RateLimiter
  random?: () => number
}

export interface RequestOptions {
  signal?: AbortSignal
}

export interface NvdClient {
  /**
   * Every page of a query. A lastMod span longer than 120 days is walked window by window;
   * `startIndex` applies to the first window. Retries, rate limiting and total changes between
   * pages are handled inside; errors that survive the retries end the iteration with NvdApiError.
   */
  cvePages: (query?: CveQuery, opts?: RequestOptions) => AsyncGenerator<CvePage, void, undefined>
  /** One page exactly as asked (no window splitting, no follow-up pages). */
  fetchPage: (query: CveQuery, opts?: RequestOptions) => Promise<CvePage>
  /** The raw `cve` object, or null when NVD does not know the id. */
  getCve: (id: string, opts?: RequestOptions) => Promise<unknown | null>
  readonly limiter: RateLimiter
  readonly baseUrl: string
  readonly hasApiKey: boolean
}

/** A failed NVD call. `status` is null when no HTTP response arrived (network error, timeout). */
export class NvdApiError extends Error {
  override readonly name = 'NvdApiError'
  readonly status: number | null
  /** NVD's explanation from the `message` response header (it explains 404s there). */
  readonly nvdMessage: string | null
  readonly retryable: boolean
  readonly attempts: number
  /** Request path and query (never the key, which is only ever in a header). */
  readonly request: string

  constructor (init: { status: number | null, nvdMessage?: string | null, retryable: boolean, attempts: number, request: string, detail?: string, cause?: unknown }) {
    const what = init.status === null
      ? `NVD API unreachable${init.detail ? ': ' + init.detail : ''}`
      : `NVD API answered ${init.status}${init.nvdMessage ? ': ' + init.nvdMessage : init.detail ? ': ' + init.detail : ''}`
    super(`${what} (${init.request}, after ${init.attempts} attempt${init.attempts === 1 ? '' : 's'})`,
      init.cause === undefined ? undefined : { cause: init.cause })
    this.status = init.status
    this.nvdMessage = init.nvdMessage ?? null
    this.retryable = init.retryable
    this.attempts = init.attempts
    this.request = init.request
  }
}

const CVE_ID = /^CVE-\d{4}-\d{4,}$/

/** NVD's extended ISO-8601 form with an explicit UTC offset (a bare time is also UTC to NVD). */
export function formatNvdDate (d: Date): string {
  return d.toISOString().slice(0, 23) + '+00:00'
}

function toDate (v: Date | string, name: string): Date {
  const d = v instanceof Date ? v : new Date(/[zZ]|[+-]\d\d:\d\d$/.test(v) ? v : v + 'Z')
  if (Number.isNaN(d.getTime())) throw new RangeError(`${name} is not a valid date`)
  return d
}

/** Split [start, end] into consecutive windows no longer than maxDays; adjacent windows share an endpoint. */
export function splitWindows (start: Date, end: Date, maxDays = NVD_MAX_RANGE_DAYS): DateWindow[] {
  if (end.getTime() < start.getTime()) throw new RangeError('window end is before its start')
  const step = maxDays * DAY_MS
  const out: DateWindow[] = []
  let s = start.getTime()
  const e = end.getTime()
  do {
    const we = Math.min(s + step, e)
    out.push({ start: new Date(s), end: new Date(we) })
    s = we
  } while (s < e)
  return out
}

function parseRetryAfter (value: string | null, now: number): number | null {
  if (value === null || value.trim() === '') return null
  const v = value.trim()
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000)
  const at = Date.parse(v)
  if (Number.isNaN(at)) return null
  return Math.max(0, at - now)
}

function isRetryableStatus (status: number): boolean {
  return status === 403 || status === 429 || status >= 500
}

/** Header values from an untrusted peer go into logs and errors: keep them short and printable. */
function cleanHeader (v: string | null): string | null {
  if (v === null) return null
  const s = v.replace(/[^\x20-\x7e]/g, '?').slice(0, 300).trim()
  return s === '' ? null : s
}

async function readBounded (res: Response, max: number, signal: AbortSignal): Promise<string> {
  const declared = Number(res.headers.get('content-length'))
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => {})
    throw new Error(`response of ${declared} bytes exceeds the ${max}-byte limit`)
  }
  if (res.body === null) return ''
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    if (signal.aborted) {
      await reader.cancel().catch(() => {})
      throw abortReason(signal)
    }
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > max) {
      await reader.cancel().catch(() => {})
      throw new Error(`response exceeds the ${max}-byte limit`)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks, total).toString('utf8')
}

interface Envelope {
  resultsPerPage: number
  startIndex: number
  totalResults: number
  timestamp: string
  vulnerabilities: Array<{ cve: unknown }>
}

function checkEnvelope (body: unknown): Envelope {
  const b = body as Partial<Envelope> | null
  if (b === null || typeof b !== 'object' || !Array.isArray(b.vulnerabilities) ||
    typeof b.totalResults !== 'number' || typeof b.startIndex !== 'number') {
    throw new Error('response is not an NVD CVE API 2.0 envelope')
  }
  for (const v of b.vulnerabilities) {
    if (v === null || typeof v !== 'object' || typeof (v as { cve?: unknown }).cve !== 'object') {
      throw new Error('response holds a vulnerability without a cve object')
    }
  }
  return b as Envelope
}

function isAbort (err: unknown, signal?: AbortSignal): boolean {
  return signal?.aborted === true || (err instanceof Error && err.name === 'AbortError')
}

export function createNvdClient (opts: NvdClientOptions): NvdClient {
  const baseUrl = (opts.baseUrl || DEFAULT_NVD_BASE_URL).replace(/\/+$/, '')
  const endpoint = baseUrl + '/cves/2.0'
  const apiKey = opts.apiKey !== undefined && opts.apiKey !== '' ? opts.apiKey : undefined
  // Checked here because fetch's own complaint about a bad header value quotes the value.
  if (apiKey !== undefined && !/^[\x21-\x7e]+$/.test(apiKey)) {
    throw new RangeError('the NVD API key contains characters a header cannot carry (whitespace or non-ASCII)')
  }
  const clock = opts.clock ?? systemClock
  const limiter = opts.limiter ?? createRateLimiter({
    requestsPerWindow: opts.requestsPerWindow ?? (apiKey ? NVD_REQUESTS_WITH_KEY : NVD_REQUESTS_WITHOUT_KEY),
    windowMs: opts.windowMs ?? NVD_WINDOW_MS,
    clock
  })
  const maxRetries = opts.maxRetries ?? 6
  const retryBaseMs = opts.retryBaseMs ?? 2000
  const retryMaxMs = opts.retryMaxMs ?? 60_000
  const maxRetryAfterMs = opts.maxRetryAfterMs ?? 300_000
  const timeoutMs = opts.timeoutMs ?? 60_000
  const defaultPageSize = Math.min(opts.resultsPerPage ?? NVD_MAX_RESULTS_PER_PAGE, NVD_MAX_RESULTS_PER_PAGE)
  const maxResponseBytes = opts.maxResponseBytes ?? 256 * 1024 * 1024
  const doFetch = opts.fetch ?? globalThis.fetch
  const random = opts.random ?? Math.random
  const log = opts.logger

  function buildQuery (q: CveQuery): string {
    const parts: string[] = []
    const add = (k: string, v: string): void => { parts.push(k + '=' + encodeURIComponent(v)) }
    if (q.cveId !== undefined) add('cveId', q.cveId)
    if (q.cpeName !== undefined) add('cpeName', q.cpeName)
    if (q.virtualMatchString !== undefined) add('virtualMatchString', q.virtualMatchString)
    if ((q.lastModStartDate === undefined) !== (q.lastModEndDate === undefined)) {
      throw new RangeError('lastModStartDate and lastModEndDate must be given together')
    }
    if (q.lastModStartDate !== undefined && q.lastModEndDate !== undefined) {
      add('lastModStartDate', formatNvdDate(toDate(q.lastModStartDate, 'lastModStartDate')))
      add('lastModEndDate', formatNvdDate(toDate(q.lastModEndDate, 'lastModEndDate')))
    }
    // NVD takes noRejected as a bare flag without a value.
    if (q.noRejected === true) parts.push('noRejected')
    const perPage = q.resultsPerPage ?? defaultPageSize
    const startIndex = q.startIndex ?? 0
    if (!Number.isInteger(perPage) || perPage < 1) throw new RangeError('resultsPerPage must be a positive integer')
    if (!Number.isInteger(startIndex) || startIndex < 0) throw new RangeError('startIndex must be a non-negative integer')
    add('resultsPerPage', String(Math.min(perPage, NVD_MAX_RESULTS_PER_PAGE)))
    add('startIndex', String(startIndex))
    return parts.join('&')
  }

  function backoff (attempt: number): number {
    const cap = Math.min(retryMaxMs, retryBaseMs * 2 ** attempt)
    // Equal jitter: never less than half the step, so clients sharing a key still spread out.
    return Math.round(cap / 2 + random() * cap / 2)
  }

  async function requestJson (qs: string, signal?: AbortSignal): Promise<Envelope> {
    const request = '/cves/2.0?' + qs
    const url = endpoint + '?' + qs
    const headers: Record<string, string> = { accept: 'application/json' }
    if (apiKey) headers.apiKey = apiKey
    for (let attempt = 0; ; attempt++) {
      const release = await limiter.acquire(signal)
      const timeout = AbortSignal.timeout(timeoutMs)
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout
      let failure: NvdApiError
      let retryAfterMs: number | null = null
      try {
        const res = await doFetch(url, { headers, signal: combined, redirect: 'error' })
        const nvdMessage = cleanHeader(res.headers.get('message'))
        if (res.ok) {
          const text = await readBounded(res, maxResponseBytes, combined)
          try {
            return checkEnvelope(JSON.parse(text))
          } catch (err) {
            // A truncated or garbled body is a transient failure on NVD's side more often than not.
            failure = new NvdApiError({ status: res.status, retryable: true, attempts: attempt + 1, request, detail: (err as Error).message, cause: err })
          }
        } else {
          await res.body?.cancel().catch(() => {})
          retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), clock.now())
          failure = new NvdApiError({
            status: res.status,
            nvdMessage,
            retryable: isRetryableStatus(res.status),
            attempts: attempt + 1,
            request,
            detail: res.statusText || undefined
          })
        }
      } catch (err) {
        if (isAbort(err, signal) && signal?.aborted) throw abortReason(signal)
        const timedOut = timeout.aborted
        const detail = timedOut ? `no answer within ${timeoutMs} ms` : describeNetworkError(err)
        failure = new NvdApiError({ status: null, retryable: true, attempts: attempt + 1, request, detail, cause: err })
      } finally {
        release()
      }
      if (!failure.retryable || attempt >= maxRetries) throw failure
      const wait = retryAfterMs !== null ? Math.min(retryAfterMs, maxRetryAfterMs) : backoff(attempt)
      log?.warn(`NVD API ${failure.status ?? 'network error'}${failure.nvdMessage ? ' (' + failure.nvdMessage + ')' : ''} on ${request}; retry ${attempt + 1}/${maxRetries} in ${wait} ms`)
      await clock.sleep(wait, signal)
    }
  }

  function toPage (env: Envelope, window: DateWindow | null, windowIndex: number, windowCount: number): CvePage {
    return {
      startIndex: env.startIndex,
      resultsPerPage: env.vulnerabilities.length,
      totalResults: env.totalResults,
      timestamp: typeof env.timestamp === 'string' ? env.timestamp : '',
      cves: env.vulnerabilities.map((v) => v.cve),
      window,
      windowIndex,
      windowCount,
      nextStartIndex: null
    }
  }

  async function fetchPage (query: CveQuery, ro: RequestOptions = {}): Promise<CvePage> {
    const env = await requestJson(buildQuery(query), ro.signal)
    const window = query.lastModStartDate !== undefined && query.lastModEndDate !== undefined
      ? { start: toDate(query.lastModStartDate, 'lastModStartDate'), end: toDate(query.lastModEndDate, 'lastModEndDate') }
      : null
    return toPage(env, window, 0, 1)
  }

  async function * cvePages (query: CveQuery = {}, ro: RequestOptions = {}): AsyncGenerator<CvePage, void, undefined> {
    const pageSize = Math.min(query.resultsPerPage ?? defaultPageSize, NVD_MAX_RESULTS_PER_PAGE)
    const windows: Array<DateWindow | null> = query.lastModStartDate !== undefined && query.lastModEndDate !== undefined
      ? splitWindows(toDate(query.lastModStartDate, 'lastModStartDate'), toDate(query.lastModEndDate, 'lastModEndDate'))
      : [null]
    for (let w = 0; w < windows.length; w++) {
      const window = windows[w]
      let start = w === 0 ? (query.startIndex ?? 0) : 0
      let previousTotal: number | null = null
      let rewinds = 0
      for (;;) {
        const q: CveQuery = { ...query, resultsPerPage: pageSize, startIndex: start }
        if (window !== null) {
          q.lastModStartDate = window.start
          q.lastModEndDate = window.end
        }
        const env = await requestJson(buildQuery(q), ro.signal)
        const page = toPage(env, window, w, windows.length)
        const got = page.cves.length
        // A smaller total than the previous page's means records left the result set (e.g. modified
        // out of the window) and later ones slid towards the front, possibly past our position:
        // rewind by the shrinkage so none is skipped. Repeats are harmless (the index upserts by id);
        // rewinds are capped so a result set that keeps changing cannot hold the pager forever.
        let next = start + got
        if (previousTotal !== null && page.totalResults < previousTotal && rewinds < MAX_REWINDS) {
          next = Math.max(0, start - (previousTotal - page.totalResults))
          rewinds++
        }
        const rewound = next < start + got
        page.nextStartIndex = (!rewound && got === 0) || next >= page.totalResults ? null : next
        previousTotal = page.totalResults
        log?.info(`NVD page ${start}+${got} of ${page.totalResults}${window ? ` (window ${w + 1}/${windows.length})` : ''}`)
        yield page
        if (page.nextStartIndex === null) break
        start = page.nextStartIndex
      }
    }
  }

  async function getCve (id: string, ro: RequestOptions = {}): Promise<unknown | null> {
    if (!CVE_ID.test(id)) throw new RangeError(`not a CVE id: ${id.slice(0, 40)}`)
    const page = await fetchPage({ cveId: id }, ro)
    return page.cves.find((c) => (c as { id?: unknown }).id === id) ?? null
  }

  return { cvePages, fetchPage, getCve, limiter, baseUrl, hasApiKey: apiKey !== undefined }
}

function describeNetworkError (err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const cause = (err as { cause?: { code?: string, message?: string } }).cause
  return cause?.code ?? cause?.message ?? err.message
}
