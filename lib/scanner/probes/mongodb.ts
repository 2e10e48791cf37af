// MongoDB wire protocol. `isMaster` as an OP_QUERY on `admin.$cmd` is still answered by every
// server version (it is the handshake drivers use), and its maxWireVersion bounds the server
// version; `buildInfo` as OP_MSG (wire version 6+) then gives the exact version when allowed.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [27017, 27018, 27019]

const OP_REPLY = 1
const OP_QUERY = 2004
const OP_MSG = 2013

type BsonValue = string | number | boolean | null | bigint | BsonDoc | BsonValue[] | Buffer
interface BsonDoc { [k: string]: BsonValue }

/** Encode a flat document of strings, int32 and booleans: all a probe needs to send. */
export function encodeBson (doc: Record<string, string | number | boolean>): Buffer {
  const parts: Buffer[] = []
  for (const [k, v] of Object.entries(doc)) {
    const key = Buffer.from(k + '\0', 'utf8')
    if (typeof v === 'string') {
      const s = Buffer.from(v + '\0', 'utf8')
      const len = Buffer.alloc(4)
      len.writeInt32LE(s.length)
      parts.push(Buffer.from([0x02]), key, len, s)
    } else if (typeof v === 'boolean') {
      parts.push(Buffer.from([0x08]), key, Buffer.from([v ? 1 : 0]))
    } else {
      const n = Buffer.alloc(4)
      n.writeInt32LE(v)
      parts.push(Buffer.from([0x10]), key, n)
    }
  }
  const body = Buffer.concat(parts)
  const out = Buffer.alloc(4 + body.length + 1)
  out.writeInt32LE(out.length)
  body.copy(out, 4)
  return out
}

const MAX_DEPTH = 16

/** Decode a BSON document. Unknown element types end decoding with an error (caught by parse). */
export function decodeBson (buf: Buffer, depth = 0): BsonDoc {
  if (depth > MAX_DEPTH) throw new RangeError('BSON nested too deep')
  if (buf.length < 5) throw new RangeError('BSON too short')
  const total = buf.readInt32LE(0)
  if (total < 5 || total > buf.length) throw new RangeError('BSON length out of range')
  const doc: BsonDoc = {}
  let off = 4
  while (off < total - 1) {
    const type = buf[off++]
    const keyEnd = buf.indexOf(0, off)
    if (keyEnd < 0 || keyEnd >= total) throw new RangeError('BSON key unterminated')
    const key = buf.subarray(off, keyEnd).toString('utf8')
    off = keyEnd + 1
    const need = (n: number): void => { if (off + n > total) throw new RangeError('BSON truncated') }
    switch (type) {
      case 0x01: need(8); doc[key] = buf.readDoubleLE(off); off += 8; break
      case 0x02: case 0x0d: case 0x0e: {
        need(4)
        const len = buf.readInt32LE(off)
        need(4 + len)
        if (len < 1) throw new RangeError('BSON string length')
        doc[key] = buf.subarray(off + 4, off + 4 + len - 1).toString('utf8')
        off += 4 + len
        break
      }
      case 0x03: case 0x04: {
        need(4)
        const len = buf.readInt32LE(off)
        need(len)
        const sub = decodeBson(buf.subarray(off, off + len), depth + 1)
        doc[key] = type === 0x04 ? Object.values(sub) : sub
        off += len
        break
      }
      case 0x05: { need(5); const len = buf.readInt32LE(off); need(5 + len); doc[key] = buf.subarray(off + 5, off + 5 + len); off += 5 + len; break }
      case 0x06: case 0x0a: case 0x7f: case 0xff: doc[key] = null; break
      case 0x07: need(12); doc[key] = buf.subarray(off, off + 12).toString('hex'); off += 12; break
      case 0x08: need(1); doc[key] = buf[off] !== 0; off += 1; break
      case 0x09: case 0x11: case 0x12: need(8); doc[key] = buf.readBigInt64LE(off); off += 8; break
      case 0x10: need(4); doc[key] = buf.readInt32LE(off); off += 4; break
      case 0x13: need(16); doc[key] = buf.subarray(off, off + 16); off += 16; break
      case 0x0b: {
        const a = buf.indexOf(0, off); const b = a < 0 ? -1 : buf.indexOf(0, a + 1)
        if (b < 0 || b >= total) throw new RangeError('BSON regex unterminated')
        doc[key] = buf.subarray(off, a).toString('utf8'); off = b + 1; break
      }
      default: throw new RangeError(`BSON type 0x${type.toString(16)} not supported`)
    }
  }
  return doc
}

function header (len: number, requestId: number, opCode: number): Buffer {
  const h = Buffer.alloc(16)
  h.writeInt32LE(len, 0)
  h.writeInt32LE(requestId, 4)
  h.writeInt32LE(0, 8)
  h.writeInt32LE(opCode, 12)
  return h
}

/** OP_QUERY `{isMaster: 1}` on `admin.$cmd`. */
export function isMasterQuery (requestId = 1): Buffer {
  const coll = Buffer.from('admin.$cmd\0')
  const doc = encodeBson({ isMaster: 1 })
  // flags 0, collection, numberToSkip 0, numberToReturn -1 (one document, cursor closed), query
  const body = Buffer.concat([Buffer.alloc(4), coll, Buffer.from([0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]), doc])
  return Buffer.concat([header(16 + body.length, requestId, OP_QUERY), body])
}

/** OP_MSG `{buildInfo: 1, $db: 'admin'}`. */
export function buildInfoMsg (requestId = 2): Buffer {
  const doc = encodeBson({ buildInfo: 1, $db: 'admin' })
  const body = Buffer.concat([Buffer.alloc(4), Buffer.from([0]), doc])
  return Buffer.concat([header(16 + body.length, requestId, OP_MSG), body])
}

export const request = isMasterQuery()

export function complete (reply: Buffer): boolean {
  return reply.length >= 16 && reply.length >= reply.readInt32LE(0)
}

/** The reply document of an OP_REPLY or OP_MSG, or null when the bytes are not one. */
export function replyDocument (reply: Buffer): BsonDoc | null {
  if (reply.length < 16) return null
  const len = reply.readInt32LE(0)
  if (len < 21 || len > reply.length || len > 48 * 1024 * 1024) return null
  const op = reply.readInt32LE(12)
  try {
    if (op === OP_REPLY) {
      if (len < 36) return null
      const n = reply.readInt32LE(32)
      if (n < 1) return null
      return decodeBson(reply.subarray(36, len))
    }
    if (op === OP_MSG) {
      if (reply[20] !== 0) return null
      return decodeBson(reply.subarray(21, len))
    }
  } catch {
    return null
  }
  return null
}

/** Release by max wire version, the earliest server that speaks it (MongoDB's documented table). */
const WIRE_VERSIONS: Array<[number, string]> = [
  [25, '8.0'], [21, '7.0'], [17, '6.0'], [13, '5.0'], [9, '4.4'], [8, '4.2'], [7, '4.0'],
  [6, '3.6'], [5, '3.4'], [4, '3.2'], [3, '3.0'], [2, '2.6']
]

/** Parse the isMaster/hello reply. */
export function parse (reply: Buffer): ProbeMatch | null {
  const doc = replyDocument(reply)
  if (!doc) return null
  const isHello = 'ismaster' in doc || 'isWritablePrimary' in doc || 'maxWireVersion' in doc
  const isError = doc.ok === 0 && typeof doc.errmsg === 'string'
  if (!isHello && !isError) return null
  const wire = typeof doc.maxWireVersion === 'number' ? doc.maxWireVersion : undefined
  const since = wire !== undefined ? WIRE_VERSIONS.find(([w]) => wire >= w)?.[1] : undefined
  const version = typeof doc.version === 'string' ? doc.version : undefined
  return clean({
    service: 'mongodb',
    product: 'MongoDB',
    version,
    extraInfo: joinInfo(!version && since ? `version ${since} or later (wire version ${wire})` : undefined,
      typeof doc.setName === 'string' ? `replica set ${doc.setName}` : undefined,
      doc.msg === 'isdbgrid' ? 'mongos' : undefined,
      isError ? String(doc.errmsg).slice(0, 120) : undefined)
  })
}

/** Parse the buildInfo reply: `{version: '7.0.2', ok: 1}`; null when refused (auth required). */
export function parseBuildInfo (reply: Buffer): ProbeMatch | null {
  const doc = replyDocument(reply)
  if (!doc || typeof doc.version !== 'string') return null
  return clean({ service: 'mongodb', product: 'MongoDB', version: doc.version,
    extraInfo: typeof doc.gitVersion === 'string' ? `git ${doc.gitVersion.slice(0, 12)}` : undefined })
}

/** Whether to ask buildInfo as OP_MSG: only servers with wire version 6 (3.6) or later take it. */
export function supportsOpMsg (reply: Buffer): boolean {
  const doc = replyDocument(reply)
  return !!doc && typeof doc.maxWireVersion === 'number' && doc.maxWireVersion >= 6
}

export const probe: ProbeDescriptor = {
  name: 'mongodb',
  ports,
  fallback: 'full',
  recognise: (reply) => parse(reply),
  converse: async (io, s) => {
    io.write(request)
    const reply = await io.read(complete, s.wait())
    const hello = parse(reply)
    if (!hello || hello.version || !supportsOpMsg(reply)) return { match: hello, reply }
    io.write(buildInfoMsg())
    const more = await io.read(complete, s.wait())
    const build = parseBuildInfo(more)
    return { match: build ? { ...build, extraInfo: hello.extraInfo ?? build.extraInfo } : hello, reply }
  },
  products: ['MongoDB']
}
