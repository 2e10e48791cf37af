// TLS detection and unwrapping with node:tls. Certificates are reported, never trusted: a
// scanner must see self-signed and expired certificates, so verification is off and the
// legacy protocol versions and ciphers old servers need are allowed.

import net from 'node:net'
import tls from 'node:tls'
import type { X509Certificate } from 'node:crypto'
import type { TlsInfo } from '../domain/services'

export interface TlsSession {
  socket: tls.TLSSocket
  info: TlsInfo
  /** The application protocol the server chose by ALPN (`http/1.1`), if it chose one. */
  alpn?: string
  /** The server's certificate, read at the handshake (the socket may not give it later). */
  cert?: X509Certificate
}

export interface OpenTlsOptions {
  host: string
  port: number
  /** SNI name; defaults to `host` when that is a DNS name (SNI never carries an IP address). */
  servername?: string
  timeoutMs: number
  signal?: AbortSignal
  /** Wrap an already connected plain socket (STARTTLS-style) instead of dialling. */
  socket?: net.Socket
}

/** `CN=example.com, O=Example` from the certificate's distinguished-name text. */
function dn (text: string | undefined): string | undefined {
  if (!text) return undefined
  return text.split('\n').map((s) => s.trim()).filter(Boolean).join(', ')
}

/**
 * Self-signed: its issuer is its own subject and its signature verifies with its own public key.
 * Not `checkIssued()`, which also demands that the issuer's key usage allow certificate signing:
 * most self-signed server certificates (key usage digitalSignature, keyEncipherment) fail that.
 */
export function isSelfSigned (cert: X509Certificate): boolean {
  if (cert.subject !== cert.issuer) return false
  try {
    return cert.verify(cert.publicKey)
  } catch {
    return false
  }
}

/** What a client learns about the server from its certificate and the negotiated session. */
export function certificateInfo (cert: X509Certificate | undefined, protocol: string | null): TlsInfo {
  const info: TlsInfo = {}
  if (protocol) info.protocol = protocol
  if (!cert) return info
  info.subject = dn(cert.subject)
  info.issuer = dn(cert.issuer)
  const from = new Date(cert.validFrom)
  const to = new Date(cert.validTo)
  if (!Number.isNaN(from.getTime())) info.notBefore = from.toISOString()
  if (!Number.isNaN(to.getTime())) info.notAfter = to.toISOString()
  info.selfSigned = isSelfSigned(cert)
  for (const k of Object.keys(info) as Array<keyof TlsInfo>) if (info[k] === undefined) delete info[k]
  return info
}

/**
 * Try a TLS handshake. Resolves with the open session (the caller owns and must destroy the
 * socket) or null when the peer does not complete a handshake within `timeoutMs`.
 */
export function openTls (opts: OpenTlsOptions): Promise<TlsSession | null> {
  return new Promise((resolve) => {
    if (opts.signal?.aborted) return resolve(null)
    const servername = opts.servername ?? (net.isIP(opts.host) ? undefined : opts.host)
    const socket = tls.connect({
      ...(opts.socket ? { socket: opts.socket } : { host: opts.host, port: opts.port }),
      servername,
      rejectUnauthorized: false,
      minVersion: 'TLSv1',
      ciphers: 'ALL:@SECLEVEL=0',
      // After STARTTLS the protocol is settled and offering http/1.1 is wrong: Exim (tls_alpn, 4.95 on) fails a
      // handshake whose ALPN list names none of its protocols.
      ...(opts.socket ? {} : { ALPNProtocols: ['http/1.1'] })
    })
    let settled = false
    const finish = (session: TlsSession | null): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      opts.signal?.removeEventListener('abort', onAbort)
      socket.removeListener('error', onError)
      if (!session) socket.destroy()
      else socket.on('error', () => {})
      resolve(session)
    }
    const onError = (): void => finish(null)
    const onAbort = (): void => finish(null)
    const timer = setTimeout(() => finish(null), opts.timeoutMs)
    opts.signal?.addEventListener('abort', onAbort, { once: true })
    socket.on('error', onError)
    socket.once('close', () => finish(null))
    socket.once('secureConnect', () => {
      const cert = socket.getPeerX509Certificate()
      const info = certificateInfo(cert, socket.getProtocol())
      const session: TlsSession = socket.alpnProtocol ? { socket, info, alpn: socket.alpnProtocol } : { socket, info }
      if (cert !== undefined) session.cert = cert
      finish(session)
    })
  })
}
