// PostgreSQL waits for the client's StartupMessage (protocol 3.0). We log in as `postgres` to
// database `postgres`: under trust authentication the server answers with ParameterStatus
// messages that carry `server_version`; otherwise the authentication request or error fields
// still identify the server and sometimes bound its version.

import { clean, joinInfo, type ProbeMatch } from './common'

export const ports = [5432, 5433]

export const STARTUP_USER = 'postgres'

/** StartupMessage: int32 length, int32 196608 (3.0), then NUL-terminated key/value pairs. */
export function startupMessage (user = STARTUP_USER): Buffer {
  const params = Buffer.from(`user\0${user}\0database\0postgres\0application_name\0vulnscan\0\0`, 'latin1')
  const msg = Buffer.alloc(8 + params.length)
  msg.writeInt32BE(msg.length, 0)
  msg.writeInt32BE(196608, 4)
  params.copy(msg, 8)
  return msg
}

/** Terminate ('X'), sent after a successful login so the server logs a clean disconnect. */
export const terminate = Buffer.from([0x58, 0, 0, 0, 4])

export const request = startupMessage()

interface Message { type: string, body: Buffer }

/** Split complete backend messages; a trailing partial one is left out. */
export function messages (reply: Buffer): Message[] {
  const out: Message[] = []
  let off = 0
  while (off + 5 <= reply.length) {
    const type = String.fromCharCode(reply[off])
    const len = reply.readInt32BE(off + 1)
    if (len < 4 || len > 1 << 20) break
    if (off + 1 + len > reply.length) break
    out.push({ type, body: reply.subarray(off + 5, off + 1 + len) })
    off += 1 + len
  }
  return out
}

/** The reply is complete at ReadyForQuery, ErrorResponse or an authentication challenge. */
export function complete (reply: Buffer): boolean {
  return messages(reply).some((m) => m.type === 'Z' || m.type === 'E' ||
    (m.type === 'R' && m.body.length >= 4 && m.body.readInt32BE(0) !== 0))
}

function errorFields (body: Buffer): Map<string, string> {
  const fields = new Map<string, string>()
  let off = 0
  while (off < body.length && body[off] !== 0) {
    const code = String.fromCharCode(body[off])
    const end = body.indexOf(0, off + 1)
    if (end < 0) break
    fields.set(code, body.subarray(off + 1, end).toString('utf8'))
    off = end + 1
  }
  return fields
}

const AUTH_NAMES: Record<number, string> = {
  2: 'Kerberos V5', 3: 'cleartext password', 5: 'MD5 password', 7: 'GSSAPI', 9: 'SSPI', 10: 'SASL'
}

/**
 * Parse `server_version` such as `15.20 (Debian 15.20-0+deb12u1)` or `16.2`.
 */
export function parseServerVersion (raw: string): Pick<ProbeMatch, 'version' | 'distro' | 'extraInfo'> {
  const m = /^(\d+(?:\.\d+)*)(?:\s*\((.*)\))?/.exec(raw.trim())
  if (!m) return { extraInfo: raw }
  const packaging = m[2]
  let distro: string | undefined
  let revision: string | undefined
  if (packaging) {
    const deb = /\b(deb\d+u\d+)\b/.exec(packaging)
    const pgdg = /\bpgdg(\d+\.\d+|\d+)?/.exec(packaging)
    const ubuntu = /Ubuntu/i.test(packaging)
    distro = deb ? deb[1] : ubuntu ? 'Ubuntu' : pgdg ? 'PGDG' : /Debian/.test(packaging) ? 'Debian' : undefined
    revision = /\S+-\S+/.exec(packaging)?.[0]
  }
  return clean({ version: m[1], distro, extraInfo: revision })
}

export function parse (reply: Buffer): ProbeMatch | null {
  const msgs = messages(reply)
  if (!msgs.length) return null
  // Under trust authentication a refused login is AuthenticationOk followed by an error.
  const error = msgs.find((m) => m.type === 'E')
  const first = error ?? msgs[0]
  if (first.type === 'R' && first.body.length >= 4) {
    const auth = first.body.readInt32BE(0)
    if (auth === 0) {
      const params = new Map<string, string>()
      for (const m of msgs) {
        if (m.type !== 'S') continue
        const [k, v] = m.body.toString('utf8').split('\0')
        if (k) params.set(k, v ?? '')
      }
      const raw = params.get('server_version')
      const v = raw ? parseServerVersion(raw) : {}
      return clean({
        service: 'postgresql',
        product: 'PostgreSQL',
        version: v.version,
        distro: v.distro,
        extraInfo: joinInfo(v.extraInfo, `no authentication required for user ${STARTUP_USER}`)
      })
    }
    if (!(auth in AUTH_NAMES)) return null
    let info = `authentication: ${AUTH_NAMES[auth]}`
    if (auth === 10) {
      const mechs = first.body.subarray(4).toString('latin1').split('\0').filter(Boolean)
      info = `authentication: SASL ${mechs.join(' ')}`
      // SCRAM (SASL) authentication first shipped in PostgreSQL 10.
      if (mechs.some((m) => m.startsWith('SCRAM-SHA-256'))) info = joinInfo('version 10 or later', info)!
    }
    return { service: 'postgresql', product: 'PostgreSQL', extraInfo: info }
  }
  if (first.type === 'E') {
    const f = errorFields(first.body)
    if (!f.has('S') || !f.has('C') || !f.has('M')) return null
    return { service: 'postgresql', product: 'PostgreSQL', extraInfo: versionRangeFromError(f) }
  }
  return null
}

function versionRangeFromError (f: Map<string, string>): string {
  const msg = f.get('M') ?? ''
  const parts: string[] = []
  const neg = /server supports (\d+)\.\d+ to \d+\.\d+/.exec(msg)
  // Protocol 2.0 support was dropped in PostgreSQL 14; the non-localized severity ('V') came in 9.6.
  if (neg && neg[1] === '3') parts.push('version 14 or later')
  else if (neg && neg[1] === '2' && f.has('V')) parts.push('version 9.6 to 13')
  else if (f.has('V')) parts.push('version 9.6 or later')
  parts.push(`${f.get('C')}: ${msg.slice(0, 120)}`)
  return parts.join('; ')
}
