// Telnet speaks first on most servers: option negotiation (IAC DO/WILL …, RFC 854/855) and often
// a login prompt. The negotiation names no product, so only the service is reported.

import { clean, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [23, 2323]

const IAC = 0xff
/** WILL, WONT, DO, DONT, SB: the commands a server opens its negotiation with. */
const OPENERS = new Set([0xfb, 0xfc, 0xfd, 0xfe, 0xfa])

/** Options named in the negotiation, for the extra info (RFC 857, 858, 1091, 1073, 1079, 1184). */
const OPTIONS: Record<number, string> = { 1: 'echo', 3: 'suppress-go-ahead', 24: 'terminal-type', 31: 'window-size', 32: 'terminal-speed', 34: 'linemode', 39: 'new-environ' }

export function parse (reply: Buffer): ProbeMatch | null {
  if (reply.length < 3 || reply[0] !== IAC || !OPENERS.has(reply[1])) return null
  const named = new Set<string>()
  for (let i = 0; i + 2 < reply.length; i++) {
    if (reply[i] === IAC && reply[i + 1] >= 0xfb && reply[i + 1] <= 0xfe && OPTIONS[reply[i + 2]]) named.add(OPTIONS[reply[i + 2]])
  }
  return clean({ service: 'telnet', extraInfo: named.size ? `negotiates ${[...named].join(', ')}` : undefined })
}

export const probe: ProbeDescriptor = {
  name: 'telnet',
  ports,
  serverFirst: true,
  recognise: (reply) => parse(reply),
  products: []
}
