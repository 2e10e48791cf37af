// ActiveMQ's OpenWire transport (port 61616) speaks first: a WireFormatInfo command, its size, type 1,
// the magic `ActiveMQ`, the protocol version, and a map of properties. Since ActiveMQ 5.13 that map
// carries `ProviderName` and `ProviderVersion`; older brokers name the protocol version only.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [61616]

/** OpenWire over TLS (ActiveMQ's `ssl://` transport connector). */
export const tlsPorts = [61617]

const MAGIC = Buffer.from('ActiveMQ')
const WIREFORMAT_INFO = 1

/** A whole command has arrived (its size says how much follows). */
export function complete (reply: Buffer): boolean {
  return reply.length >= 4 && reply.length >= 4 + reply.readUInt32BE(0)
}

/** The marshalled primitive map: string keys with scalar values (nested maps and lists end the read). */
export function readMap (b: Buffer): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {}
  if (b.length < 4) return out
  const count = b.readInt32BE(0)
  let off = 4
  for (let i = 0; i < count && i < 64; i++) {
    if (off + 2 > b.length) break
    const klen = b.readUInt16BE(off)
    const key = b.subarray(off + 2, off + 2 + klen).toString('utf8')
    off += 2 + klen
    if (off + 1 > b.length) break
    const type = b[off++]
    const need: Record<number, number> = { 0: 0, 1: 1, 2: 1, 3: 2, 4: 2, 5: 4, 6: 8, 7: 8, 8: 4 }
    if (type in need) {
      if (off + need[type] > b.length) break
      out[key] = type === 0 ? null : type === 1 ? b[off] !== 0 : type === 5 ? b.readInt32BE(off) : type === 6 ? Number(b.readBigInt64BE(off)) : type === 4 ? b.readInt16BE(off) : type === 2 ? b[off] : null
      off += need[type]
    } else if (type === 9 || type === 13) {
      const wide = type === 13
      if (off + (wide ? 4 : 2) > b.length) break
      const len = wide ? b.readInt32BE(off) : b.readUInt16BE(off)
      off += wide ? 4 : 2
      if (len < 0 || off + len > b.length) break
      out[key] = b.subarray(off, off + len).toString('utf8')
      off += len
    } else {
      break // a byte array, map or list: nothing after it is needed to name the broker
    }
  }
  return out
}

export function parse (reply: Buffer): ProbeMatch | null {
  if (reply.length < 17 || reply[4] !== WIREFORMAT_INFO || !reply.subarray(5, 13).equals(MAGIC)) return null
  const protocol = reply.readInt32BE(13)
  const end = Math.min(reply.length, 4 + reply.readUInt32BE(0))
  let props: ReturnType<typeof readMap> = {}
  // Loose encoding: a present-flag byte, then the map's size and bytes.
  if (end >= 22 && reply[17] === 1) {
    const size = reply.readInt32BE(18)
    if (size > 0 && 22 + size <= end) props = readMap(reply.subarray(22, 22 + size))
  }
  const name = typeof props.ProviderName === 'string' ? props.ProviderName : undefined
  const version = typeof props.ProviderVersion === 'string' && /^\d+(\.\d+)+/.test(props.ProviderVersion) ? props.ProviderVersion : undefined
  const activemq = name === 'ActiveMQ'
  return clean({
    service: 'openwire',
    product: activemq ? 'Apache ActiveMQ' : undefined,
    version: activemq ? version : undefined,
    extraInfo: joinInfo(`OpenWire ${protocol}`, name && !activemq && `provider ${name}${props.ProviderVersion ? ` ${String(props.ProviderVersion)}` : ''}`,
      typeof props.PlatformDetails === 'string' && `platform ${props.PlatformDetails.slice(0, 80)}`)
  })
}

export const probe: ProbeDescriptor = {
  name: 'openwire',
  ports,
  tlsPorts,
  serverFirst: true,
  banner: { claims: (reply) => reply.length >= 13 && reply.subarray(5, 13).equals(MAGIC), complete },
  recognise: (reply) => parse(reply),
  products: ['Apache ActiveMQ']
}
