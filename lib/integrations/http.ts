// One JSON request to a tracker's REST API, from the service: the host checked against the webhook policy
// (WEBHOOK_ALLOW / WEBHOOK_DENY) and connected to at the address checked, no redirect followed, the answer bounded.
// A rate limit (429, or GitHub's 403 with x-ratelimit-remaining: 0) and a 5xx or network failure are tried again
// after Retry-After (or the rate limit's reset, or a doubling wait), a few times; what is left throws TrackerError.
import { lookup as dnsLookup } from 'node:dns/promises'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { addressRefusal, urlHost, type WebhookPolicy } from '../webhooks/policy'
import { VERSION } from '../version'

export class TrackerError extends Error {
  constructor (message: string, readonly statusCode: number | null, readonly retryable: boolean) {
    super(message)
    this.name = 'TrackerError'
  }
}

export interface TrackerAnswer {
  status: number
  headers: IncomingMessage['headers']
  json: unknown
}

export interface AttemptNote {
  method: string
  path: string
  attempt: number
  statusCode: number | null
  error: string | null
  willRetry: boolean
}

export interface TrackerHttpOptions {
  policy: WebhookPolicy
  timeoutMs: number
  /** Tries per request (the first included) before TrackerError. */
  tries: number
  /** Wait before the second try when the tracker names none; doubled for each later one. */
  backoffMs: number
  /** The longest Retry-After honoured in process; a longer one ends the request (the queue's backoff takes over). */
  retryAfterMaxMs: number
  resolve?: (host: string) => Promise<string[]>
  /** Told of every try, for the deliveries list. */
  onAttempt?: (note: AttemptNote) => Promise<void>
  sleep?: (ms: number) => Promise<void>
}

const MAX_ANSWER_BYTES = 4 * 1024 * 1024

async function defaultResolve (host: string): Promise<string[]> {
  return (await dnsLookup(host, { all: true, verbatim: true })).map((r) => r.address)
}

/** How long the tracker asks to wait, in ms: Retry-After (seconds or an HTTP date), or GitHub's rate-limit reset. */
export function retryAfterMs (headers: IncomingMessage['headers'], now = Date.now()): number | null {
  const ra = headers['retry-after']
  if (typeof ra === 'string' && ra.trim() !== '') {
    const secs = Number(ra)
    if (Number.isFinite(secs)) return Math.max(0, secs * 1000)
    const at = Date.parse(ra)
    if (Number.isFinite(at)) return Math.max(0, at - now)
  }
  const reset = headers['x-ratelimit-reset']
  if (headers['x-ratelimit-remaining'] === '0' && typeof reset === 'string' && Number.isFinite(Number(reset))) return Math.max(0, Number(reset) * 1000 - now)
  return null
}

function rateLimited (status: number, headers: IncomingMessage['headers']): boolean {
  return status === 429 || (status === 403 && headers['x-ratelimit-remaining'] === '0')
}

async function once (base: URL, method: string, path: string, headers: Record<string, string>, body: string | undefined, opts: TrackerHttpOptions): Promise<{ status: number, headers: IncomingMessage['headers'], text: string }> {
  const url = new URL(base.pathname.replace(/\/$/, '') + path, base)
  const host = urlHost(url)
  const addresses = isIP(host) !== 0 ? [host] : await (opts.resolve ?? defaultResolve)(host)
  if (addresses.length === 0) throw new TrackerError(`${host} has no address`, null, true)
  for (const a of addresses) {
    const refused = addressRefusal(a, opts.policy)
    if (refused !== null) throw new TrackerError(`refused: ${refused}`, null, false)
  }
  const address = addresses[0]
  const family = isIP(address)
  const pinned: LookupFunction = (_h, o, cb) => {
    if ((o as { all?: boolean }).all === true) (cb as unknown as (e: null, a: { address: string, family: number }[]) => void)(null, [{ address, family }])
    else cb(null, address, family)
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return await new Promise((resolve, reject) => {
    const req = send(url, {
      method,
      lookup: pinned,
      headers: { 'user-agent': `vulnscan/${VERSION}`, accept: 'application/json', ...headers, ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}) },
      timeout: opts.timeoutMs
    }, (res) => {
      const chunks: Buffer[] = []
      let read = 0
      res.on('data', (c: Buffer) => {
        read += c.length
        if (read > MAX_ANSWER_BYTES) res.destroy(new Error('answer too large'))
        else chunks.push(c)
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)))
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * Send one request, trying again on a rate limit (never acted on), and, for an idempotent request (GET, PUT, PATCH),
 * on a 5xx or a lost connection too; returns a 2xx answer or throws TrackerError. A POST whose answer was lost may
 * have been acted on: it is not sent again here, and the sync looks for its ticket by key before any second create.
 */
export async function trackerRequest (base: string, method: string, path: string, headers: Record<string, string>, body: unknown, opts: TrackerHttpOptions): Promise<TrackerAnswer> {
  const idempotent = method !== 'POST'
  const sleep = opts.sleep ?? (async (ms: number) => await new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const text = body === undefined ? undefined : JSON.stringify(body)
  const notePath = path.split('?')[0]
  for (let attempt = 1; ; attempt++) {
    let status: number | null = null
    let error: string
    let wait: number | null = null
    let retryable = true
    try {
      const res = await once(new URL(base), method, path, headers, text, opts)
      status = res.status
      if (status >= 200 && status < 300) {
        await opts.onAttempt?.({ method, path: notePath, attempt, statusCode: status, error: null, willRetry: false })
        let json: unknown = null
        try { json = res.text === '' ? null : JSON.parse(res.text) } catch { json = null }
        return { status, headers: res.headers, json }
      }
      error = `answered ${status}`
      if (rateLimited(status, res.headers)) {
        wait = retryAfterMs(res.headers)
        error = `rate limited (${status})`
      } else if (status < 500) {
        retryable = false
        error = `answered ${status}: ${res.text.slice(0, 200).replace(/\s+/g, ' ')}`
      }
    } catch (err) {
      if (err instanceof TrackerError) retryable = err.retryable
      error = (err as Error).message
    }
    const delay = wait ?? opts.backoffMs * 2 ** (attempt - 1)
    // A rate-limited request was not acted on; any other failure of a POST may have been.
    const safe = idempotent || error.startsWith('rate limited')
    const again = retryable && safe && attempt < opts.tries && delay <= opts.retryAfterMaxMs
    await opts.onAttempt?.({ method, path: notePath, attempt, statusCode: status, error, willRetry: again })
    if (!again) throw new TrackerError(`${method} ${notePath}: ${error}`, status, retryable)
    await sleep(delay)
  }
}
