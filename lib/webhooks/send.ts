// One webhook attempt over HTTP(S): resolve the host, refuse the attempt if any address it resolves to is refused
// by the policy, then connect to the address that was checked (never a second lookup that could answer something
// else), send the signed body, and follow no redirect.
import { lookup as dnsLookup } from 'node:dns/promises'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { createHmac } from 'node:crypto'
import { addressRefusal, urlHost, type WebhookPolicy } from './policy'
import { VERSION } from '../version'

export const SIGNATURE_HEADER = 'X-Vulnscan-Signature-256'

/** `sha256=<hex>`: HMAC-SHA256 of the raw body with the webhook's secret. */
export function signature (secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`
}

export interface SendResult {
  statusCode: number | null
  error: string | null
  durationMs: number
  /** True when no retry can help (the address is refused). */
  permanent: boolean
}

export interface SendOptions {
  url: string
  body: string
  secret: string
  event: string
  eventId: string
  policy: WebhookPolicy
  timeoutMs: number
  /** Resolves a host name to addresses (tests may give their own; names outside /etc/hosts are never asked here). */
  resolve?: (host: string) => Promise<string[]>
}

async function defaultResolve (host: string): Promise<string[]> {
  return (await dnsLookup(host, { all: true, verbatim: true })).map((r) => r.address)
}

// Kept short: a receiver's answer is not read, only its status.
const MAX_ANSWER_BYTES = 64 * 1024

export async function sendWebhook (opts: SendOptions): Promise<SendResult> {
  const started = performance.now()
  const done = (r: Omit<SendResult, 'durationMs'>): SendResult => ({ ...r, durationMs: Math.round(performance.now() - started) })
  const url = new URL(opts.url)
  const host = urlHost(url)
  let addresses: string[]
  if (isIP(host) !== 0) {
    addresses = [host]
  } else {
    try {
      addresses = await (opts.resolve ?? defaultResolve)(host)
    } catch (err) {
      return done({ statusCode: null, error: `cannot resolve ${host}: ${(err as Error).message}`, permanent: false })
    }
    if (addresses.length === 0) return done({ statusCode: null, error: `${host} has no address`, permanent: false })
  }
  // Every address is checked: a name that answers one public and one internal address is refused whole.
  for (const a of addresses) {
    const refused = addressRefusal(a, opts.policy)
    if (refused !== null) return done({ statusCode: null, error: `refused: ${refused}`, permanent: true })
  }
  const address = addresses[0]
  const family = isIP(address)
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all === true) (callback as unknown as (e: null, a: { address: string, family: number }[]) => void)(null, [{ address, family }])
    else callback(null, address, family)
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return await new Promise<SendResult>((resolve) => {
    let settled = false
    const finish = (r: Omit<SendResult, 'durationMs'>): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(done(r))
    }
    const req = send(url, {
      method: 'POST',
      lookup: pinned,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(opts.body),
        'user-agent': `vulnscan-webhook/${VERSION}`,
        'x-vulnscan-event': opts.event,
        'x-vulnscan-delivery': opts.eventId,
        [SIGNATURE_HEADER.toLowerCase()]: signature(opts.secret, opts.body)
      }
    }, (res: IncomingMessage) => {
      let read = 0
      res.on('data', (chunk: Buffer) => {
        read += chunk.length
        if (read > MAX_ANSWER_BYTES) res.destroy()
      })
      const status = res.statusCode ?? 0
      const answer = (): void => {
        if (status >= 200 && status < 300) finish({ statusCode: status, error: null, permanent: false })
        else if (status >= 300 && status < 400) finish({ statusCode: status, error: `answered ${status}: redirects are not followed`, permanent: false })
        else finish({ statusCode: status, error: `answered ${status}`, permanent: false })
      }
      res.on('end', answer)
      res.on('close', answer)
      res.on('error', answer)
    })
    const timer = setTimeout(() => {
      req.destroy()
      finish({ statusCode: null, error: `no answer within ${opts.timeoutMs} ms`, permanent: false })
    }, opts.timeoutMs)
    req.on('error', (err) => finish({ statusCode: null, error: `${(err as NodeJS.ErrnoException).code ?? 'error'}: ${err.message}`, permanent: false }))
    req.end(opts.body)
  })
}
