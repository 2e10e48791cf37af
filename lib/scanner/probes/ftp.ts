// FTP speaks first with a 220 greeting (RFC 959), single or multi-line (`220-` … `220 `).

import { clean, distroTag, joinInfo, lines, matchProduct, type ProbeMatch, type ProductSignature } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [21, 2121]

const PRODUCTS: ProductSignature[] = [
  [/\bvsFTPd\s+([\d.]+\w*)/i, 'vsftpd'],
  [/\bvsFTPd\b()/i, 'vsftpd'],
  [/\bProFTPD\s+(\d[\w.]*)/, 'ProFTPD'],
  [/\bProFTPD\b()/, 'ProFTPD'],
  [/\bPure-FTPd\b()/, 'Pure-FTPd'],
  [/\bFileZilla Server(?: version)?\s+(\d[\w.]*(?: beta)?)/i, 'FileZilla ftpd'],
  [/\bFileZilla Server\b()/i, 'FileZilla ftpd'],
  [/\bMicrosoft FTP Service\b()/, 'Microsoft ftpd'],
  [/\bwu-(\d[\w.()-]*)/, 'WU-FTPD'],
  [/\bSeattle Lab SL-?FTP\b()/, 'SLmail ftpd'],
  [/\bBftpd\s+([\d.]+)/, 'Bftpd'],
  [/\bServ-U FTP Server v?([\d.]+)/, 'Serv-U ftpd'],
  [/\bTwisted\s+([\d.]+)\s+FTP/, 'Twisted ftpd'],
  [/\bpyftpdlib\s+([\d.]+)/, 'pyftpdlib']
]

/** SMTP servers greet with 220 too; these words say the banner is not FTP. */
const SMTP_WORDS = /\b(E?SMTP|Postfix|Exim|Sendmail|mail service|MAIL Service|OpenSMTPD)\b/i

/** A multi-line greeting is complete at the line starting `NNN ` with the same code. */
export function complete (reply: Buffer): boolean {
  return lines(reply).some((l) => /^\d{3}(?: |$)/.test(l))
}

/** The greeting lines: the text of each `220-`/`220 ` line, or null when the reply is not one. */
export function greeting (reply: Buffer, code = '220'): string[] | null {
  const ls = lines(reply)
  if (!ls.length || !ls[0].startsWith(code)) return null
  const out: string[] = []
  for (const l of ls) {
    if (l.startsWith(code + '-') || l.startsWith(code + ' ') || l === code) {
      out.push(l.slice(4))
      if (!l.startsWith(code + '-')) return out
    } else {
      out.push(l)
    }
  }
  return out
}

/**
 * Parse an FTP greeting. `port` breaks the tie for a bare `220 ready` that could be FTP or SMTP:
 * such a banner only counts as FTP on an FTP port or when it names FTP.
 */
export function parse (reply: Buffer, port?: number): ProbeMatch | null {
  const g = greeting(reply)
  if (g) {
    const text = g.join(' ')
    if (SMTP_WORDS.test(text)) return null
    const result: ProbeMatch = { service: 'ftp' }
    const found = matchProduct(text, PRODUCTS)
    if (found) Object.assign(result, found, found.version ? { version: found.version.replace(/ beta$/, '') } : {})
    if (!result.product && !/\bftp/i.test(text) && !(port && ports.includes(port))) return null
    const tag = distroTag(text)
    if (tag) result.distro = tag.distro
    return clean(result)
  }
  // A server that refuses the client still says who it is, e.g. `421 Service not available`.
  const first = lines(reply)[0]
  if (first && /^(421|530)[ -].*\bftp/i.test(first)) return clean({ service: 'ftp', extraInfo: joinInfo(first.slice(4)) })
  return null
}

export const probe: ProbeDescriptor = {
  name: 'ftp',
  ports,
  tlsPorts: [990],
  serverFirst: true,
  // A multi-line `220-` greeting ends at its `220 ` line, not at the first line end.
  banner: { claims: (r) => /^\d{3}-/.test(r.subarray(0, 4).toString('latin1')), complete },
  recognise: parse,
  starttls: { command: Buffer.from('AUTH TLS\r\n'), done: (r) => /^\d{3} [^\n]*\n/m.test(r.toString('latin1')), ok: /^234 / },
  farewell: Buffer.from('QUIT\r\n'),
  products: PRODUCTS.map(([, product]) => product)
}
