// RDP (MS-RDPBCGR 2.2.1.1-2): an X.224 Connection Request carrying an RDP Negotiation Request,
// inside a TPKT. The Connection Confirm says which security the server picked (standard RDP
// security, TLS, CredSSP/NLA) or why it refused. Neither names the server software: Windows and
// xrdp answer alike (both use source reference 0x1234), so no product is reported.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [3389]

const PROTOCOL_SSL = 1
const PROTOCOL_HYBRID = 2
const PROTOCOL_HYBRID_EX = 8

const SELECTED: Record<number, string> = {
  0: 'standard RDP security',
  1: 'TLS',
  2: 'CredSSP (NLA)',
  4: 'RDSTLS',
  8: 'CredSSP with early user authorization'
}

const FAILURES: Record<number, string> = {
  1: 'TLS required by server',
  2: 'TLS not allowed by server',
  3: 'no certificate on server',
  4: 'inconsistent flags',
  5: 'CredSSP (NLA) required by server',
  6: 'TLS with user authentication required by server'
}

/** The Connection Request: TPKT, X.224 CR, RDP_NEG_REQ asking for TLS and CredSSP (the server picks). */
export function connectionRequest (): Buffer {
  const neg = Buffer.alloc(8)
  neg[0] = 1 // TYPE_RDP_NEG_REQ
  neg.writeUInt16LE(8, 2)
  neg.writeUInt32LE(PROTOCOL_SSL | PROTOCOL_HYBRID | PROTOCOL_HYBRID_EX, 4)
  const x224 = Buffer.concat([Buffer.from([0xe0, 0, 0, 0, 0, 0]), neg])
  const tpkt = Buffer.from([3, 0, 0, 0])
  tpkt.writeUInt16BE(4 + 1 + x224.length, 2)
  return Buffer.concat([tpkt, Buffer.from([x224.length]), x224])
}

/** A whole TPKT packet has arrived. */
export function complete (reply: Buffer): boolean {
  return reply.length >= 4 && reply[0] === 3 && reply.length >= reply.readUInt16BE(2)
}

export function parse (reply: Buffer): ProbeMatch | null {
  if (reply.length < 11 || reply[0] !== 3 || reply[1] !== 0) return null
  const len = reply.readUInt16BE(2)
  if (len < 11 || len > reply.length) return null
  const li = reply[4]
  if ((reply[5] & 0xf0) !== 0xd0 || li < 6 || 5 + li > len) return null // X.224 Connection Confirm
  if (li < 14) return { service: 'rdp', extraInfo: 'no security negotiation (standard RDP security)' }
  const neg = reply.subarray(11, 11 + 8)
  if (neg.length < 8) return null
  if (neg[0] === 2) {
    const p = neg.readUInt32LE(4)
    return clean({ service: 'rdp', extraInfo: joinInfo(`security ${SELECTED[p] ?? `protocol ${p}`}`) })
  }
  if (neg[0] === 3) {
    const code = neg.readUInt32LE(4)
    return { service: 'rdp', extraInfo: `negotiation refused: ${FAILURES[code] ?? `code ${code}`}` }
  }
  return null
}

export const probe: ProbeDescriptor = {
  name: 'rdp',
  ports,
  fallback: 'full',
  recognise: (reply) => parse(reply),
  request: () => connectionRequest(),
  complete,
  parse: (reply) => parse(reply),
  products: []
}
