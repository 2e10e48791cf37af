// NTP (RFC 5905): a mode 3 (client) request is answered by a mode 4 (server) packet whose header
// tells the protocol version, the stratum and the reference id. Neither names the implementation:
// ntpd, ntpsec, chrony and OpenNTPD all answer alike, so no product is reported.

import { clean, type ProbeMatch } from '../common'
import type { UdpProbeDescriptor } from './descriptor'

export const ports = [123]

const NTP_EPOCH_OFFSET_S = 2208988800

/** A 48-byte NTPv4 client request carrying the current time as its transmit timestamp. */
export function request (now = Date.now()): Buffer {
  const b = Buffer.alloc(48)
  b[0] = (0 << 6) | (4 << 3) | 3 // LI 0, version 4, mode 3 (client)
  const seconds = Math.floor(now / 1000) + NTP_EPOCH_OFFSET_S
  b.writeUInt32BE(seconds >>> 0, 40)
  b.writeUInt32BE(Math.floor(((now % 1000) / 1000) * 2 ** 32) >>> 0, 44)
  return b
}

/** How a reference id reads: four ASCII letters at stratum 0-1 (a kiss code or a clock), an IPv4 address above. */
function refId (stratum: number, id: Buffer): string {
  if (stratum <= 1) {
    const text = id.toString('latin1').replace(/\0+$/, '')
    return /^[\x20-\x7e]+$/.test(text) ? text : id.toString('hex')
  }
  return [...id].join('.')
}

export function parse (reply: Buffer): ProbeMatch | null {
  if (reply.length < 48) return null
  const mode = reply[0] & 0x07
  const version = (reply[0] >> 3) & 0x07
  // A server answers in mode 4; a symmetric peer in 2. Anything else is not an answer to a client.
  if ((mode !== 4 && mode !== 2) || version < 1 || version > 4) return null
  const leap = reply[0] >> 6
  const stratum = reply[1]
  const parts = [`NTPv${version}`, `stratum ${stratum}`]
  if (stratum === 0) parts.push(`kiss code ${refId(0, reply.subarray(12, 16))}`)
  else parts.push(`refid ${refId(stratum, reply.subarray(12, 16))}`)
  if (leap === 3) parts.push('unsynchronised')
  return clean({ service: 'ntp', extraInfo: parts.join(', ') })
}

export const udpProbe: UdpProbeDescriptor = {
  transport: 'udp',
  name: 'ntp',
  ports,
  request: () => request(),
  parse: (reply) => parse(reply),
  products: []
}
