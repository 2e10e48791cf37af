// A faithful local stand-in for the NVD CVE API 2.0 (the real one is never contacted from tests).
// It serves the real fixture records byte for byte inside NVD's envelope and reproduces NVD's
// behaviour where a client can get it wrong: paging, 120-day lastMod windows, 404s explained in a
// `message` header, invalid keys, 403 throttling per rolling window, and 503 bursts.

import { readdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { loopbackAddress } from './loopback'

export const FIXTURE_CVES_DIR = path.join(__dirname, '..', 'fixtures', 'nvd', 'cves')
const MAX_RESULTS_PER_PAGE = 2000
const MAX_RANGE_MS = 120 * 86_400_000
const KNOWN_PARAMS = new Set(['cveId', 'cpeName', 'virtualMatchString', 'lastModStartDate', 'lastModEndDate',
  'noRejected', 'resultsPerPage', 'startIndex'])

export interface RateLimit {
  requests: number
  windowMs: number
}

export interface FakeNvdOptions {
  /** Serve the fixture records of test/fixtures/nvd/cves (default true). */
  fixtures?: boolean
  /** Extra records: a `cve` object (served as compact JSON) or its exact JSON text. */
  records?: Array<object | string>
  /** Keys that NVD would accept; any other key gets 404 "Invalid apiKey.". */
  apiKeys?: string[]
  /** Requests admitted per rolling window without a key (default NVD's 5 per 30 s; null: unlimited). */
  rateLimit?: RateLimit | null
  /** With a valid key (default NVD's 50 per 30 s; null: unlimited). */
  keyedRateLimit?: RateLimit | null
  /** Delay before each answer, to exercise client timeouts. */
  delayMs?: number
}

export interface RecordedRequest {
  params: Record<string, string>
  /** Whether an apiKey header came with the request (the value is never recorded). */
  withKey: boolean
  status: number
  at: number
}

export interface FailureSpec {
  status?: number
  retryAfter?: string
  message?: string
}

export interface FakeNvd {
  /** Base URL to hand to the client (it appends /cves/2.0), e.g. http://127.12.34.56:PORT/rest/json */
  readonly baseUrl: string
  readonly requests: RecordedRequest[]
  /** Ids in the order the server lists them. */
  ids: () => string[]
  /** The exact JSON text served for a record. */
  rawRecord: (id: string) => string | undefined
  addRecord: (record: object | string) => void
  /** Set a record's top-level lastModified, changing nothing else in its text. */
  touch: (id: string, lastModified: string) => void
  /** Change a record through its parsed form; it is then served re-serialised (2-space indent). */
  modify: (id: string, mutate: (cve: Record<string, unknown>) => void) => void
  /** Fail the next n requests (default 503, as NVD does under load). */
  failNext: (n: number, spec?: FailureSpec) => void
  /** Fail every request from now on (or stop failing with false). `reset` drops the connection instead. */
  setDown: (down: false | FailureSpec | 'reset') => void
  setRateLimit: (limit: RateLimit | null, keyed?: RateLimit | null) => void
  setDelay: (ms: number) => void
  close: () => Promise<void>
}

interface StoredRecord {
  id: string
  raw: string
  lastModifiedMs: number
  rejected: boolean
  criteria: string[][]
}

/** Split a CPE 2.3 string on colons that are not backslash-escaped. */
function splitCpe (s: string): string[] {
  const out: string[] = []
  let cur = ''
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && i + 1 < s.length) {
      cur += s[i] + s[i + 1]
      i++
    } else if (s[i] === ':') {
      out.push(cur)
      cur = ''
    } else {
      cur += s[i]
    }
  }
  out.push(cur)
  return out
}

/** NVD writes timestamps without a zone; they are UTC. */
function parseNvdTime (s: string): number {
  return Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(s) ? s : s + 'Z')
}

const ISO_PARAM = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?([zZ]|[+-]\d{2}:\d{2})?$/

function buildRecord (raw: string): StoredRecord {
  const cve = JSON.parse(raw) as {
    id?: unknown
    lastModified?: unknown
    vulnStatus?: unknown
    configurations?: Array<{ nodes?: Array<{ cpeMatch?: Array<{ criteria?: unknown }> }> }>
  }
  if (typeof cve.id !== 'string' || typeof cve.lastModified !== 'string') {
    throw new Error('a CVE record needs string id and lastModified')
  }
  const criteria: string[][] = []
  for (const cfg of cve.configurations ?? []) {
    for (const node of cfg.nodes ?? []) {
      for (const m of node.cpeMatch ?? []) {
        if (typeof m.criteria === 'string') criteria.push(splitCpe(m.criteria).slice(2).map((v) => v.toLowerCase()))
      }
    }
  }
  return {
    id: cve.id,
    raw,
    lastModifiedMs: parseNvdTime(cve.lastModified),
    rejected: cve.vulnStatus === 'Rejected',
    criteria
  }
}

/**
 * CPE attribute comparison as NVD applies a match string to match criteria: a component the
 * string leaves out, or `*` on either side, matches anything; `-` (NA) only matches `-` or `*`.
 */
function componentsMatch (query: string[], criterion: string[]): boolean {
  for (let i = 0; i < query.length; i++) {
    const q = query[i]
    const c = criterion[i] ?? '*'
    if (q === '*' || q === '' || c === '*') continue
    if (q !== c) return false
  }
  return true
}

export async function startFakeNvd (opts: FakeNvdOptions = {}): Promise<FakeNvd> {
  const records = new Map<string, StoredRecord>()
  const order: string[] = []
  const put = (raw: string): void => {
    const r = buildRecord(raw)
    if (!records.has(r.id)) order.push(r.id)
    records.set(r.id, r)
  }
  if (opts.fixtures !== false) {
    for (const f of readdirSync(FIXTURE_CVES_DIR).filter((n) => n.endsWith('.json')).sort()) {
      put(readFileSync(path.join(FIXTURE_CVES_DIR, f), 'utf8'))
    }
  }
  for (const r of opts.records ?? []) put(typeof r === 'string' ? r : JSON.stringify(r))

  const apiKeys = new Set(opts.apiKeys ?? [])
  let rateLimit: RateLimit | null = opts.rateLimit === undefined ? { requests: 5, windowMs: 30_000 } : opts.rateLimit
  let keyedRateLimit: RateLimit | null = opts.keyedRateLimit === undefined ? { requests: 50, windowMs: 30_000 } : opts.keyedRateLimit
  let delayMs = opts.delayMs ?? 0
  let failures: FailureSpec[] = []
  let down: false | FailureSpec | 'reset' = false
  const admitted = new Map<string, number[]>()
  const requests: RecordedRequest[] = []

  function throttled (client: string, limit: RateLimit | null, now: number): boolean {
    if (limit === null) return false
    const times = (admitted.get(client) ?? []).filter((t) => t > now - limit.windowMs)
    admitted.set(client, times)
    if (times.length >= limit.requests) return true
    times.push(now)
    return false
  }

  function notFound (res: http.ServerResponse, message: string): number {
    res.writeHead(404, { message, 'content-length': '0' })
    res.end()
    return 404
  }

  function answer (req: http.IncomingMessage, res: http.ServerResponse, params: URLSearchParams): number {
    const url = new URL(req.url ?? '/', 'http://fake')
    if (url.pathname !== '/rest/json/cves/2.0') {
      res.writeHead(404, { 'content-length': '0' })
      res.end()
      return 404
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD, OPTIONS', 'content-length': '0' })
      res.end()
      return 405
    }
    const key = req.headers.apikey
    const keyValue = Array.isArray(key) ? key[0] : key
    if (keyValue !== undefined && !apiKeys.has(keyValue)) return notFound(res, 'Invalid apiKey.')
    const now = Date.now()
    const client = keyValue !== undefined ? 'key:' + keyValue : 'ip:' + (req.socket.remoteAddress ?? '')
    if (throttled(client, keyValue !== undefined ? keyedRateLimit : rateLimit, now)) {
      // NVD's firewall answers an over-rate client with a bare 403.
      res.writeHead(403, { 'content-length': '0' })
      res.end()
      return 403
    }
    if (failures.length > 0) {
      const f = failures.shift()!
      return fail(res, f)
    }
    if (down !== false && down !== 'reset') return fail(res, down)

    for (const k of params.keys()) {
      if (!KNOWN_PARAMS.has(k)) return notFound(res, `Invalid parameter: ${k}`)
    }
    const intParam = (name: string, dflt: number): number | null => {
      const v = params.get(name)
      if (v === null) return dflt
      if (!/^\d+$/.test(v)) return null
      return Number(v)
    }
    const startIndex = intParam('startIndex', 0)
    if (startIndex === null) return notFound(res, 'Invalid startIndex value')
    const perPage = intParam('resultsPerPage', MAX_RESULTS_PER_PAGE)
    if (perPage === null) return notFound(res, 'Invalid resultsPerPage value')
    const pageSize = Math.min(perPage, MAX_RESULTS_PER_PAGE)

    const startParam = params.get('lastModStartDate')
    const endParam = params.get('lastModEndDate')
    let range: [number, number] | null = null
    if (startParam !== null || endParam !== null) {
      if (startParam === null || endParam === null) {
        return notFound(res, 'Both lastModStartDate and lastModEndDate are required when either is present')
      }
      if (!ISO_PARAM.test(startParam) || !ISO_PARAM.test(endParam)) {
        return notFound(res, 'Invalid date format: lastModStartDate and lastModEndDate must be extended ISO-8601')
      }
      const s = parseNvdTime(startParam)
      const e = parseNvdTime(endParam)
      if (Number.isNaN(s) || Number.isNaN(e)) return notFound(res, 'Invalid date value')
      if (e < s) return notFound(res, 'lastModEndDate must not be before lastModStartDate')
      if (e - s > MAX_RANGE_MS) return notFound(res, 'The lastMod date range must not exceed 120 days')
      range = [s, e]
    }
    const cveId = params.get('cveId')
    if (cveId !== null && !/^CVE-\d{4}-\d{4,}$/.test(cveId)) return notFound(res, 'Invalid cveId')
    const vms = params.get('virtualMatchString')
    let vmsParts: string[] | null = null
    if (vms !== null) {
      const p = splitCpe(vms.toLowerCase())
      if (p.length < 3 || p.length > 13 || p[0] !== 'cpe' || p[1] !== '2.3') return notFound(res, 'Invalid virtualMatchString')
      vmsParts = p.slice(2)
    }
    const cpeName = params.get('cpeName')
    let cpeParts: string[] | null = null
    if (cpeName !== null) {
      const p = splitCpe(cpeName.toLowerCase())
      if (p.length !== 13 || p[0] !== 'cpe' || p[1] !== '2.3') return notFound(res, 'Invalid cpeName')
      cpeParts = p.slice(2)
    }
    const noRejected = params.has('noRejected')

    const hits: StoredRecord[] = []
    for (const id of order) {
      const r = records.get(id)!
      if (cveId !== null && r.id !== cveId) continue
      if (noRejected && r.rejected) continue
      if (range !== null && (r.lastModifiedMs < range[0] || r.lastModifiedMs > range[1])) continue
      if (vmsParts !== null && !r.criteria.some((c) => componentsMatch(vmsParts!, c))) continue
      if (cpeParts !== null && !r.criteria.some((c) => componentsMatch(cpeParts!, c))) continue
      hits.push(r)
    }
    const slice = hits.slice(startIndex, startIndex + pageSize)
    const timestamp = new Date().toISOString().slice(0, 23)
    // The envelope is assembled as text so each record's bytes go out exactly as stored.
    const body = '{"resultsPerPage":' + slice.length + ',"startIndex":' + startIndex +
      ',"totalResults":' + hits.length + ',"format":"NVD_CVE","version":"2.0","timestamp":"' + timestamp +
      '","vulnerabilities":[' + slice.map((r) => '{"cve":' + r.raw + '}').join(',') + ']}'
    const buf = Buffer.from(body, 'utf8')
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(buf.length) })
    res.end(req.method === 'HEAD' ? undefined : buf)
    return 200
  }

  function fail (res: http.ServerResponse, f: FailureSpec): number {
    const status = f.status ?? 503
    const headers: Record<string, string> = { 'content-length': '0' }
    if (f.retryAfter !== undefined) headers['retry-after'] = f.retryAfter
    if (f.message !== undefined) headers.message = f.message
    res.writeHead(status, headers)
    res.end()
    return status
  }

  const server = http.createServer((req, res) => {
    const params = new URL(req.url ?? '/', 'http://fake').searchParams
    const record = (status: number): void => {
      const p: Record<string, string> = {}
      for (const [k, v] of params) p[k] = v
      requests.push({ params: p, withKey: req.headers.apikey !== undefined, status, at: Date.now() })
    }
    const go = (): void => {
      if (down === 'reset') {
        record(0)
        req.socket.destroy()
        return
      }
      record(answer(req, res, params))
    }
    if (delayMs > 0) {
      setTimeout(go, delayMs)
    } else {
      go()
    }
  })
  server.keepAliveTimeout = 1000
  const host = loopbackAddress()
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const { port } = server.address() as AddressInfo

  return {
    baseUrl: `http://${host}:${port}/rest/json`,
    requests,
    ids: () => [...order],
    rawRecord: (id) => records.get(id)?.raw,
    addRecord: (r) => put(typeof r === 'string' ? r : JSON.stringify(r)),
    touch (id, lastModified) {
      const r = records.get(id)
      if (r === undefined) throw new Error(`no record ${id}`)
      // The top-level lastModified comes before any nested object in NVD records, so the first
      // occurrence is the one; the parse below proves it.
      const raw = r.raw.replace(/("lastModified"\s*:\s*")[^"]*(")/, `$1${lastModified}$2`)
      const next = buildRecord(raw)
      if ((JSON.parse(raw) as { lastModified: string }).lastModified !== lastModified) {
        throw new Error(`could not set lastModified of ${id}`)
      }
      records.set(id, next)
    },
    modify (id, mutate) {
      const r = records.get(id)
      if (r === undefined) throw new Error(`no record ${id}`)
      const obj = JSON.parse(r.raw) as Record<string, unknown>
      mutate(obj)
      if (obj.id !== id) throw new Error('modify must not change the id')
      records.set(id, buildRecord(JSON.stringify(obj, null, 2)))
    },
    failNext (n, spec = {}) {
      for (let i = 0; i < n; i++) failures.push(spec)
    },
    setDown (d) { down = d },
    setRateLimit (limit, keyed) {
      rateLimit = limit
      if (keyed !== undefined) keyedRateLimit = keyed
      admitted.clear()
    },
    setDelay (ms) { delayMs = ms },
    close: () => new Promise<void>((resolve) => {
      failures = []
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}
