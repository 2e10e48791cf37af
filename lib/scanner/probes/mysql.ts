// MySQL and MariaDB speak first with the initial handshake packet: a 3-byte little-endian
// payload length, a sequence number, then protocol version 10 and the NUL-terminated server
// version. A refused client gets an error packet (0xff, code, message) instead.

import { clean, distroTag, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [3306, 3307, 33060]

/** True once the first packet has fully arrived, by its length header. */
export function complete (reply: Buffer): boolean {
  return reply.length >= 4 && reply.length >= 4 + reply.readUIntLE(0, 3)
}

/**
 * Split a server version string into product, upstream version and packaging. MariaDB before
 * 11 prefixes `5.5.5-` so that old clients that parse the major version keep working.
 */
export function parseServerVersion (raw: string): ProbeMatch {
  let s = raw
  let product = 'MySQL'
  if (/mariadb/i.test(s)) {
    product = 'MariaDB'
    s = s.replace(/^5\.5\.5-/, '')
  } else if (/percona/i.test(s)) {
    product = 'Percona Server'
  }
  // A release letter belongs to the version (`5.0.51a`, `4.1.10a`); what follows a `-` is the
  // build or the distribution's revision (`5.0.51a-3ubuntu5`: Ubuntu's revision 3ubuntu5).
  const m = /^(\d+\.\d+(?:\.\d+)?(?:[a-z](?![a-z]))?)(.*)$/.exec(s)
  if (!m) return clean({ service: 'mysql', product, extraInfo: joinInfo(raw) })
  const suffix = m[2].replace(/^-MariaDB/i, '')
  const tag = distroTag(suffix)
  const packaging = suffix.replace(/^[-]/, '')
  return clean({
    service: 'mysql',
    product,
    version: m[1],
    distro: tag?.distro,
    extraInfo: joinInfo(packaging && packaging !== 'log' ? packaging : undefined,
      /-log$/.test(suffix) ? 'binary log on' : undefined)
  })
}

export function parse (reply: Buffer): ProbeMatch | null {
  if (reply.length < 5) return null
  const len = reply.readUIntLE(0, 3)
  if (len < 1 || len > 0xffff || reply[3] !== 0) return null
  const body = reply.subarray(4, 4 + len)
  if (body[0] === 0x0a) {
    const nul = body.indexOf(0, 1)
    if (nul < 2) return null
    const raw = body.subarray(1, nul).toString('latin1')
    if (!/^\d+\.\d+/.test(raw)) return null
    const result = parseServerVersion(raw)
    if (body.length >= nul + 5) {
      const plugin = /(mysql_native_password|caching_sha2_password|sha256_password|ed25519|client_ed25519|mysql_clear_password)\0?$/.exec(body.toString('latin1'))
      if (plugin) result.extraInfo = joinInfo(result.extraInfo, `auth ${plugin[1]}`)
    }
    return result
  }
  if (body[0] === 0xff && body.length >= 3) {
    const code = body.readUInt16LE(1)
    let msg = body.subarray(3).toString('latin1')
    if (msg.startsWith('#')) msg = msg.slice(6)
    if (code < 1000 || code > 5000) return null
    // The refusal text names the product: "… is not allowed to connect to this MariaDB server".
    const product = /MariaDB/i.test(msg) ? 'MariaDB' : /MySQL/i.test(msg) ? 'MySQL' : undefined
    if (!product) return null
    return clean({ service: 'mysql', product, extraInfo: `refused: ${msg.slice(0, 120)}` })
  }
  return null
}

export const probe: ProbeDescriptor = {
  name: 'mysql',
  ports,
  serverFirst: true,
  // The greeting is a length-framed packet whose protocol-version byte (10) is a newline.
  banner: { claims: (r) => r.length >= 5 && r[3] === 0 && (r[4] === 0x0a || r[4] === 0xff), complete },
  recognise: (reply) => parse(reply),
  products: ['MySQL', 'MariaDB', 'Percona Server']
}
