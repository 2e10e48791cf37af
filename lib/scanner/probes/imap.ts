// IMAP speaks first: `* OK [CAPABILITY …] greeting` or `* PREAUTH`/`* BYE` (RFC 9051).

import { clean, distroTag, firstLine, joinInfo, matchProduct, type ProbeMatch, type ProductSignature } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [143]

export const tlsPorts = [993]

const PRODUCTS: ProductSignature[] = [
  [/\bDovecot\b()/, 'Dovecot'],
  [/\bCourier-IMAP\b()/, 'Courier Imapd'],
  [/\bCyrus IMAP(?:4)? v?(\d[\w.]*)/, 'Cyrus imapd'],
  [/\bMicrosoft Exchange (?:Server \d+ )?IMAP4\b()/, 'Microsoft Exchange imapd'],
  [/\bUW IMAP4?rev1 (?:server )?v?(\d[\w.]*)/i, 'UW imapd'],
  [/\bZimbra IMAP4rev1 server\b()/, 'Zimbra imapd'],
  [/\bGimap\b()/i, 'Gmail imapd'],
  [/\bhMailServer\b()/, 'hMailServer imapd']
]

export function complete (reply: Buffer): boolean {
  return firstLine(reply) !== null
}

export function parse (reply: Buffer): ProbeMatch | null {
  const line = firstLine(reply)
  if (line === null) return null
  const m = /^\* (OK|PREAUTH|BYE)\b ?(.*)$/i.exec(line)
  if (!m) return null
  const rest = m[2]
  const caps = /^\[CAPABILITY ([^\]]*)\]/i.exec(rest)
  const text = caps ? rest.slice(caps[0].length).trim() : rest
  if (caps && !/\bIMAP4(rev\d)?\b/i.test(caps[1])) return null
  const result: ProbeMatch = { service: 'imap' }
  Object.assign(result, matchProduct(text, PRODUCTS))
  const tag = distroTag(text)
  if (tag) result.distro = tag.distro
  result.extraInfo = joinInfo(m[1].toUpperCase() === 'PREAUTH' && 'pre-authenticated',
    !!caps && /\bSTARTTLS\b/i.test(caps[1]) && 'STARTTLS offered')
  return clean(result)
}

const tagged = (tag: string) => (r: Buffer): boolean => new RegExp(`^${tag} (OK|NO|BAD)\\b[^\\n]*\\n`, 'mi').test(r.toString('latin1'))

export const probe: ProbeDescriptor = {
  name: 'imap',
  ports,
  tlsPorts,
  serverFirst: true,
  recognise: parse,
  starttls: {
    ask: { send: Buffer.from('a0 CAPABILITY\r\n'), done: tagged('a0'), offered: /\bSTARTTLS\b/i },
    command: Buffer.from('a1 STARTTLS\r\n'),
    done: tagged('a1'),
    ok: /^a1 OK\b/mi
  },
  farewell: Buffer.from('a1 LOGOUT\r\n'),
  products: PRODUCTS.map(([, product]) => product)
}
