// memcached over UDP (its protocol.txt, "UDP protocol"): each datagram starts with an 8-byte frame
// header (request id, sequence number, datagram count, reserved) before the text protocol; the
// `version` command answers `VERSION 1.6.18`. memcached listens on UDP only when started with `-U`.

import { parse as parseText, ports } from '../memcached'
import type { ProbeMatch } from '../common'
import type { UdpProbeDescriptor } from './descriptor'

const REQUEST_ID = 0x5653

export function request (): Buffer {
  const header = Buffer.alloc(8)
  header.writeUInt16BE(REQUEST_ID, 0)
  header.writeUInt16BE(0, 2)
  header.writeUInt16BE(1, 4)
  return Buffer.concat([header, Buffer.from('version\r\n')])
}

export function parse (reply: Buffer): ProbeMatch | null {
  if (reply.length < 9 || reply.readUInt16BE(0) !== REQUEST_ID) return null
  return parseText(reply.subarray(8))
}

export const udpProbe: UdpProbeDescriptor = {
  transport: 'udp',
  name: 'memcached',
  ports,
  request: () => request(),
  parse: (reply) => parse(reply),
  products: ['memcached']
}
