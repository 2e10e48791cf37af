// SMTP speaks first with a 220 greeting (RFC 5321): `220 host ESMTP product…`.

import { greeting, parse as parseFtp, ports as ftpPorts } from './ftp'
import { clean, distroTag, joinInfo, lines, matchProduct, type ProbeMatch, type ProductSignature } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [25, 587, 2525]

export const tlsPorts = [465]

/** Sent after an ambiguous 220 greeting: an SMTP server answers 250, an FTP server 500. */
export const ehlo = Buffer.from('EHLO vulnscan.invalid\r\n')

const PRODUCTS: ProductSignature[] = [
  [/\bPostfix\b()/, 'Postfix'],
  [/\bExim\s+(\d[\w.]*)/, 'Exim'],
  [/\bExim\b()/, 'Exim'],
  [/\bSendmail\s+(\d[\w.]*)(?:\/[\w.]+)?/, 'Sendmail'],
  [/\bSendmail\b()/, 'Sendmail'],
  [/\bMicrosoft ESMTP MAIL Service(?:, Version: ([\d.]+))?/, 'Microsoft ESMTP'],
  [/\bOpenSMTPD\b()/, 'OpenSMTPD'],
  [/\bHaraka\/?([\d.]+)?/, 'Haraka smtpd'],
  [/\bqmail\b()/i, 'qmail smtpd'],
  [/\bMailEnable\b()/, 'MailEnable smtpd'],
  [/\bCourier\b()/, 'Courier smtpd'],
  [/\bZimbra\b()/, 'Zimbra smtpd'],
  [/\bMDaemon\s+([\d.]+)/, 'MDaemon smtpd'],
  [/\bhMailServer\b()/, 'hMailServer smtpd']
]

export function complete (reply: Buffer): boolean {
  return lines(reply).some((l) => /^\d{3}(?: |$)/.test(l))
}

/**
 * Parse a greeting. Without SMTP wording a bare 220 line is taken as SMTP only on an SMTP port;
 * elsewhere detection settles it with EHLO (see `parseEhlo`).
 */
export function parse (reply: Buffer, port?: number): ProbeMatch | null {
  const g = greeting(reply)
  if (!g) {
    const first = lines(reply)[0]
    if (first && /^(421|554)[ -].*\b(E?SMTP|mail)/i.test(first)) return { service: 'smtp', extraInfo: first.slice(4) }
    return null
  }
  const text = g.join(' ')
  const result: ProbeMatch = { service: 'smtp' }
  Object.assign(result, matchProduct(text, PRODUCTS))
  if (!result.product && !/\bE?SMTP\b/i.test(text) && !(port && ports.includes(port))) return null
  const host = /^(\S+\.\S+)\s/.exec(text)
  const tag = distroTag(text)
  if (tag) result.distro = tag.distro
  result.extraInfo = joinInfo(host ? `host ${host[1]}` : undefined)
  return clean(result)
}

/** True when an EHLO answer is SMTP's 250 reply. */
export function parseEhlo (reply: Buffer): boolean {
  return lines(reply).some((l) => /^250[ -]/.test(l))
}

const lastLineDone = (r: Buffer): boolean => /^\d{3} [^\n]*\n/m.test(r.toString('latin1'))

export const probe: ProbeDescriptor = {
  name: 'smtp',
  ports,
  tlsPorts,
  serverFirst: true,
  recognise: parse,
  // A bare `220` greeting is FTP's or SMTP's: an SMTP server answers EHLO with 250, FTP with 500.
  clarify: {
    applies: (banner) => /^220[ -]/.test(banner.toString('latin1')),
    send: ehlo,
    done: complete,
    decide: (banner, answer) => parseEhlo(answer)
      ? parse(banner, ports[0])
      : /^5\d\d/.test(answer.toString('latin1')) ? parseFtp(banner, ftpPorts[0]) : null
  },
  starttls: {
    ask: { send: ehlo, done: lastLineDone, offered: /^250[ -]STARTTLS\b/mi },
    command: Buffer.from('STARTTLS\r\n'),
    done: lastLineDone,
    ok: /^220 /
  },
  farewell: Buffer.from('QUIT\r\n'),
  products: PRODUCTS.map(([, product]) => product)
}
