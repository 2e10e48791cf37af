// POP3 speaks first: `+OK greeting` (RFC 1939).

import { clean, distroTag, firstLine, matchProduct, type ProbeMatch, type ProductSignature } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [110]

export const tlsPorts = [995]

const PRODUCTS: ProductSignature[] = [
  [/\bDovecot\b()/, 'Dovecot'],
  [/\bCourier-POP3\b()/i, 'Courier pop3d'],
  [/\bCyrus POP3 v?(\d[\w.-]*)/, 'Cyrus pop3d'],
  [/\bMicrosoft Exchange POP3\b()/, 'Microsoft Exchange pop3d'],
  [/\bQpopper\b(?: \(version ([\d.]+)\))?/i, 'Qpopper'],
  [/\bUW POP3 server ([\d.]+\w*)/, 'UW pop3d'],
  [/\bZimbra POP3\b()/, 'Zimbra pop3d'],
  [/\bgpop\b()/, 'Gmail pop3d']
]

export function complete (reply: Buffer): boolean {
  return firstLine(reply) !== null
}

export function parse (reply: Buffer): ProbeMatch | null {
  const line = firstLine(reply)
  if (line === null || !/^\+OK\b/.test(line)) return null
  // Redis-compatible and other servers also answer `+OK`; POP3 greets with words after it.
  if (line.trim() === '+OK') return null
  const text = line.slice(3).trim()
  const result: ProbeMatch = { service: 'pop3' }
  Object.assign(result, matchProduct(text, PRODUCTS))
  const tag = distroTag(text)
  if (tag) result.distro = tag.distro
  return clean(result)
}

export const probe: ProbeDescriptor = {
  name: 'pop3',
  ports,
  tlsPorts,
  serverFirst: true,
  recognise: (reply) => parse(reply),
  starttls: {
    ask: { send: Buffer.from('CAPA\r\n'), done: (r) => /^(\.|-ERR[^\n]*)\r?\n/m.test(r.toString('latin1')), offered: /^STLS\b/mi },
    command: Buffer.from('STLS\r\n'),
    done: (r) => /^[+-][^\n]*\n/m.test(r.toString('latin1')),
    ok: /^\+OK/
  },
  farewell: Buffer.from('QUIT\r\n'),
  products: PRODUCTS.map(([, product]) => product)
}
