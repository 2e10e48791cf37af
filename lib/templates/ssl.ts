// The Nuclei `ssl` protocol: a TLS handshake with the port (node:tls, as Nuclei's `ctls` mode does it with Go's
// crypto/tls), the versions and cipher suites the template forces, and a JSON response shaped like tlsx's output.
// Matchers and extractors read that JSON as the part `response` (and each text field as a part of its own name);
// expressions see every field as a variable (`expired == true`, `tls_version == "tls10"`). A handshake the server
// refuses is the answer "no" (a miss); a port that cannot be reached, or stays silent, is no verdict.

import net from 'node:net'
import tls from 'node:tls'
import { createHash } from 'node:crypto'
import { isSelfSigned } from '../scanner/tls'
import { interpolate, type Value, type Vars } from './dsl'
import { CIPHER_NAMES } from './ssl-ciphers'
import type { Parts } from './match'
import type { Extractor, Matcher } from './types'

export interface SslRequest {
  /** As written; only the port the template runs on (`{{Host}}:{{Port}}`, `{{Hostname}}`). */
  address: string
  /** SNI name as written (may hold `{{…}}`); absent: the target's host when it is a DNS name. */
  serverName?: string
  minVersion: tls.SecureVersion
  maxVersion: tls.SecureVersion
  /** node:tls `ciphers` (OpenSSL names); absent: everything, legacy suites included. */
  ciphers?: string
  /** Also try each version from min to max alone and list those the server accepts (`version_enum`). */
  versionEnum: boolean
  matchersCondition: 'and' | 'or'
  matchers: Matcher[]
  extractors: Extractor[]
}

/** What load.ts lends to read the matchers and extractors the way it reads a tcp request's. */
export interface SslLoadHelpers {
  matcherOf: (raw: Record<string, unknown>, i: number) => Matcher
  extractorOf: (raw: Record<string, unknown>, i: number) => Extractor
  checkText: (text: string, where: string) => void
  refuse: (reason: string) => never
}

/** The JSON fields that are text: each is also a part (`part: subject_cn`). */
export const SSL_TEXT_FIELDS = ['host', 'port', 'ip', 'tls_version', 'cipher', 'tls_connection', 'sni', 'not_before', 'not_after',
  'subject_cn', 'subject_dn', 'issuer_cn', 'issuer_dn', 'serial']

const KNOWN_SSL = new Set(['id', 'name', 'address', 'host', 'min_version', 'max_version', 'cipher_suites', 'server_name', 'scan_mode',
  'tls_version_enum', 'tls_cipher_enum', 'matchers', 'matchers-condition', 'extractors'])
const ADDRESSES = ['{{Host}}:{{Port}}', '{{Hostname}}']
/** Nuclei's version names in order; SSLv3 is absent from node's OpenSSL, so it can never be offered. */
const VERSIONS: Record<string, tls.SecureVersion | null> = { sslv3: null, tls10: 'TLSv1', tls11: 'TLSv1.1', tls12: 'TLSv1.2', tls13: 'TLSv1.3' }
const ORDER: tls.SecureVersion[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3']
const NAME_OF: Record<string, string> = { SSLv3: 'sslv3', TLSv1: 'tls10', 'TLSv1.1': 'tls11', 'TLSv1.2': 'tls12', 'TLSv1.3': 'tls13' }
const OPENSSL_OF = new Map<string, string>()
for (const [iana, openssl] of CIPHER_NAMES) {
  OPENSSL_OF.set(iana.toUpperCase(), openssl)
  OPENSSL_OF.set(openssl.toUpperCase(), openssl)
}
/** Each handshake's own cap, within the port's budget. */
const HANDSHAKE_MS = 5000

function versionOf (raw: unknown, key: string, h: SslLoadHelpers): tls.SecureVersion | null | undefined {
  if (raw === undefined) return undefined
  const name = String(raw).toLowerCase()
  if (!(name in VERSIONS)) return h.refuse(`${key} ${JSON.stringify(raw)} is not one of ${Object.keys(VERSIONS).join(', ')}`)
  return VERSIONS[name]
}

/** The node:tls cipher string for the names a template lists (OpenSSL's or IANA's). */
function ciphersOf (raw: unknown, min: tls.SecureVersion, max: tls.SecureVersion, h: SslLoadHelpers): string | undefined {
  if (raw === undefined) return undefined
  const names = (Array.isArray(raw) ? raw : [raw]).flatMap((x) => typeof x === 'string' ? x.split(',') : h.refuse('cipher_suites must be a list of names'))
    .map((s) => s.trim()).filter((s) => s !== '')
  if (names.length === 0) return h.refuse('cipher_suites is empty')
  const openssl = names.map((n) => OPENSSL_OF.get(n.toUpperCase()) ?? h.refuse(`cipher suite ${JSON.stringify(n)} is unknown (neither an OpenSSL nor an IANA name)`))
  // node:tls reads the `TLS_` names as TLS 1.3 suites and the others as TLS 1.2-and-older ones, and narrows the
  // versions it offers to those the listed suites can run on: a list no allowed version can use is a template error.
  const v13 = openssl.filter((n) => n.startsWith('TLS_'))
  const older = openssl.filter((n) => !n.startsWith('TLS_'))
  if (v13.length === 0 && min === 'TLSv1.3') h.refuse('cipher_suites names no TLS 1.3 suite but min_version is tls13')
  if (older.length === 0 && max !== 'TLSv1.3') h.refuse('cipher_suites names only TLS 1.3 suites but max_version is below tls13')
  // SECLEVEL=0: the legacy suites a scanner asks about are exactly those OpenSSL 3 refuses at its default level.
  return [...v13, ...older, ...(older.length > 0 ? ['@SECLEVEL=0'] : [])].join(':')
}

/** One `ssl:` request, or a refusal (thrown through `h.refuse`). */
export function sslRequestOf (raw: unknown, i: number, h: SslLoadHelpers): SslRequest {
  const where = `ssl request ${i + 1}`
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return h.refuse(`${where} must be a mapping`)
  const r = raw as Record<string, unknown>
  for (const k of Object.keys(r)) if (!KNOWN_SSL.has(k)) h.refuse(`${where}: ${k} is not supported`)
  const address = String(r.address ?? r.host ?? '{{Host}}:{{Port}}')
  if (!ADDRESSES.includes(address)) h.refuse(`${where}: address ${JSON.stringify(address)}: an ssl template may only talk to the port it is run on (${ADDRESSES.join(', ')})`)
  if (r.scan_mode !== undefined && r.scan_mode !== 'auto' && r.scan_mode !== 'ctls') {
    h.refuse(`${where}: scan_mode ${JSON.stringify(r.scan_mode)} is not supported (the handshake is node:tls, as ctls; auto means the same here)`)
  }
  if (r.tls_cipher_enum === true) h.refuse(`${where}: tls_cipher_enum is not supported (one handshake per cipher suite)`)
  if (r.tls_version_enum !== undefined && typeof r.tls_version_enum !== 'boolean') h.refuse(`${where}: tls_version_enum must be true or false`)
  const lowest = versionOf(r.min_version, 'min_version', h)
  const highest = versionOf(r.max_version, 'max_version', h)
  if (highest === null) h.refuse(`${where}: max_version sslv3 cannot be offered (node's OpenSSL has no SSLv3)`)
  // min_version sslv3 asks for anything from SSLv3 up: TLS 1.0 is the lowest that can be offered.
  const minVersion = lowest ?? 'TLSv1'
  const maxVersion = highest ?? 'TLSv1.3'
  if (ORDER.indexOf(minVersion) > ORDER.indexOf(maxVersion)) h.refuse(`${where}: min_version is above max_version`)
  const ciphers = ciphersOf(r.cipher_suites, minVersion, maxVersion, h)
  if (r.server_name !== undefined && typeof r.server_name !== 'string') h.refuse(`${where}: server_name must be text`)
  if (typeof r.server_name === 'string') h.checkText(r.server_name, `${where} server_name`)
  const matchers = (Array.isArray(r.matchers) ? r.matchers : []).map((m, j) => h.matcherOf(m as Record<string, unknown>, j))
  const extractors = (Array.isArray(r.extractors) ? r.extractors : []).map((e, j) => h.extractorOf(e as Record<string, unknown>, j))
  if (matchers.length === 0 && extractors.filter((e) => !e.internal).length === 0) h.refuse(`${where}: no matchers and no extractors: it could report nothing`)
  const parts = new Set(['data', 'body', 'raw', 'all', 'response', ...SSL_TEXT_FIELDS])
  for (const x of [...matchers, ...extractors]) if (!parts.has(x.part)) h.refuse(`${where}: part ${JSON.stringify(x.part)} does not exist in an ssl response`)
  return {
    address,
    ...(typeof r.server_name === 'string' && r.server_name !== '' ? { serverName: r.server_name } : {}),
    minVersion,
    maxVersion,
    ...(ciphers !== undefined ? { ciphers } : {}),
    versionEnum: r.tls_version_enum === true,
    matchersCondition: r['matchers-condition'] === 'and' ? 'and' : 'or',
    matchers,
    extractors
  }
}

/** The `ssl:` list of a template. */
export function sslRequestsOf (raw: unknown, h: SslLoadHelpers): SslRequest[] {
  if (!Array.isArray(raw) || raw.length === 0) return h.refuse('ssl must be a non-empty list of requests')
  return raw.map((r, i) => sslRequestOf(r, i, h))
}

interface HandshakeOptions {
  host: string
  port: number
  servername?: string
  minVersion: tls.SecureVersion
  maxVersion: tls.SecureVersion
  ciphers?: string
  timeoutMs: number
  signal: AbortSignal
}

/**
 * One handshake: the open TLS socket (the caller destroys it), 'refused' when the port took the connection but the
 * handshake failed (an alert, a close, no common version or suite), null when the port could not be reached in time.
 */
function handshake (o: HandshakeOptions): Promise<tls.TLSSocket | 'refused' | null> {
  return new Promise((resolve) => {
    if (o.signal.aborted || o.timeoutMs <= 0) return resolve(null)
    let settled = false
    let secure: tls.TLSSocket | undefined
    const raw = net.connect({ host: o.host, port: o.port })
    const done = (v: tls.TLSSocket | 'refused' | null): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      o.signal.removeEventListener('abort', onAbort)
      if (v === null || v === 'refused') {
        secure?.destroy()
        raw.destroy()
      }
      resolve(v)
    }
    const onAbort = (): void => done(null)
    const timer = setTimeout(onAbort, o.timeoutMs)
    o.signal.addEventListener('abort', onAbort, { once: true })
    raw.on('error', () => done(null))
    raw.once('connect', () => {
      raw.removeAllListeners('error')
      raw.on('error', () => done('refused'))
      try {
        secure = tls.connect({
          socket: raw,
          ...(o.servername !== undefined ? { servername: o.servername } : {}),
          rejectUnauthorized: false,
          minVersion: o.minVersion,
          maxVersion: o.maxVersion,
          ciphers: o.ciphers ?? 'ALL:@SECLEVEL=0'
        })
      } catch {
        return done(null)
      }
      secure.once('secureConnect', () => done(secure as tls.TLSSocket))
      secure.on('error', () => done('refused'))
      secure.once('close', () => done('refused'))
    })
  })
}

function lines (dn: string | undefined): string[] {
  return (dn ?? '').split('\n').map((s) => s.trim()).filter((s) => s !== '')
}

/** The common name of a distinguished name (the last CN, the most specific). */
function cnOf (dn: string | undefined): string | undefined {
  const cn = lines(dn).filter((l) => l.startsWith('CN=')).pop()
  return cn?.slice(3)
}

/** `CN=x,O=y,C=z`: the order and separators Go's pkix.Name prints (tlsx's subject_dn), most specific first. */
function dnText (dn: string | undefined): string {
  return lines(dn).reverse().join(',')
}

function rfc3339 (date: string): string | undefined {
  const d = new Date(date)
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** The response of one completed handshake, as tlsx prints it (the fields templates test). */
function responseOf (s: tls.TLSSocket, host: string, port: number, servername: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {
    host,
    port: String(port),
    ip: s.remoteAddress ?? host,
    probe_status: true,
    tls_version: NAME_OF[s.getProtocol() ?? ''] ?? String(s.getProtocol()),
    cipher: s.getCipher()?.standardName ?? s.getCipher()?.name,
    tls_connection: 'ctls'
  }
  if (servername !== undefined) out.sni = servername
  const cert = s.getPeerX509Certificate()
  if (cert === undefined) return out
  const notAfter = new Date(cert.validTo)
  const names = (cert.subjectAltName ?? '').split(/,\s*/).flatMap((e) => {
    const m = /^(DNS|IP Address):(.+)$/.exec(e.trim())
    return m === null ? [] : [m[2]]
  })
  const cn = cnOf(cert.subject)
  // tlsx compares the certificate with the SNI name it sent, or else the host it was given.
  const expected = servername ?? host
  // X509Certificate's own name checks: the socket's legacy certificate object can be empty once the server hangs up.
  const mismatched = net.isIP(expected) !== 0 ? cert.checkIP(expected) === undefined : cert.checkHost(expected) === undefined
  const serial = cert.serialNumber.length % 2 === 1 ? `0${cert.serialNumber}` : cert.serialNumber
  Object.assign(out, {
    not_before: rfc3339(cert.validFrom),
    not_after: rfc3339(cert.validTo),
    expired: !Number.isNaN(notAfter.getTime()) && notAfter.getTime() < Date.now(),
    self_signed: isSelfSigned(cert),
    mismatched,
    wildcard_certificate: [cn, ...names].some((n) => n?.startsWith('*.') === true),
    // Node says why the chain did not verify; a name that does not match is `mismatched`, not distrust.
    untrusted: !s.authorized && s.authorizationError !== undefined && String(s.authorizationError) !== 'ERR_TLS_CERT_ALTNAME_INVALID',
    subject_cn: cn,
    subject_dn: dnText(cert.subject),
    subject_an: names,
    issuer_cn: cnOf(cert.issuer),
    issuer_dn: dnText(cert.issuer),
    serial: serial.toUpperCase().match(/../g)?.join(':') ?? '',
    fingerprint_hash: {
      md5: createHash('md5').update(cert.raw).digest('hex'),
      sha1: createHash('sha1').update(cert.raw).digest('hex'),
      sha256: createHash('sha256').update(cert.raw).digest('hex')
    }
  })
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k]
  return out
}

/** What run.ts lends: the port, the run's signal and its budget. */
export interface SslContext {
  host: string
  port: number
  signal: AbortSignal
  remaining: (cap: number) => number
}

/**
 * One ssl request on the port: its parts (the JSON response as `data`, each text field as a part) with its fields
 * set in `vars`, 'miss' when the server refused the handshake, null when the port could not be reached.
 */
export async function sslExchange (ctx: SslContext, req: SslRequest, vars: Vars): Promise<Parts | 'miss' | null> {
  let servername: string | undefined
  try {
    servername = req.serverName !== undefined ? interpolate(req.serverName, vars) : undefined
  } catch {
    return null
  }
  // SNI never carries an IP address; with no name asked for, a DNS-name target sends its own.
  if (servername === '' || (servername !== undefined && net.isIP(servername) !== 0)) servername = undefined
  if (servername === undefined && req.serverName === undefined && net.isIP(ctx.host) === 0) servername = ctx.host
  const base = { host: ctx.host, port: ctx.port, servername, ciphers: req.ciphers, signal: ctx.signal }
  const s = await handshake({ ...base, minVersion: req.minVersion, maxVersion: req.maxVersion, timeoutMs: ctx.remaining(HANDSHAKE_MS) })
  if (s === null) return null
  if (s === 'refused') return 'miss'
  let response: Record<string, unknown>
  try {
    response = responseOf(s, ctx.host, ctx.port, servername)
  } finally {
    s.destroy()
  }
  if (req.versionEnum) {
    const accepted: string[] = []
    for (const v of ORDER.slice(ORDER.indexOf(req.minVersion), ORDER.indexOf(req.maxVersion) + 1)) {
      const one = await handshake({ ...base, minVersion: v, maxVersion: v, timeoutMs: ctx.remaining(HANDSHAKE_MS) })
      if (one === null) return null
      if (one !== 'refused') {
        one.destroy()
        accepted.push(NAME_OF[v])
      }
    }
    response.version_enum = accepted
  }
  if (ctx.signal.aborted) return null
  const parts: Parts = { data: JSON.stringify(response), request: '' }
  for (const k of SSL_TEXT_FIELDS) if (typeof response[k] === 'string') parts[k] = response[k] as string
  for (const [k, v] of Object.entries(response)) {
    // Objects (fingerprint_hash) are not values of the expression language: the json extractor reaches them.
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') vars[k] = v
    else if (Array.isArray(v)) vars[k] = v.map(String) as Value[]
  }
  return parts
}
