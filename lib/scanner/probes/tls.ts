// TLS record layer: a ClientHello that any TLS 1.0–1.3 server answers, and a parser that
// recognises the server's first record (ServerHello or alert). Detection uses it to notice TLS
// in replies to plain-text probes; unwrapping itself is done by node:tls (see ../tls.ts).

import type { ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

/** TLS ports whose inner protocol has no probe yet (SIP over TLS); the others are declared by
 * the protocol that runs inside (see each probe's `tlsPorts`). */
export const ports = [5061]

const VERSIONS: Record<number, string> = { 0x0300: 'SSLv3', 0x0301: 'TLSv1', 0x0302: 'TLSv1.1', 0x0303: 'TLSv1.2', 0x0304: 'TLSv1.3' }

const ALERTS: Record<number, string> = {
  0: 'close_notify', 10: 'unexpected_message', 20: 'bad_record_mac', 22: 'record_overflow',
  40: 'handshake_failure', 42: 'bad_certificate', 47: 'illegal_parameter', 50: 'decode_error',
  70: 'protocol_version', 71: 'insufficient_security', 80: 'internal_error', 86: 'inappropriate_fallback',
  109: 'missing_extension', 112: 'unrecognized_name', 116: 'certificate_required', 120: 'no_application_protocol'
}

function u16 (n: number): Buffer { return Buffer.from([n >> 8, n & 0xff]) }
function vec16 (b: Buffer): Buffer { return Buffer.concat([u16(b.length), b]) }

/** ClientHello offering TLS 1.2 ciphers (ECDHE/RSA with AES-GCM/CBC), with SNI when given. */
export function clientHello (servername?: string): Buffer {
  const ciphers = [0xc02f, 0xc030, 0xc02b, 0xc02c, 0xc013, 0xc014, 0xc009, 0xc00a, 0x009c, 0x009d, 0x002f, 0x0035, 0x000a, 0x00ff]
  const exts: Buffer[] = []
  if (servername) {
    const name = Buffer.from(servername, 'ascii')
    exts.push(u16(0x0000), vec16(vec16(Buffer.concat([Buffer.from([0]), vec16(name)]))))
  }
  exts.push(u16(0x000a), vec16(vec16(Buffer.concat([u16(0x001d), u16(0x0017), u16(0x0018)]))))
  exts.push(u16(0x000b), vec16(Buffer.from([1, 0])))
  exts.push(u16(0x000d), vec16(vec16(Buffer.concat([0x0401, 0x0501, 0x0601, 0x0403, 0x0503, 0x0804, 0x0805, 0x0201].map(u16)))))
  const random = Buffer.alloc(32)
  for (let i = 0; i < 32; i++) random[i] = (i * 73 + 41) & 0xff
  const body = Buffer.concat([
    u16(0x0303), random, Buffer.from([0]),
    vec16(Buffer.concat(ciphers.map(u16))), Buffer.from([1, 0]),
    vec16(Buffer.concat(exts))
  ])
  const hs = Buffer.concat([Buffer.from([1, body.length >> 16, (body.length >> 8) & 0xff, body.length & 0xff]), body])
  return Buffer.concat([Buffer.from([0x16, 0x03, 0x01]), u16(hs.length), hs])
}

/** True for bytes that start a TLS record of a plausible type, version and length. */
export function looksLikeTls (reply: Buffer): boolean {
  return reply.length >= 5 && (reply[0] === 0x16 || reply[0] === 0x15) && reply[1] === 0x03 &&
    reply[2] <= 0x04 && reply.readUInt16BE(3) > 0 && reply.readUInt16BE(3) <= 16384 + 2048
}

export function complete (reply: Buffer): boolean {
  return reply.length >= 5 && reply.length >= 5 + reply.readUInt16BE(3)
}

/** Parse the server's first TLS record: ServerHello gives version and cipher, an alert its reason. */
export function parse (reply: Buffer): ProbeMatch | null {
  if (!looksLikeTls(reply)) return null
  const len = reply.readUInt16BE(3)
  const rec = reply.subarray(5, 5 + len)
  if (reply[0] === 0x15) {
    if (rec.length < 2 || (rec[0] !== 1 && rec[0] !== 2)) return null
    return { service: 'tls', extraInfo: `alert ${ALERTS[rec[1]] ?? rec[1]}` }
  }
  if (rec.length < 4 || rec[0] !== 2) return null
  if (rec.length < 4 + 2 + 32 + 1) return { service: 'tls', extraInfo: 'truncated ServerHello' }
  let version = rec.readUInt16BE(4)
  const sidLen = rec[38]
  const cipherOff = 39 + sidLen
  const cipher = rec.length >= cipherOff + 2 ? rec.readUInt16BE(cipherOff) : undefined
  // TLS 1.3 keeps 1.2 in the legacy field and names itself in the supported_versions extension.
  const extOff = cipherOff + 3
  if (rec.length >= extOff + 2) {
    const end = Math.min(rec.length, extOff + 2 + rec.readUInt16BE(extOff))
    for (let off = extOff + 2; off + 4 <= end;) {
      const type = rec.readUInt16BE(off)
      const elen = rec.readUInt16BE(off + 2)
      if (type === 0x002b && elen === 2 && off + 6 <= end) version = rec.readUInt16BE(off + 4)
      off += 4 + elen
    }
  }
  const info = [VERSIONS[version] ?? `version 0x${version.toString(16)}`]
  if (cipher !== undefined) info.push(`cipher 0x${cipher.toString(16).padStart(4, '0')}`)
  return { service: 'tls', extraInfo: info.join('; ') }
}

export const probe: ProbeDescriptor = {
  name: 'tls',
  ports,
  handshake: true,
  fallback: 'light',
  recognise: (reply) => parse(reply),
  products: []
}
