// PostgreSQL waits for the client's StartupMessage (protocol 3.0). We log in as `postgres` to
// database `postgres`: under trust authentication the server answers with ParameterStatus
// messages that carry `server_version`; otherwise the authentication request or error fields
// still identify the server and sometimes bound its version.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

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

type Release = [number, number]

interface Bounds { min?: Release, max?: Release }

function later (a: Release, b: Release): boolean {
  return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1])
}

function narrow (b: Bounds, min?: Release, max?: Release): void {
  if (min && (!b.min || later(min, b.min))) b.min = min
  if (max && (!b.max || later(b.max, max))) b.max = max
}

const fmt = (r: Release): string => r[0] >= 10 ? String(r[0]) : `${r[0]}.${r[1]}`

function rangeText (b: Bounds): string | undefined {
  if (b.min && b.max) return later(b.min, b.max) ? undefined : `version ${fmt(b.min)} to ${fmt(b.max)}`
  if (b.min) return `version ${fmt(b.min)} or later`
  if (b.max) return `version ${fmt(b.max)} or earlier`
  return undefined
}

/**
 * What a reply says about the release, by features that appeared in known versions: SCRAM
 * authentication (10), the non-localized severity field 'V' (9.6), and the protocol range a
 * server states when refusing an unknown protocol (2.0 dropped in 14).
 */
function boundsOf (msgs: Message[], b: Bounds): void {
  for (const m of msgs) {
    if (m.type === 'R' && m.body.length >= 4 && m.body.readInt32BE(0) === 10 &&
      m.body.subarray(4).toString('latin1').includes('SCRAM-SHA-256')) narrow(b, [10, 0])
    if (m.type === 'E') {
      const f = errorFields(m.body)
      if (f.has('V')) narrow(b, [9, 6])
      const neg = /server supports (\d+)\.\d+ to \d+\.\d+/.exec(f.get('M') ?? '')
      if (neg) narrow(b, neg[1] === '3' ? [14, 0] : undefined, neg[1] === '3' ? undefined : [13, 0])
    }
  }
}

/**
 * A startup packet for protocol 32767.0, which every server refuses with a message naming the
 * protocol versions it supports. Detection sends it on a second connection when the login did
 * not reveal the exact version.
 */
export const negotiationProbe = Buffer.from([0, 0, 0, 8, 0x7f, 0xff, 0, 0])

/**
 * Parse the reply to the startup message; `negotiation` is the optional reply to
 * `negotiationProbe`, used only to narrow the version range.
 */
export function parse (reply: Buffer, negotiation?: Buffer): ProbeMatch | null {
  const msgs = messages(reply)
  if (!msgs.length) return null
  // Under trust authentication a refused login is AuthenticationOk followed by an error.
  const error = msgs.find((m) => m.type === 'E')
  const first = error ?? msgs[0]
  const bounds: Bounds = {}
  boundsOf(msgs, bounds)
  if (negotiation) boundsOf(messages(negotiation), bounds)
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
        extraInfo: joinInfo(v.version ? undefined : rangeText(bounds), v.extraInfo,
          `no authentication required for user ${STARTUP_USER}`)
      })
    }
    if (!(auth in AUTH_NAMES)) return null
    let info = `authentication: ${AUTH_NAMES[auth]}`
    if (auth === 10) {
      const mechs = first.body.subarray(4).toString('latin1').split('\0').filter(Boolean)
      info = `authentication: SASL ${mechs.join(' ')}`
    }
    return { service: 'postgresql', product: 'PostgreSQL', extraInfo: joinInfo(rangeText(bounds), info) }
  }
  if (first.type === 'E') {
    const f = errorFields(first.body)
    if (!f.has('S') || !f.has('C') || !f.has('M')) return null
    return {
      service: 'postgresql',
      product: 'PostgreSQL',
      extraInfo: joinInfo(rangeText(bounds), `${f.get('C')}: ${(f.get('M') ?? '').slice(0, 120)}`)
    }
  }
  return null
}

export const probe: ProbeDescriptor = {
  name: 'postgresql',
  ports,
  fallback: 'full',
  recognise: (reply) => parse(reply),
  converse: async (io, s) => {
    io.write(request)
    const reply = await io.read(complete, s.wait())
    let m = parse(reply)
    if (m && /no authentication required/.test(m.extraInfo ?? '')) io.write(terminate)
    if (m && !m.version && !s.signal.aborted) {
      // No exact version: a refused protocol version on a second connection narrows the range.
      const second = await s.open()
      if (second) {
        second.write(negotiationProbe)
        const neg = await second.read(complete, s.wait())
        second.close()
        m = parse(reply, neg) ?? m
      }
    }
    return { match: m, reply }
  },
  products: ['PostgreSQL']
}
