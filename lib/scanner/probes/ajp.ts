// AJP13, the Apache JServ Protocol a web server uses to forward requests to Tomcat (port 8009). A CPING packet
// (magic 0x1234, length 1, type 10) is answered CPONG (magic `AB`, length 1, type 9): a connector that
// speaks AJP to whoever reaches it.

import type { ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [8009]

export const cping = Buffer.from([0x12, 0x34, 0x00, 0x01, 0x0a])
const CPONG = Buffer.from([0x41, 0x42, 0x00, 0x01, 0x09])

export function complete (reply: Buffer): boolean {
  return reply.length >= 5
}

export function isCpong (reply: Buffer): boolean {
  return reply.length >= 5 && reply.subarray(0, 5).equals(CPONG)
}

export function parse (reply: Buffer): ProbeMatch | null {
  return isCpong(reply) ? { service: 'ajp13', extraInfo: 'CPONG answered to CPING' } : null
}

export const probe: ProbeDescriptor = {
  name: 'ajp13',
  ports,
  fallback: 'full',
  request: () => cping,
  complete,
  parse: (reply) => parse(reply),
  products: []
}
