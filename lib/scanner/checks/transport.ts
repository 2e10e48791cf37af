// Transport checks: the certificate a TLS port presents (expired, not yet valid, self-signed, weak RSA key, not
// naming the host scanned), whether it still accepts TLS 1.0 or 1.1, what an SSH server's KEXINIT offers against
// Terrapin (CVE-2023-48795), and mail servers that take a clear-text password before STARTTLS. The certificate
// and protocol checks run both on ports inside TLS from the first byte and on clear-text ports whose protocol
// upgrades with STARTTLS (SMTP, IMAP, POP3, FTP's AUTH TLS: the dialogue its probe declares).

import net from 'node:net'
import tls from 'node:tls'
import type { X509Certificate } from 'node:crypto'
import { isSelfSigned, openTls, type TlsSession } from '../tls'
import { lines } from '../probes/common'
import type { StartTlsDialogue } from '../probes/descriptor'
import { REGISTRY } from '../probes/index'
import type { ServiceInfo } from '../../domain/services'
import { evidenceOf, withConn, type CheckResult, type CheckSession, type Exposure, type PortCheck } from './session'

/** RSA moduli shorter than this are weak (NIST SP 800-131A). */
export const MIN_RSA_BITS = 2048

/** What the certificate alone shows (validity, self-signature, key); the hostname is checked per name. */
export function certificateExposures (cert: X509Certificate, now = Date.now()): Exposure[] {
  const out: Exposure[] = []
  const subject = cert.subject.split('\n').filter(Boolean).join(', ')
  const notAfter = Date.parse(cert.validTo)
  const notBefore = Date.parse(cert.validFrom)
  if (Number.isFinite(notAfter) && notAfter < now) {
    out.push({ check: 'VULNSCAN-TLS-EXPIRED', evidence: evidenceOf(`certificate ${subject} expired ${new Date(notAfter).toISOString()}`) })
  }
  if (Number.isFinite(notBefore) && notBefore > now) {
    out.push({ check: 'VULNSCAN-TLS-NOT-YET-VALID', evidence: evidenceOf(`certificate ${subject} is valid from ${new Date(notBefore).toISOString()}`) })
  }
  if (isSelfSigned(cert)) {
    out.push({ check: 'VULNSCAN-TLS-SELF-SIGNED', evidence: evidenceOf(`certificate ${subject} is issued by itself and its signature verifies with its own key`) })
  }
  const key = cert.publicKey
  const bits = key.asymmetricKeyDetails?.modulusLength
  if ((key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'rsa-pss') && bits !== undefined && bits < MIN_RSA_BITS) {
    out.push({ check: 'VULNSCAN-TLS-WEAK-KEY', evidence: evidenceOf(`certificate ${subject} has a ${bits}-bit RSA key`) })
  }
  return out
}

/** The STARTTLS dialogue of a clear-text service's protocol, when its probe declares one. */
export function startTlsOf (svc: ServiceInfo): StartTlsDialogue | undefined {
  return REGISTRY.byName.get(svc.service)?.starttls
}

/** A greeting has arrived whole: its last line ends, and is not an `NNN-` continuation (SMTP, FTP). */
function greeted (r: Buffer): boolean {
  const text = r.toString('latin1')
  if (!text.endsWith('\n')) return false
  const last = text.trimEnd().split('\n').pop() ?? ''
  return !/^\d{3}-/.test(last)
}

/**
 * A clear-text connection taken through the protocol's STARTTLS dialogue: the raw socket, ready for the TLS
 * handshake; false when the server does not offer or refuses the upgrade; null when it could not tell.
 */
async function upgraded (s: CheckSession, d: StartTlsDialogue): Promise<net.Socket | false | null> {
  const c = await s.open()
  if (c === null) return null
  const greeting = await c.read(greeted, s.wait())
  if (greeting.length === 0) return null
  if (d.ask !== undefined) {
    c.write(d.ask.send)
    const caps = await c.read(d.ask.done, s.wait())
    if (caps.length === 0) return null
    if (!d.ask.offered.test(caps.toString('latin1'))) return false
  }
  c.write(d.command)
  const answer = await c.read(d.done, s.wait())
  if (answer.length === 0) return null
  if (!d.ok.test(answer.toString('latin1')) || c.closed) return false
  // The runner still closes the Conn at the end, which destroys this socket under whatever wraps it.
  return c.release()
}

/**
 * How a check reaches the port's TLS: directly when the port is inside TLS, through STARTTLS otherwise. Gives
 * the raw socket to hand to a TLS client (undefined: dial the port itself), false when no TLS is offered, null
 * when it could not tell.
 */
async function tlsTransport (s: CheckSession): Promise<net.Socket | undefined | false | null> {
  if (s.secure) return undefined
  const d = startTlsOf(s.service)
  return d === undefined ? false : await upgraded(s, d)
}

/** The session presented for `servername` (SNI): null when no handshake completed, false when no TLS is offered. */
async function peerSession (s: CheckSession, servername?: string): Promise<TlsSession | false | null> {
  const socket = await tlsTransport(s)
  if (socket === null || socket === false) return socket
  return await openTls({ host: s.host, port: s.port, servername, socket, timeoutMs: s.wait(), signal: s.signal })
}

/** The certificate presented for `servername`: null when no handshake completed, false when no TLS is offered. */
async function peerCertificate (s: CheckSession, servername?: string): Promise<X509Certificate | false | null> {
  const wrapped = await peerSession(s, servername)
  if (wrapped === null || wrapped === false) return wrapped
  try {
    return wrapped.cert ?? null
  } finally {
    wrapped.socket.destroy()
  }
}

/** Evidence that says the certificate or protocol was reached through STARTTLS, where it was. */
function viaStartTls (s: CheckSession, out: Exposure[]): Exposure[] {
  return s.secure ? out : out.map((e) => ({ ...e, evidence: evidenceOf(`${e.evidence} (after STARTTLS)`) }))
}

/** Inside TLS from the first byte, or in clear text with a STARTTLS dialogue to try. */
const hasTls = (svc: ServiceInfo, secure: boolean): boolean => secure || startTlsOf(svc) !== undefined

/** DNS names only: SNI and certificate names never carry addresses. */
function scannedNames (s: CheckSession): string[] {
  return s.hostnames.filter((h) => net.isIP(h) === 0).slice(0, 3)
}

const certificate: PortCheck = {
  ids: ['VULNSCAN-TLS-EXPIRED', 'VULNSCAN-TLS-NOT-YET-VALID', 'VULNSCAN-TLS-SELF-SIGNED', 'VULNSCAN-TLS-WEAK-KEY', 'VULNSCAN-TLS-HOSTNAME-MISMATCH'],
  applies: hasTls,
  run: async (s) => {
    const names = scannedNames(s)
    const cert = await peerCertificate(s, names[0])
    // No STARTTLS offered: no certificate to judge (plain-text authentication has its own checks).
    if (cert === null || cert === false) return cert === false ? [] : null
    const out = certificateExposures(cert)
    for (const [i, name] of names.entries()) {
      // Each name gets its own handshake: a server may present another certificate for another SNI name.
      const presented = i === 0 ? cert : await peerCertificate(s, name)
      if (presented === null || presented === false) return null
      if (presented.checkHost(name) === undefined) {
        const alt = presented.subjectAltName ?? 'no subjectAltName'
        out.push({ check: 'VULNSCAN-TLS-HOSTNAME-MISMATCH', evidence: evidenceOf(`certificate presented for ${name} names ${presented.subject.split('\n').filter(Boolean).join(', ')}; ${alt}`) })
        break
      }
    }
    return viaStartTls(s, out)
  }
}

/**
 * A handshake that offers TLS 1.0 and 1.1 only, every cipher allowed: the protocol it settles on, false when
 * the server refuses, null when it could not tell (no connection, no answer in time).
 */
export async function legacyHandshake (host: string, port: number, timeoutMs: number, signal: AbortSignal, servername?: string, plain?: net.Socket): Promise<string | false | null> {
  return await new Promise((resolve) => {
    if (signal.aborted) return resolve(null)
    // A socket upgraded by STARTTLS is connected already.
    let connected = plain !== undefined
    const socket = tls.connect({
      ...(plain !== undefined ? { socket: plain } : { host, port }),
      servername,
      rejectUnauthorized: false,
      minVersion: 'TLSv1',
      maxVersion: 'TLSv1.1',
      ciphers: 'ALL:@SECLEVEL=0'
    })
    let settled = false
    const finish = (v: string | false | null): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      socket.destroy()
      resolve(v)
    }
    const onAbort = (): void => finish(null)
    const timer = setTimeout(() => finish(null), timeoutMs)
    signal.addEventListener('abort', onAbort, { once: true })
    socket.once('connect', () => { connected = true })
    socket.once('secureConnect', () => finish(socket.getProtocol() ?? 'TLSv1'))
    // An alert or a close after the TCP connect is the server refusing those versions; before it, no verdict.
    socket.once('error', () => finish(connected ? false : null))
    socket.once('close', () => finish(connected ? false : null))
  })
}

const legacyProtocol: PortCheck = {
  ids: ['VULNSCAN-TLS-LEGACY-PROTOCOL'],
  applies: hasTls,
  run: async (s) => {
    const plain = await tlsTransport(s)
    if (plain === null || plain === false) return plain === false ? [] : null
    const r = await legacyHandshake(s.host, s.port, s.wait(), s.signal, scannedNames(s)[0], plain)
    if (r === null) return null
    if (r === false) return []
    return viaStartTls(s, [{ check: 'VULNSCAN-TLS-LEGACY-PROTOCOL', evidence: `a handshake offering only TLS 1.0 and 1.1 completed with ${r}` }])
  }
}

/** The algorithm name-lists of an SSH KEXINIT payload (RFC 4253 section 7.1). */
export interface KexInit {
  kex: string[]
  hostKey: string[]
  ciphers: string[]
  macs: string[]
}

/** Parse the server's first binary packet after its identification line; null when it is not a KEXINIT. */
export function parseKexInit (packet: Buffer): KexInit | null {
  if (packet.length < 6) return null
  const len = packet.readUInt32BE(0)
  if (len < 22 || len > 35000 || packet.length < 4 + len) return null
  const pad = packet[4]
  const payload = packet.subarray(5, 4 + len - pad)
  if (payload[0] !== 20) return null
  let off = 17
  const lists: string[][] = []
  for (let i = 0; i < 10; i++) {
    if (off + 4 > payload.length) return null
    const n = payload.readUInt32BE(off)
    off += 4
    if (off + n > payload.length) return null
    const text = payload.subarray(off, off + n).toString('latin1')
    lists.push(text === '' ? [] : text.split(','))
    off += n
  }
  return { kex: lists[0], hostKey: lists[1], ciphers: [...new Set([...lists[2], ...lists[3]])], macs: [...new Set([...lists[4], ...lists[5]])] }
}

/** Whether a KEXINIT leaves the connection open to Terrapin, and with what. */
export function terrapin (k: KexInit): string | null {
  if (k.kex.includes('kex-strict-s-v00@openssh.com')) return null
  const chacha = k.ciphers.includes('chacha20-poly1305@openssh.com')
  const cbc = k.ciphers.filter((c) => /-cbc(@|$)/.test(c))
  const etm = k.macs.filter((m) => m.endsWith('-etm@openssh.com'))
  const parts: string[] = []
  if (chacha) parts.push('chacha20-poly1305@openssh.com')
  if (cbc.length > 0 && etm.length > 0) parts.push(`CBC ciphers (${cbc.join(', ')}) with EtM MACs (${etm.join(', ')})`)
  if (parts.length === 0) return null
  return `KEXINIT offers ${parts.join(' and ')} without kex-strict-s-v00@openssh.com`
}

/** The bytes after the server's identification line, once a whole binary packet has arrived. */
function afterIdent (reply: Buffer): Buffer | null {
  let off = 0
  for (;;) {
    const nl = reply.indexOf(0x0a, off)
    if (nl < 0) return null
    const line = reply.subarray(off, nl).toString('latin1')
    off = nl + 1
    if (line.startsWith('SSH-')) return reply.subarray(off)
  }
}

function packetComplete (reply: Buffer): boolean {
  const rest = afterIdent(reply)
  return rest !== null && rest.length >= 4 && rest.length >= 4 + rest.readUInt32BE(0)
}

const sshTerrapin: PortCheck = {
  ids: ['VULNSCAN-SSH-TERRAPIN'],
  applies: (svc, secure) => svc.service === 'ssh' && !secure,
  run: async (s) => await withConn(s, async (c) => {
    const ident = await c.read((r) => afterIdent(r) !== null, s.wait())
    if (afterIdent(ident) === null) return null
    // Our identification, so that every server sends its KEXINIT (some wait for the client's line).
    c.write(Buffer.from('SSH-2.0-vulnscan\r\n'))
    let reply = ident
    if (!packetComplete(reply)) reply = Buffer.concat([reply, await c.read((r) => packetComplete(Buffer.concat([ident, r])), s.wait())])
    const kex = parseKexInit(afterIdent(reply) ?? Buffer.alloc(0))
    if (kex === null) return null
    const why = terrapin(kex)
    return why === null ? [] : [{ check: 'VULNSCAN-SSH-TERRAPIN', evidence: evidenceOf(why) }]
  })
}

/** The last line of a multi-line `NNN-`/`NNN ` reply has arrived. */
const codeDone = (r: Buffer): boolean => lines(r).some((l) => /^\d{3}(?: |$)/.test(l))

const smtpPlaintextAuth: PortCheck = {
  ids: ['VULNSCAN-SMTP-PLAINTEXT-AUTH'],
  applies: (svc, secure) => svc.service === 'smtp' && !secure,
  run: async (s) => await withConn(s, async (c) => {
    const greeting = await c.read(codeDone, s.wait())
    if (!/^220/.test(greeting.toString('latin1'))) return null
    c.write(Buffer.from('EHLO vulnscan.invalid\r\n'))
    const ehlo = await c.read(codeDone, s.wait())
    const ls = lines(ehlo)
    if (!ls.some((l) => /^250[ -]/.test(l))) return ls.length > 0 ? [] : null
    c.write(Buffer.from('QUIT\r\n'))
    const auth = ls.map((l) => l.slice(4)).find((l) => /^AUTH[ =]/i.test(l) && /\b(PLAIN|LOGIN)\b/i.test(l))
    return auth === undefined ? [] : [{ check: 'VULNSCAN-SMTP-PLAINTEXT-AUTH', evidence: evidenceOf(`EHLO on the plain connection lists ${auth}`) }]
  })
}

const imapPlaintextAuth: PortCheck = {
  ids: ['VULNSCAN-IMAP-PLAINTEXT-AUTH'],
  applies: (svc, secure) => svc.service === 'imap' && !secure,
  run: async (s) => await withConn(s, async (c) => {
    const greeting = await c.read((r) => r.includes(0x0a), s.wait())
    if (!/^\* (OK|PREAUTH)/.test(greeting.toString('latin1'))) return null
    c.write(Buffer.from('v1 CAPABILITY\r\n'))
    const reply = await c.read((r) => /(^|\n)v1 [^\n]*\n/.test(r.toString('latin1')), s.wait())
    const capLine = lines(reply).find((l) => /^\* CAPABILITY /i.test(l))
    if (capLine === undefined) return reply.length > 0 ? [] : null
    c.write(Buffer.from('v2 LOGOUT\r\n'))
    const caps = capLine.slice(13).toUpperCase().split(/\s+/)
    // Without LOGINDISABLED, LOGIN takes a clear password (RFC 3501 section 6.2.3), AUTH=PLAIN or not.
    if (caps.includes('LOGINDISABLED')) return []
    const plain = caps.filter((c) => c === 'AUTH=PLAIN' || c === 'AUTH=LOGIN')
    return [{ check: 'VULNSCAN-IMAP-PLAINTEXT-AUTH', evidence: evidenceOf(`CAPABILITY on the plain connection lacks LOGINDISABLED${plain.length > 0 ? ` and lists ${plain.join(' ')}` : ''}: ${capLine}`) }]
  })
}

const pop3PlaintextAuth: PortCheck = {
  ids: ['VULNSCAN-POP3-PLAINTEXT-AUTH'],
  applies: (svc, secure) => svc.service === 'pop3' && !secure,
  run: async (s) => await withConn(s, async (c) => {
    const greeting = await c.read((r) => r.includes(0x0a), s.wait())
    if (!/^\+OK/.test(greeting.toString('latin1'))) return null
    c.write(Buffer.from('CAPA\r\n'))
    const reply = await c.read((r) => /^-ERR/.test(r.toString('latin1')) || /\r?\n\.\r?\n$/.test(r.toString('latin1')), s.wait())
    if (reply.length === 0) return null
    c.write(Buffer.from('QUIT\r\n'))
    if (!/^\+OK/.test(reply.toString('latin1'))) return []
    const ls = lines(reply).slice(1)
    const user = ls.find((l) => /^USER$/i.test(l.trim()))
    const sasl = ls.find((l) => /^SASL\b/i.test(l) && /\b(PLAIN|LOGIN)\b/i.test(l))
    const shown = [user, sasl].filter((l): l is string => l !== undefined)
    return shown.length === 0 ? [] : [{ check: 'VULNSCAN-POP3-PLAINTEXT-AUTH', evidence: evidenceOf(`CAPA on the plain connection lists ${shown.join('; ')}`) }]
  })
}

export const TRANSPORT_CHECKS: readonly PortCheck[] = [certificate, legacyProtocol, sshTerrapin, smtpPlaintextAuth, imapPlaintextAuth, pop3PlaintextAuth]
