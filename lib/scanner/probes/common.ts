// Shared shapes and helpers for the per-protocol probe modules. Parsers are pure functions on
// bytes so each one is tested on captured replies without a socket.

import type { ServiceInfo } from '../../domain/services'

/** What one parser can say about a reply: a ServiceInfo without the fields detection adds later. */
export type ProbeMatch = Omit<ServiceInfo, 'cpe' | 'banner' | 'tls'>

/**
 * A conversation over one connection, handed to protocols that need more than one exchange
 * (MQTT subscribe after CONNACK, MongoDB buildInfo after hello). The caller owns the socket.
 */
export interface ProbeIO {
  /** The peer closed (or the connection was handed over): nothing more will arrive. */
  readonly closed: boolean
  write (data: Buffer): void
  /**
   * Bytes received since the previous read, once `done` says they are enough, the peer closes,
   * the buffer cap is reached or `timeoutMs` passes (then whatever arrived, possibly empty).
   * With `idleMs`, a quiet gap that long after some bytes also ends the read.
   */
  read (done: (reply: Buffer) => boolean, timeoutMs: number, idleMs?: number): Promise<Buffer>
  close (): void
}

/** Largest reply any parser looks at; readers stop buffering beyond it. */
export const MAX_REPLY_BYTES = 64 * 1024

/** Longest banner kept in a result. */
export const MAX_BANNER_CHARS = 512

/**
 * Make a reply safe to store and print: control and non-ASCII bytes become `\xNN`, CR/LF
 * become `\r`/`\n`, and the result is cut to `MAX_BANNER_CHARS`.
 */
export function printable (reply: Buffer, max = MAX_BANNER_CHARS): string {
  let out = ''
  for (const byte of reply) {
    if (out.length >= max) break
    if (byte === 0x0d) out += '\\r'
    else if (byte === 0x0a) out += '\\n'
    else if (byte === 0x5c) out += '\\\\'
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte)
    else out += '\\x' + byte.toString(16).padStart(2, '0')
  }
  return out.length > max ? out.slice(0, max) : out
}

/** The first line of a text reply (without its CR/LF), or null when no line is complete yet. */
export function firstLine (reply: Buffer, maxLen = 4096): string | null {
  const nl = reply.indexOf(0x0a)
  if (nl < 0) return null
  if (nl > maxLen) return null
  return reply.subarray(0, nl).toString('latin1').replace(/\r$/, '')
}

/** Complete lines of a text reply; a trailing partial line is left out. */
export function lines (reply: Buffer): string[] {
  const text = reply.toString('latin1')
  const end = text.lastIndexOf('\n')
  if (end < 0) return []
  return text.slice(0, end).split('\n').map((l) => l.replace(/\r$/, ''))
}

export interface DistroTag {
  /** Short tag: `deb12u3`, `Ubuntu`, `Debian`, `el8`, … */
  distro: string
  /** The packaging revision as written, e.g. `0+deb12u1` or `3ubuntu0.10`. */
  revision?: string
}

/**
 * Find a distribution packaging tag in a version suffix or banner comment. Debian security
 * updates are named by their `debNNuM` tag because that is what backport advisories key on;
 * Ubuntu and the RPM families are named by distribution.
 */
export function distroTag (text: string): DistroTag | undefined {
  const deb = /(?:^|[-+~ ])((?:[\w.]*?[-+~])?(deb\d+u\d+))\b/i.exec(text)
  if (deb) return { distro: deb[2].toLowerCase(), revision: deb[1] }
  const ubuntuRev = /(\d[\w.+~]*ubuntu[\w.+~]*)/i.exec(text)
  if (ubuntuRev) return { distro: 'Ubuntu', revision: ubuntuRev[1] }
  if (/ubuntu/i.test(text)) return { distro: 'Ubuntu' }
  const el = /\.(el\d+(?:_\d+)?)\b/.exec(text)
  if (el) return { distro: el[1] }
  const debian = /\bdebian\b/i.exec(text)
  if (debian) {
    const rev = /\b(\d[\w.+~]*\+deb\w*)\b/i.exec(text)
    return rev ? { distro: 'Debian', revision: rev[1] } : { distro: 'Debian' }
  }
  for (const [re, name] of [[/\bRed Hat\b|\bRHEL\b/i, 'Red Hat'], [/\bCentOS\b/i, 'CentOS'],
    [/\bFedora\b/i, 'Fedora'], [/\bAlpine\b/i, 'Alpine'], [/\bFreeBSD\b/i, 'FreeBSD'],
    [/\bRaspbian\b/i, 'Raspbian'], [/\bSUSE\b/i, 'SUSE']] as const) {
    if (re.test(text)) return { distro: name }
  }
  return undefined
}

/** Join the non-empty parts of an extra-info text. */
export function joinInfo (...parts: Array<string | undefined | false>): string | undefined {
  const kept = parts.filter((p): p is string => typeof p === 'string' && p.length > 0)
  return kept.length ? kept.join('; ') : undefined
}

/** Drop undefined fields so results compare cleanly. */
export function clean<T extends object> (obj: T): T {
  for (const k of Object.keys(obj) as Array<keyof T>) if (obj[k] === undefined) delete obj[k]
  return obj
}

/** A banner signature: the pattern, and the product it names (group 1, when present, is the version). */
export type ProductSignature = [RegExp, string]

/** The first signature that matches `text`: its product and, when captured, its version. */
export function matchProduct (text: string, signatures: ProductSignature[]): { product: string, version?: string } | undefined {
  for (const [re, product] of signatures) {
    const m = re.exec(text)
    if (m) return m[1] ? { product, version: m[1] } : { product }
  }
  return undefined
}
