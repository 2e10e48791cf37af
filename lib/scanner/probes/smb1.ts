// SMB1 (MS-CIFS, the `NT LM 0.12` dialect) over direct TCP, for servers that speak nothing newer:
// Samba 3.x, and Samba 4.x configured with `server max protocol = NT1`. A NEGOTIATE offering that
// one dialect, then an anonymous SESSION_SETUP_ANDX: with extended security its blob carries an
// NTLMSSP NEGOTIATE and the answer the NTLM CHALLENGE; without, a null session with empty
// passwords. Either answer ends with the server's NativeOS and NativeLanMan strings, where Samba
// names itself and its version (`Samba 3.0.20-Debian`, `Samba 4.17.12-Debian`).

import { clean, distroTag, joinInfo, type ProbeMatch } from './common'

const SMB1_MAGIC = Buffer.from([0xff, 0x53, 0x4d, 0x42])
const NEGOTIATE = 0x72
const SESSION_SETUP_ANDX = 0x73
const FLAGS2 = 0x0001 | 0x0002 | 0x0800 | 0x4000 | 0x8000 // long names, EAs, extended security, NT status, Unicode
const CAP_UNICODE = 0x04
const CAP_NT_STATUS = 0x40
const CAP_EXTENDED_SECURITY = 0x80000000

/** A 32-byte SMB1 header for a request. */
function header (command: number, mid: number, flags2 = FLAGS2): Buffer {
  const h = Buffer.alloc(32)
  SMB1_MAGIC.copy(h, 0)
  h[4] = command
  h[9] = 0x18 // case-insensitive, canonical paths
  h.writeUInt16LE(flags2, 10)
  h.writeUInt16LE(0xfeff, 26) // process id
  h.writeUInt16LE(mid, 30)
  return h
}

function frame (msg: Buffer): Buffer {
  const len = Buffer.alloc(4)
  len.writeUInt32BE(msg.length)
  return Buffer.concat([len, msg])
}

/** NEGOTIATE offering `NT LM 0.12` only. */
export function negotiateRequest (): Buffer {
  const dialects = Buffer.from('\x02NT LM 0.12\0', 'latin1')
  const counts = Buffer.alloc(3)
  counts.writeUInt16LE(dialects.length, 1)
  return frame(Buffer.concat([header(NEGOTIATE, 1), counts, dialects]))
}

export interface Smb1Negotiated {
  extendedSecurity: boolean
  signingRequired: boolean
  /** Unicode strings (the server's FLAGS2 says so). */
  unicode: boolean
  /** Without extended security the answer names the domain and the server. */
  domain?: string
  server?: string
}

/** The SMB1 message of a framed reply (header checked), or null. */
function message (reply: Buffer, command: number): Buffer | null {
  if (reply.length < 4 + 35) return null
  const msg = reply.subarray(4, 4 + (reply.readUInt32BE(0) & 0xffffff))
  if (msg.length < 35 || !msg.subarray(0, 4).equals(SMB1_MAGIC) || msg[4] !== command) return null
  return msg
}

/** A NUL-terminated string at `off` (UTF-16LE when `unicode`), and where the next one starts. */
function str (b: Buffer, off: number, unicode: boolean): [string, number] {
  if (unicode) {
    let end = off
    while (end + 1 < b.length && (b[end] !== 0 || b[end + 1] !== 0)) end += 2
    return [b.subarray(off, Math.min(end, b.length)).toString('utf16le'), end + 2]
  }
  const end = b.indexOf(0, off)
  const stop = end < 0 ? b.length : end
  return [b.subarray(off, stop).toString('latin1'), stop + 1]
}

/** The NEGOTIATE response, when the server chose `NT LM 0.12`; null otherwise. */
export function parseNegotiate (reply: Buffer): Smb1Negotiated | null {
  const msg = message(reply, NEGOTIATE)
  if (msg === null || msg.readUInt32LE(5) !== 0 || msg[32] !== 17 || msg.length < 32 + 1 + 34 + 2) return null
  const w = msg.subarray(33)
  if (w.readUInt16LE(0) !== 0) return null // dialect index 0xffff: none of ours
  const caps = w.readUInt32LE(19)
  const unicode = (msg.readUInt16LE(10) & 0x8000) !== 0
  const out: Smb1Negotiated = { extendedSecurity: (caps & CAP_EXTENDED_SECURITY) !== 0, signingRequired: (w[2] & 0x08) !== 0, unicode }
  if (!out.extendedSecurity) {
    const byteCount = msg.readUInt16LE(33 + 34)
    const bytes = msg.subarray(33 + 36, 33 + 36 + byteCount)
    const challengeLen = w[33]
    const [domain, next] = str(bytes, challengeLen, unicode)
    const [server] = str(bytes, next, unicode)
    if (domain) out.domain = domain.slice(0, 64)
    if (server) out.server = server.slice(0, 64)
  }
  return out
}

/**
 * SESSION_SETUP_ANDX: with a security blob (an NTLMSSP NEGOTIATE, extended security), or a null
 * session (empty account and passwords) when the server negotiated without.
 */
export function sessionSetupRequest (blob: Buffer | null): Buffer {
  const strings = Buffer.from('Unix\0vulnscan\0', 'utf16le') // NativeOS and NativeLanMan
  if (blob !== null) {
    const w = Buffer.alloc(1 + 24 + 2)
    w[0] = 12
    w[1] = 0xff // no AndX command
    w.writeUInt16LE(0xffff, 5) // max buffer
    w.writeUInt16LE(2, 7) // max mpx
    w.writeUInt16LE(blob.length, 15)
    w.writeUInt32LE((CAP_EXTENDED_SECURITY | CAP_UNICODE | CAP_NT_STATUS) >>> 0, 21)
    // The strings start at an even offset from the header: header (32) + words (25) + count (2) + blob.
    const pad = Buffer.alloc((32 + 27 + blob.length) % 2)
    w.writeUInt16LE(blob.length + pad.length + strings.length, 25)
    return frame(Buffer.concat([header(SESSION_SETUP_ANDX, 2), w, blob, pad, strings]))
  }
  const w = Buffer.alloc(1 + 26 + 2)
  w[0] = 13
  w[1] = 0xff
  w.writeUInt16LE(0xffff, 5)
  w.writeUInt16LE(2, 7)
  w.writeUInt32LE(CAP_UNICODE | CAP_NT_STATUS, 23)
  // No passwords; account and domain empty; the strings start at an even offset (32 + 29 is odd: one pad byte).
  const bytes = Buffer.concat([Buffer.alloc(1), Buffer.alloc(4), strings])
  w.writeUInt16LE(bytes.length, 27)
  return frame(Buffer.concat([header(SESSION_SETUP_ANDX, 2), w, bytes]))
}

export interface Smb1Session {
  nativeOs?: string
  nativeLanMan?: string
  primaryDomain?: string
  /** The security blob of an extended-security answer (holds the NTLM CHALLENGE). */
  blob?: Buffer
}

/** NativeOS, NativeLanMan and the domain of a SESSION_SETUP_ANDX response (any status but a malformed one). */
export function parseSessionSetup (reply: Buffer): Smb1Session | null {
  const msg = message(reply, SESSION_SETUP_ANDX)
  if (msg === null) return null
  const wc = msg[32]
  if (wc !== 3 && wc !== 4) return null
  const unicode = (msg.readUInt16LE(10) & 0x8000) !== 0
  const countAt = 33 + wc * 2
  if (msg.length < countAt + 2) return null
  const bytesAt = countAt + 2
  const bytes = msg.subarray(0, bytesAt + msg.readUInt16LE(countAt))
  let off = bytesAt
  const out: Smb1Session = {}
  if (wc === 4) {
    const blobLen = msg.readUInt16LE(33 + 6)
    out.blob = Buffer.from(bytes.subarray(off, off + blobLen))
    off += blobLen
  }
  if (unicode && off % 2 === 1) off++ // strings are aligned on an even offset from the header
  const fields: Array<keyof Omit<Smb1Session, 'blob'>> = ['nativeOs', 'nativeLanMan', 'primaryDomain']
  for (const f of fields) {
    if (off >= bytes.length) break
    const [s, next] = str(bytes, off, unicode)
    if (s) out[f] = s.slice(0, 80)
    off = next
  }
  return clean(out)
}

/** Product and version from NativeLanMan (`Samba 3.0.20-Debian`) or NativeOS (Samba 3 puts `Unix` there). */
export function describe1 (n: Smb1Negotiated, s: Smb1Session | null, ntlmOs?: string): ProbeMatch {
  const lanman = s?.nativeLanMan ?? ''
  const samba = /^Samba(?: (\d+\.\d+(?:\.\d+)?[a-z]?)(?:[-_ ](\S.*))?)?$/i.exec(lanman)
  const build = samba?.[2]
  return clean({
    service: 'smb',
    product: samba !== null ? 'Samba' : undefined,
    version: samba?.[1],
    distro: build !== undefined ? distroTag(build)?.distro : undefined,
    extraInfo: joinInfo('SMB1 (NT LM 0.12)', build, `signing ${n.signingRequired ? 'required' : 'enabled, not required'}`,
      s?.nativeOs && `NativeOS ${s.nativeOs}`, samba === null && lanman && `NativeLanMan ${lanman}`,
      (s?.primaryDomain ?? n.domain) && `domain ${s?.primaryDomain ?? n.domain}`, n.server && `name ${n.server}`, ntlmOs)
  })
}
