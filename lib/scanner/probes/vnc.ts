// VNC (RFB, RFC 6143) speaks first: the 12-byte ProtocolVersion `RFB 003.008\n`. It names the
// protocol version only; the server product stays unknown without a login.

import type { ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [5900, 5901, 5902]

export function parse (reply: Buffer): ProbeMatch | null {
  const m = /^RFB (\d{3})\.(\d{3})\n/.exec(reply.subarray(0, 12).toString('latin1'))
  if (!m) return null
  return { service: 'vnc', extraInfo: `protocol ${Number(m[1])}.${Number(m[2])}` }
}

export const probe: ProbeDescriptor = {
  name: 'vnc',
  ports,
  serverFirst: true,
  recognise: (reply) => parse(reply),
  products: []
}
