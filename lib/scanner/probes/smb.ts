// SMB2/3 over direct TCP (MS-SMB2, port 445): a NEGOTIATE offering every dialect from 2.0.2 to
// 3.1.1 shows the dialect the server picks, whether it requires signing, and its GUID; an
// anonymous SESSION_SETUP carrying an NTLMSSP NEGOTIATE then draws the NTLM CHALLENGE, whose target
// information names the server and its domain and whose version field carries the OS version the
// server claims. SMB2 never names the server software, so no version is reported. The product is
// named only where the wire shows it: Samba fills the NTLM version field with Windows 6.1 and build
// number 0, which no Windows release sends (every Windows since Vista sends its real build).

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor, ProbeOutcome, ProbeSession } from './descriptor'
import * as smb1 from './smb1'

export const ports = [445]

const SMB2_MAGIC = Buffer.from([0xfe, 0x53, 0x4d, 0x42])
const SMB1_MAGIC = Buffer.from([0xff, 0x53, 0x4d, 0x42])
const DIALECTS = [0x0202, 0x0210, 0x0300, 0x0302, 0x0311]
const STATUS_MORE_PROCESSING_REQUIRED = 0xc0000016

/** A 64-byte SMB2 header for a request. */
function header (command: number, messageId: number): Buffer {
  const h = Buffer.alloc(64)
  SMB2_MAGIC.copy(h, 0)
  h.writeUInt16LE(64, 4)
  h.writeUInt16LE(command, 12)
  h.writeUInt16LE(1, 14) // one credit asked for
  h.writeUInt32LE(messageId, 24)
  return h
}

/** Direct TCP transport: a zero byte and a 24-bit length before each message. */
function frame (msg: Buffer): Buffer {
  const len = Buffer.alloc(4)
  len.writeUInt32BE(msg.length)
  return Buffer.concat([len, msg])
}

const pad8 = (b: Buffer): Buffer => b.length % 8 ? Buffer.concat([b, Buffer.alloc(8 - (b.length % 8))]) : b

function context (type: number, data: Buffer): Buffer {
  const h = Buffer.alloc(8)
  h.writeUInt16LE(type, 0)
  h.writeUInt16LE(data.length, 2)
  return Buffer.concat([h, data])
}

/** NEGOTIATE with the 3.1.1 contexts a server requires to pick 3.1.1 (preauth integrity, ciphers). */
export function negotiateRequest (): Buffer {
  const body = Buffer.alloc(36)
  body.writeUInt16LE(36, 0)
  body.writeUInt16LE(DIALECTS.length, 2)
  body.writeUInt16LE(1, 4) // signing enabled, not required
  Buffer.from('vulnscan-smb2-ng').copy(body, 12) // client GUID: any 16 bytes
  const dialects = Buffer.alloc(DIALECTS.length * 2)
  DIALECTS.forEach((d, i) => dialects.writeUInt16LE(d, i * 2))
  const fixed = pad8(Buffer.concat([header(0, 0), body, dialects]))
  const preauth = Buffer.alloc(38)
  preauth.writeUInt16LE(1, 0) // one hash algorithm
  preauth.writeUInt16LE(32, 2) // salt length
  preauth.writeUInt16LE(1, 4) // SHA-512
  Buffer.from('vulnscan preauth integrity salt!').copy(preauth, 6)
  const ciphers = Buffer.from([2, 0, 2, 0, 1, 0]) // AES-128-GCM, AES-128-CCM
  const contexts = Buffer.concat([pad8(context(1, preauth)), context(2, ciphers)])
  fixed.writeUInt32LE(fixed.length, 64 + 28)
  fixed.writeUInt16LE(2, 64 + 32)
  return frame(Buffer.concat([fixed, contexts]))
}

/** A DER length. */
function derLen (n: number): Buffer {
  if (n < 0x80) return Buffer.from([n])
  if (n < 0x100) return Buffer.from([0x81, n])
  return Buffer.from([0x82, n >> 8, n & 0xff])
}
const der = (tag: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), derLen(body.length), body])

const SPNEGO_OID = Buffer.from('06062b0601050502', 'hex')
const NTLMSSP_OID = Buffer.from('060a2b0601040182370202' + '0a', 'hex')

/** NTLMSSP NEGOTIATE asking for the target information (MS-NLMP 2.2.1.1), wrapped in a SPNEGO NegTokenInit. */
export function ntlmNegotiateToken (): Buffer {
  const ntlm = Buffer.alloc(40)
  ntlm.write('NTLMSSP\0', 0, 'latin1')
  ntlm.writeUInt32LE(1, 8)
  // UNICODE | REQUEST_TARGET | NTLM | ALWAYS_SIGN | EXTENDED_SESSIONSECURITY | TARGET_INFO | VERSION | 128 | KEY_EXCH | 56
  ntlm.writeUInt32LE(0xe2888205 >>> 0, 12)
  ntlm.writeUInt32LE(0, 16)
  Buffer.from([6, 1, 0xb1, 0x1d, 0, 0, 0, 15]).copy(ntlm, 32)
  return der(0x60, Buffer.concat([SPNEGO_OID, der(0xa0, der(0x30, Buffer.concat([
    der(0xa0, der(0x30, NTLMSSP_OID)),
    der(0xa2, der(0x04, ntlm))
  ])))]))
}

/** SMB2 SESSION_SETUP carrying the NTLMSSP NEGOTIATE. */
export function sessionSetupRequest (): Buffer {
  const token = ntlmNegotiateToken()
  const body = Buffer.alloc(24)
  body.writeUInt16LE(25, 0)
  body[3] = 1 // signing enabled
  body.writeUInt16LE(64 + 24, 12)
  body.writeUInt16LE(token.length, 14)
  return frame(Buffer.concat([header(1, 1), body, token]))
}

/** One whole framed message: NetBIOS session service length, then at least a full SMB header. */
export function complete (reply: Buffer): boolean {
  return reply.length >= 4 && reply.length >= 4 + (reply.readUInt32BE(0) & 0xffffff)
}

export interface Negotiated {
  dialect: string
  signingRequired: boolean
  serverGuid: string
  /** SMB1 only: the server answered an SMB2 negotiate in the old protocol. */
  smb1?: boolean
}

/** The NEGOTIATE response's dialect, signing mode and GUID; null unless the bytes are one. */
export function parseNegotiate (reply: Buffer): Negotiated | null {
  if (!complete(reply)) return null
  const msg = reply.subarray(4, 4 + (reply.readUInt32BE(0) & 0xffffff))
  if (msg.subarray(0, 4).equals(SMB1_MAGIC) && msg.length >= 9 && msg[4] === 0x72) return { dialect: 'NT LM 0.12', signingRequired: false, serverGuid: '', smb1: true }
  if (!msg.subarray(0, 4).equals(SMB2_MAGIC) || msg.length < 64 + 64 || msg.readUInt16LE(12) !== 0) return null
  if (msg.readUInt32LE(8) !== 0) return null
  const body = msg.subarray(64)
  if (body.readUInt16LE(0) !== 65) return null
  const d = body.readUInt16LE(4)
  const dialect = d === 0x02ff ? '2.???' : `${d >> 8}.${(d >> 4) & 0xf}.${d & 0xf}`
  // A GUID's first three fields are little-endian; copies are reversed, never the reply itself.
  const g = Buffer.from(body.subarray(8, 24))
  const guid = [Buffer.from(g.subarray(0, 4)).reverse(), Buffer.from(g.subarray(4, 6)).reverse(), Buffer.from(g.subarray(6, 8)).reverse(),
    g.subarray(8, 10), g.subarray(10, 16)].map((p) => p.toString('hex')).join('-')
  return { dialect, signingRequired: (body.readUInt16LE(2) & 2) !== 0, serverGuid: guid }
}

export interface NtlmChallenge {
  /** The OS version the server claims: major.minor and build. */
  os?: { major: number, minor: number, build: number }
  nbComputer?: string
  nbDomain?: string
  dnsComputer?: string
  dnsDomain?: string
}

/** The NTLM CHALLENGE inside a SESSION_SETUP response (found by its signature, not by walking SPNEGO). */
export function parseChallenge (reply: Buffer): NtlmChallenge | null {
  if (!complete(reply)) return null
  const msg = reply.subarray(4, 4 + (reply.readUInt32BE(0) & 0xffffff))
  if (!msg.subarray(0, 4).equals(SMB2_MAGIC) || msg.length < 64 || msg.readUInt16LE(12) !== 1) return null
  if (msg.readUInt32LE(8) !== STATUS_MORE_PROCESSING_REQUIRED) return null
  return parseNtlmChallenge(msg.subarray(64))
}

/** The NTLM CHALLENGE found by its signature in any bytes (an SMB2 reply, an SMB1 security blob). */
export function parseNtlmChallenge (bytes: Buffer): NtlmChallenge | null {
  const at = bytes.indexOf('NTLMSSP\0', 0, 'latin1')
  if (at < 0) return null
  const c = bytes.subarray(at)
  if (c.length < 56 || c.readUInt32LE(8) !== 2) return null
  const out: NtlmChallenge = {}
  const flags = c.readUInt32LE(20)
  if (flags & 0x02000000) out.os = { major: c[48], minor: c[49], build: c.readUInt16LE(50) }
  const infoLen = c.readUInt16LE(40)
  const infoOff = c.readUInt32LE(44)
  const info = c.subarray(infoOff, infoOff + infoLen)
  const names: Record<number, keyof NtlmChallenge> = { 1: 'nbComputer', 2: 'nbDomain', 3: 'dnsComputer', 4: 'dnsDomain' }
  for (let off = 0; off + 4 <= info.length;) {
    const id = info.readUInt16LE(off)
    const len = info.readUInt16LE(off + 2)
    if (id === 0 || off + 4 + len > info.length) break
    const key = names[id]
    if (key && len > 0) (out as Record<string, unknown>)[key] = info.subarray(off + 4, off + 4 + len).toString('utf16le').slice(0, 64)
    off += 4 + len
  }
  return clean(out)
}

/** What the two replies show together. */
export function describe (n: Negotiated, ch: NtlmChallenge | null): ProbeMatch {
  if (n.smb1) return { service: 'smb', extraInfo: 'SMB1 only' }
  const samba = ch?.os !== undefined && ch.os.major === 6 && ch.os.minor === 1 && ch.os.build === 0
  return clean({
    service: 'smb',
    product: samba ? 'Samba' : undefined,
    extraInfo: joinInfo(`dialect ${n.dialect}`, `signing ${n.signingRequired ? 'required' : 'enabled, not required'}`,
      ch?.nbComputer && `name ${ch.nbComputer}`, ch?.nbDomain && `domain ${ch.nbDomain}`,
      ch?.dnsComputer && ch.dnsComputer !== ch.nbComputer?.toLowerCase() && `dns ${ch.dnsComputer}`,
      ch?.os && `NTLM OS version ${ch.os.major}.${ch.os.minor} build ${ch.os.build}`)
  })
}

/** NEGOTIATE `NT LM 0.12` and an anonymous SESSION_SETUP_ANDX on a second connection; null when the server speaks no SMB1. */
export async function smb1Conversation (s: ProbeSession): Promise<ProbeOutcome | null> {
  const io = await s.open()
  if (io === null) return null
  io.write(smb1.negotiateRequest())
  const reply = await io.read(complete, s.wait())
  const n = smb1.parseNegotiate(reply)
  if (n === null) return null
  io.write(smb1.sessionSetupRequest(n.extendedSecurity ? ntlmNegotiateToken() : null))
  const setup = smb1.parseSessionSetup(await io.read(complete, s.wait()))
  const ch = setup?.blob !== undefined ? parseNtlmChallenge(setup.blob) : null
  const os = ch?.os !== undefined ? `NTLM OS version ${ch.os.major}.${ch.os.minor} build ${ch.os.build}` : undefined
  return { match: smb1.describe1(n, setup, os), reply }
}

export const probe: ProbeDescriptor = {
  name: 'smb',
  ports,
  fallback: 'full',
  converse: async (io, s) => {
    io.write(negotiateRequest())
    const reply = await io.read(complete, s.wait())
    const n = parseNegotiate(reply)
    // A server of SMB1 only hangs up on an SMB2 NEGOTIATE (Samba with `server max protocol = NT1`) or answers it in SMB1.
    if (n?.smb1 === true || (n === null && reply.length === 0 && io.closed)) {
      const old = await smb1Conversation(s)
      if (old !== null) return old
      return { match: n !== null ? describe(n, null) : null, reply }
    }
    if (!n) return { match: null, reply }
    if (io.closed) return { match: describe(n, null), reply }
    io.write(sessionSetupRequest())
    const more = await io.read(complete, s.wait())
    return { match: describe(n, parseChallenge(more)), reply }
  },
  products: ['Samba']
}
