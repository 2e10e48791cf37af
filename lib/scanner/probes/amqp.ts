// AMQP 0-9-1: the client sends the protocol header; the server answers Connection.Start, whose
// server-properties field table names the broker. A server that does not speak 0-9-1 answers
// with the header of the version it does speak and closes.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [5672]

export const tlsPorts = [5671]

export const request = Buffer.from([0x41, 0x4d, 0x51, 0x50, 0, 0, 9, 1])

const FRAME_END = 0xce

/** A method frame is complete at its size plus the frame-end octet; a header reply at 8 bytes. */
export function complete (reply: Buffer): boolean {
  if (reply.length >= 8 && reply.subarray(0, 4).toString('latin1') === 'AMQP') return true
  return reply.length >= 7 && reply.length >= 8 + reply.readUInt32BE(3)
}

export type FieldValue = string | number | bigint | boolean | null | FieldValue[] | { [k: string]: FieldValue }

class Reader {
  off = 0
  constructor (readonly buf: Buffer) {}
  need (n: number): void {
    if (this.off + n > this.buf.length) throw new RangeError('truncated field table')
  }

  u8 (): number { this.need(1); return this.buf[this.off++] }
  u32 (): number { this.need(4); const v = this.buf.readUInt32BE(this.off); this.off += 4; return v }
  bytes (n: number): Buffer { this.need(n); const b = this.buf.subarray(this.off, this.off + n); this.off += n; return b }
  shortstr (): string { return this.bytes(this.u8()).toString('utf8') }
  longstr (): Buffer { return this.bytes(this.u32()) }
}

const MAX_DEPTH = 8

function readValue (r: Reader, depth: number): FieldValue {
  const type = String.fromCharCode(r.u8())
  switch (type) {
    case 't': return r.u8() !== 0
    case 'b': { r.need(1); const v = r.buf.readInt8(r.off); r.off += 1; return v }
    case 'B': return r.u8()
    case 's': { r.need(2); const v = r.buf.readInt16BE(r.off); r.off += 2; return v }
    case 'u': { r.need(2); const v = r.buf.readUInt16BE(r.off); r.off += 2; return v }
    case 'I': { r.need(4); const v = r.buf.readInt32BE(r.off); r.off += 4; return v }
    case 'i': return r.u32()
    case 'l': { r.need(8); const v = r.buf.readBigInt64BE(r.off); r.off += 8; return v }
    case 'L': { r.need(8); const v = r.buf.readBigUInt64BE(r.off); r.off += 8; return v }
    case 'T': { r.need(8); const v = r.buf.readBigUInt64BE(r.off); r.off += 8; return v }
    case 'f': { r.need(4); const v = r.buf.readFloatBE(r.off); r.off += 4; return v }
    case 'd': { r.need(8); const v = r.buf.readDoubleBE(r.off); r.off += 8; return v }
    case 'D': { const scale = r.u8(); const v = r.u32(); return v / 10 ** scale }
    case 'S': return r.longstr().toString('utf8')
    case 'x': return r.longstr().toString('hex')
    case 'V': return null
    case 'A': {
      if (depth >= MAX_DEPTH) throw new RangeError('field table nested too deep')
      const sub = new Reader(r.longstr())
      const out: FieldValue[] = []
      while (sub.off < sub.buf.length) out.push(readValue(sub, depth + 1))
      return out
    }
    case 'F': {
      if (depth >= MAX_DEPTH) throw new RangeError('field table nested too deep')
      return readTableBody(r.longstr(), depth + 1)
    }
    default: throw new RangeError(`unknown field type ${JSON.stringify(type)}`)
  }
}

function readTableBody (buf: Buffer, depth: number): { [k: string]: FieldValue } {
  const r = new Reader(buf)
  const out: { [k: string]: FieldValue } = {}
  while (r.off < buf.length) {
    const name = r.shortstr()
    out[name] = readValue(r, depth)
  }
  return out
}

/** Decode an AMQP 0-9-1 field table body (without its 4-byte length). Throws on malformed input. */
export function parseFieldTable (buf: Buffer): { [k: string]: FieldValue } {
  return readTableBody(buf, 0)
}

export function parse (reply: Buffer): ProbeMatch | null {
  if (reply.length >= 8 && reply.subarray(0, 4).toString('latin1') === 'AMQP') {
    const [a, b, c, d] = reply.subarray(4, 8)
    // The header is protocol id, major, minor, revision: 0-9-1 is `0 0 9 1`, 1.0 is `0 1 0 0`.
    const version = b === 0 ? `0-${c}-${d}` : `${b}.${c}`
    const layer = a === 3 ? ' over SASL' : a === 2 ? ' over TLS' : ''
    return { service: 'amqp', extraInfo: `server speaks AMQP ${version}${layer}` }
  }
  if (reply.length < 12 || reply[0] !== 1 || reply.readUInt16BE(1) !== 0) return null
  const size = reply.readUInt32BE(3)
  if (reply.length < 8 + size || reply[7 + size] !== FRAME_END) return null
  const payload = reply.subarray(7, 7 + size)
  if (payload.readUInt16BE(0) !== 10 || payload.readUInt16BE(2) !== 10) return null
  const major = payload[4]
  const minor = payload[5]
  let props: { [k: string]: FieldValue }
  try {
    const r = new Reader(payload.subarray(6))
    props = parseFieldTable(r.longstr())
  } catch {
    return { service: 'amqp', extraInfo: `protocol ${major}-${minor}; malformed server properties` }
  }
  const str = (k: string): string | undefined => typeof props[k] === 'string' ? props[k] as string : undefined
  return clean({
    service: 'amqp',
    product: str('product'),
    version: str('version'),
    extraInfo: joinInfo(`protocol ${major}-${minor}`, str('platform'), str('cluster_name') && `cluster ${str('cluster_name')}`)
  })
}

export const probe: ProbeDescriptor = {
  name: 'amqp',
  ports,
  tlsPorts,
  fallback: 'full',
  recognise: (reply) => parse(reply),
  request: () => request,
  complete,
  parse: (reply) => parse(reply),
  products: ['RabbitMQ'],
  verbatimProducts: true
}
