// Apache Cassandra's CQL native protocol (doc/native_protocol_v4.spec in apache/cassandra). OPTIONS
// in a v4 frame needs no STARTUP and no credentials; the server answers SUPPORTED, a string
// multimap of CQL_VERSION, COMPRESSION and (since 3.10) PROTOCOL_VERSIONS. None of these is the
// server's release: the probe names the product and keeps the CQL version as extra info.
// ScyllaDB speaks the same protocol and adds SCYLLA_* options; it is not reported as Cassandra.

import { joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [9042]

export const tlsPorts = [9142]

const VERSION = 0x04
const OPCODE_OPTIONS = 0x05
const OPCODE_SUPPORTED = 0x06
const HEADER = 9
/** The stream id the response must carry back (a client may pick any non-negative one). */
export const STREAM = 0x5653
const MAX_BODY = 64 * 1024

/** OPTIONS: version 4 request, no flags, our stream, opcode 5, empty body. */
export function optionsFrame (): Buffer {
  const b = Buffer.alloc(HEADER)
  b[0] = VERSION
  b[1] = 0
  b.writeInt16BE(STREAM, 2)
  b[4] = OPCODE_OPTIONS
  b.writeInt32BE(0, 5)
  return b
}

export const request = optionsFrame()

export function complete (reply: Buffer): boolean {
  if (reply.length < HEADER) return false
  const len = reply.readInt32BE(5)
  return len < 0 || len > MAX_BODY || reply.length >= HEADER + len
}

const TEXT = /^[\x20-\x7e]*$/

/** A [string multimap] that fills `body` exactly, or null. */
export function stringMultimap (body: Buffer): Map<string, string[]> | null {
  let off = 0
  const u16 = (): number | null => {
    if (off + 2 > body.length) return null
    const v = body.readUInt16BE(off)
    off += 2
    return v
  }
  const str = (): string | null => {
    const n = u16()
    if (n === null || off + n > body.length) return null
    const s = body.subarray(off, off + n).toString('latin1')
    off += n
    return TEXT.test(s) ? s : null
  }
  const n = u16()
  if (n === null || n > 64) return null
  const map = new Map<string, string[]>()
  for (let i = 0; i < n; i++) {
    const key = str()
    const count = u16()
    if (key === null || key === '' || count === null || count > 64 || map.has(key)) return null
    const values: string[] = []
    for (let j = 0; j < count; j++) {
      const v = str()
      if (v === null) return null
      values.push(v)
    }
    map.set(key, values)
  }
  return off === body.length ? map : null
}

/**
 * Read a SUPPORTED frame: a response (direction bit) of protocol 1-6, uncompressed, on our stream,
 * whose body is exactly one string multimap naming a CQL version.
 */
export function parseSupported (reply: Buffer): Map<string, string[]> | null {
  if (reply.length < HEADER) return null
  const version = reply[0]
  if ((version & 0x80) === 0 || (version & 0x7f) < 1 || (version & 0x7f) > 6) return null
  if ((reply[1] & 0x01) !== 0) return null
  if (reply.readInt16BE(2) !== STREAM || reply[4] !== OPCODE_SUPPORTED) return null
  const len = reply.readInt32BE(5)
  if (len < 2 || len > MAX_BODY || reply.length < HEADER + len) return null
  const map = stringMultimap(reply.subarray(HEADER, HEADER + len))
  const cql = map?.get('CQL_VERSION')
  if (!map || !cql || cql.length === 0 || !cql.every((v) => /^\d+(\.\d+)+$/.test(v))) return null
  return map
}

export function parse (reply: Buffer): ProbeMatch | null {
  const map = parseSupported(reply)
  if (!map) return null
  const scylla = [...map.keys()].some((k) => k.startsWith('SCYLLA_'))
  const protocols = map.get('PROTOCOL_VERSIONS')
  const extraInfo = joinInfo(`CQL ${(map.get('CQL_VERSION') as string[]).join(', ')}`,
    protocols?.length ? `protocol versions ${protocols.join(', ')}` : undefined,
    scylla ? 'ScyllaDB options (SCYLLA_*)' : undefined)
  return scylla ? { service: 'cassandra', extraInfo } : { service: 'cassandra', product: 'Cassandra', extraInfo }
}

export const probe: ProbeDescriptor = {
  name: 'cassandra',
  ports,
  tlsPorts,
  fallback: 'full',
  request: () => request,
  complete,
  parse: (reply) => parse(reply),
  products: ['Cassandra']
}
