// DNS over TCP (RFC 1035 section 4.2.2: each message after a two-byte length). Servers name
// themselves in a CHAOS-class TXT record: `version.bind` (BIND, dnsmasq, Unbound, Knot, PowerDNS,
// NSD) or `version.server`. A server that refuses or hides it is still a DNS server: the product
// is then reported only when the text names one, never guessed.

import { clean, distroTag, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [53, 5353, 5053]

/** DNS over TLS (RFC 7858) frames messages the same way inside the session. */
export const tlsPorts = [853]

const TYPE_TXT = 16
const CLASS_CH = 3
const RCODES: Record<number, string> = { 1: 'FORMERR', 2: 'SERVFAIL', 3: 'NXDOMAIN', 4: 'NOTIMP', 5: 'REFUSED' }

/** A CHAOS TXT query for `name`, framed for TCP. */
export function versionQuery (name = 'version.bind', id = 0x7653): Buffer {
  const labels = Buffer.concat([...name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'ascii')])), Buffer.from([0])])
  const msg = Buffer.alloc(12 + labels.length + 4)
  msg.writeUInt16BE(id, 0)
  msg.writeUInt16BE(0, 2) // standard query, no recursion wanted
  msg.writeUInt16BE(1, 4)
  labels.copy(msg, 12)
  msg.writeUInt16BE(TYPE_TXT, 12 + labels.length)
  msg.writeUInt16BE(CLASS_CH, 14 + labels.length)
  const len = Buffer.alloc(2)
  len.writeUInt16BE(msg.length)
  return Buffer.concat([len, msg])
}

export function complete (reply: Buffer): boolean {
  return reply.length >= 2 && reply.length >= 2 + reply.readUInt16BE(0)
}

/** Skip a (possibly compressed) domain name; the offset after it. Throws on bad input. */
function skipName (msg: Buffer, off: number): number {
  for (let hops = 0; hops < 128; hops++) {
    if (off >= msg.length) throw new RangeError('name runs past the message')
    const len = msg[off]
    if (len === 0) return off + 1
    if ((len & 0xc0) === 0xc0) return off + 2
    if ((len & 0xc0) !== 0) throw new RangeError('bad label')
    off += 1 + len
  }
  throw new RangeError('name too long')
}

export interface DnsAnswer {
  id: number
  rcode: number
  /** TXT strings of the answer section, joined per record. */
  txt: string[]
  authoritative: boolean
}

/** Parse one TCP-framed DNS response; null unless the bytes are one. */
export function parseMessage (reply: Buffer): DnsAnswer | null {
  if (!complete(reply)) return null
  const msg = reply.subarray(2, 2 + reply.readUInt16BE(0))
  if (msg.length < 12) return null
  const flags = msg.readUInt16BE(2)
  if ((flags & 0x8000) === 0) return null // not a response
  const qd = msg.readUInt16BE(4)
  const an = msg.readUInt16BE(6)
  if (qd > 4 || an > 64) return null
  const txt: string[] = []
  try {
    let off = 12
    for (let i = 0; i < qd; i++) off = skipName(msg, off) + 4
    for (let i = 0; i < an; i++) {
      off = skipName(msg, off)
      if (off + 10 > msg.length) throw new RangeError('truncated record')
      const type = msg.readUInt16BE(off)
      const rdlen = msg.readUInt16BE(off + 8)
      const rdata = msg.subarray(off + 10, off + 10 + rdlen)
      if (rdata.length !== rdlen) throw new RangeError('truncated rdata')
      if (type === TYPE_TXT) {
        const parts: string[] = []
        for (let p = 0; p < rdata.length;) {
          const n = rdata[p]
          parts.push(rdata.subarray(p + 1, p + 1 + n).toString('latin1'))
          p += 1 + n
        }
        txt.push(parts.join(''))
      }
      off += 10 + rdlen
    }
  } catch {
    return null
  }
  return { id: msg.readUInt16BE(0), rcode: flags & 0x0f, txt, authoritative: (flags & 0x0400) !== 0 }
}

/** Products by their version text; group 1 is the upstream version. */
export const PRODUCTS: Array<[RegExp, string]> = [
  [/^dnsmasq-(\d[\w.]*)/i, 'dnsmasq'],
  [/^unbound (\d[\w.]*)/i, 'Unbound'],
  [/^Knot DNS (\d[\w.]*)/i, 'Knot DNS'],
  [/^Knot Resolver (\d[\w.]*)/i, 'Knot Resolver'],
  [/^PowerDNS Authoritative Server (\d[\w.]*)/i, 'PowerDNS Authoritative Server'],
  [/^PowerDNS Recursor (\d[\w.]*)/i, 'PowerDNS Recursor'],
  [/^NSD (\d[\w.]*)/, 'NSD'],
  [/^Microsoft DNS (\d[\w.]*)/, 'Microsoft DNS'],
  // BIND answers its bare version, with the distribution's packaging after it: `9.18.49-1~deb12u3-Debian`.
  [/^(9\.\d+\.\d+(?:-[SP]\d+)?)(?:$|[-+~ ])/, 'ISC BIND']
]

/** What the version text says: a known product and version, or the text as extra information. */
export function identify (text: string): ProbeMatch {
  for (const [re, product] of PRODUCTS) {
    const m = re.exec(text)
    if (!m) continue
    const rest = text.slice(m[0].length).replace(/^[-+~ ]/, '')
    const tag = rest ? distroTag(rest) : undefined
    return clean({ service: 'dns', product, version: m[1], distro: tag?.distro, extraInfo: rest ? `packaging ${rest}`.slice(0, 120) : undefined })
  }
  return { service: 'dns', extraInfo: `version.bind "${text.slice(0, 100)}"` }
}

/** Parse the answer to a version query. */
export function parse (reply: Buffer): ProbeMatch | null {
  const m = parseMessage(reply)
  if (!m) return null
  const text = m.txt.find((t) => t.trim().length > 0)
  if (m.rcode === 0 && text) return identify(text.trim())
  return clean({ service: 'dns', extraInfo: joinInfo(m.rcode ? `version query ${RCODES[m.rcode] ?? `rcode ${m.rcode}`}` : 'version hidden') })
}

export const probe: ProbeDescriptor = {
  name: 'dns',
  ports,
  tlsPorts,
  fallback: 'full',
  // `version.bind` first; servers that answer nothing useful to it are asked `version.server`.
  converse: async (io, s) => {
    io.write(versionQuery('version.bind', 0x7653))
    const reply = await io.read(complete, s.wait())
    const first = parse(reply)
    if (!first || first.product || io.closed) return { match: first, reply }
    io.write(versionQuery('version.server', 0x7654))
    const more = await io.read(complete, s.wait())
    const second = parse(more)
    return second?.product ? { match: second, reply: more } : { match: first, reply }
  },
  products: PRODUCTS.map(([, p]) => p)
}
