// DNS over UDP: the same CHAOS TXT `version.bind` question as over TCP (../dns.ts), one message per
// datagram without the TCP length prefix.

import { parse as parseTcp, ports, versionQuery, PRODUCTS } from '../dns'
import type { UdpProbeDescriptor } from './descriptor'

export function request (): Buffer {
  return versionQuery('version.bind', 0x7655).subarray(2)
}

/** A reply datagram read as the TCP parser expects it (with its two-byte length in front). */
export function parse (reply: Buffer): ReturnType<typeof parseTcp> {
  if (reply.length < 12 || reply.length > 0xffff) return null
  const len = Buffer.alloc(2)
  len.writeUInt16BE(reply.length)
  return parseTcp(Buffer.concat([len, reply]))
}

export const udpProbe: UdpProbeDescriptor = {
  transport: 'udp',
  name: 'dns',
  ports,
  request,
  parse: (reply) => parse(reply),
  products: PRODUCTS.map(([, p]) => p)
}
