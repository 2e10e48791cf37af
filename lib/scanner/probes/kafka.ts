// Apache Kafka's binary protocol. ApiVersions (api key 18) version 0 is answered by every broker
// since 0.10 and needs no authentication; a newer request version is answered by older brokers
// only with a v0 UNSUPPORTED_VERSION error, so v0 is the one question that always gets its
// answer. The answer lists API keys and version ranges but never the broker's release: the probe
// names the product and no version.

import type { ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [9092]

export const tlsPorts = [9093]

const API_VERSIONS = 18
/** Echoed by the broker in the response header: a reply carrying another id is not ours. */
export const CORRELATION_ID = 0x76736b61
const CLIENT_ID = 'vulnscan'
const UNSUPPORTED_VERSION = 35
/** Far above the largest key a broker has ever listed (about 90) and the longest range. */
const MAX_API_KEY = 1000
const MAX_API_VERSION = 100
const MAX_BODY = 64 * 1024

/** ApiVersions v0: size, api key, api version, correlation id, client id; v0 has no body. */
export function apiVersionsRequest (): Buffer {
  const id = Buffer.from(CLIENT_ID, 'latin1')
  const b = Buffer.alloc(4 + 2 + 2 + 4 + 2 + id.length)
  b.writeInt32BE(b.length - 4, 0)
  b.writeInt16BE(API_VERSIONS, 4)
  b.writeInt16BE(0, 6)
  b.writeInt32BE(CORRELATION_ID, 8)
  b.writeInt16BE(id.length, 12)
  id.copy(b, 14)
  return b
}

export const request = apiVersionsRequest()

/** The size prefix says how much follows; an absurd size is complete at once (and fails to parse). */
export function complete (reply: Buffer): boolean {
  if (reply.length < 4) return false
  const size = reply.readInt32BE(0)
  return size < 0 || size > MAX_BODY || reply.length >= 4 + size
}

export interface ApiVersionsResponse {
  errorCode: number
  apis: Array<{ key: number, min: number, max: number }>
}

/**
 * Read a v0 ApiVersions response, strictly: our correlation id, no error or UNSUPPORTED_VERSION,
 * an array that fills the frame exactly, and keys and version ranges a broker could send.
 */
export function parseApiVersions (reply: Buffer): ApiVersionsResponse | null {
  if (reply.length < 14) return null
  const size = reply.readInt32BE(0)
  if (size < 10 || size > MAX_BODY || reply.length < 4 + size) return null
  if (reply.readInt32BE(4) !== CORRELATION_ID) return null
  const errorCode = reply.readInt16BE(8)
  if (errorCode !== 0 && errorCode !== UNSUPPORTED_VERSION) return null
  const count = reply.readInt32BE(10)
  if (count < 0 || size !== 10 + 6 * count) return null
  if (errorCode === 0 && count === 0) return null
  const apis: ApiVersionsResponse['apis'] = []
  const seen = new Set<number>()
  for (let i = 0, off = 14; i < count; i++, off += 6) {
    const key = reply.readInt16BE(off)
    const min = reply.readInt16BE(off + 2)
    const max = reply.readInt16BE(off + 4)
    if (key < 0 || key > MAX_API_KEY || seen.has(key)) return null
    if (min < 0 || max < min || max > MAX_API_VERSION) return null
    seen.add(key)
    apis.push({ key, min, max })
  }
  return { errorCode, apis }
}

export function parse (reply: Buffer): ProbeMatch | null {
  const r = parseApiVersions(reply)
  if (!r) return null
  const extraInfo = r.errorCode === UNSUPPORTED_VERSION
    ? 'ApiVersions v0 refused (UNSUPPORTED_VERSION)'
    : `ApiVersions: ${r.apis.length} API keys`
  return { service: 'kafka', product: 'Kafka', extraInfo }
}

export const probe: ProbeDescriptor = {
  name: 'kafka',
  ports,
  tlsPorts,
  fallback: 'full',
  request: () => request,
  complete,
  parse: (reply) => parse(reply),
  products: ['Kafka']
}
