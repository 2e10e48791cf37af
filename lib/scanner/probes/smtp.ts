// SMTP speaks first with a 220 greeting (RFC 5321): `220 host ESMTP product…`.

import { greeting } from './ftp'
import { clean, distroTag, joinInfo, lines, matchProduct, type ProbeMatch, type ProductSignature } from './common'

export const ports = [25, 465, 587, 2525]

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
