// Java RMI (JRMP) on its registry port: the client opens with `JRMI`, protocol version 2 and the stream
// protocol (0x4b); the server answers ProtocolAck (0x4e) followed by the client's host, as a Java UTF string,
// and port as it sees them (or 0x4f, ProtocolNotSupported). Every RMI endpoint answers so; the registry is the
// one usually on 1099.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [1099, 1098]

export const request = Buffer.from([0x4a, 0x52, 0x4d, 0x49, 0x00, 0x02, 0x4b])

export function complete (reply: Buffer): boolean {
  if (reply.length >= 1 && reply[0] === 0x4f) return true
  return reply.length >= 3 && reply.length >= 3 + reply.readUInt16BE(1) + 4
}

export function parse (reply: Buffer): ProbeMatch | null {
  if (reply.length === 1 && reply[0] === 0x4f) return { service: 'java-rmi', extraInfo: 'stream protocol not supported' }
  if (reply.length < 3 + 7 || reply[0] !== 0x4e) return null
  const len = reply.readUInt16BE(1)
  if (len < 1 || len > 255 || reply.length !== 3 + len + 4) return null
  const host = reply.subarray(3, 3 + len).toString('utf8')
  if (!/^[\w.:%-]+$/.test(host)) return null
  const port = reply.readUInt32BE(3 + len)
  if (port > 65535) return null
  return clean({ service: 'java-rmi', extraInfo: joinInfo('JRMP ProtocolAck', `sees the client as ${host}:${port}`) })
}

export const probe: ProbeDescriptor = {
  name: 'java-rmi',
  ports,
  fallback: 'full',
  request: () => request,
  complete,
  parse: (reply) => parse(reply),
  products: []
}
