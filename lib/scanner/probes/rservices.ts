// The BSD r-services: rexec (512), rlogin (513) and rsh (514). Each starts with NUL-terminated fields from the
// client; the server answers one byte, 0 (go on) or 1 followed by an error message. rlogin and rsh trust the
// client's user name only from a privileged source port (512-1023): from any other port a server drops the
// connection (rsh-redone resets it) or answers 1 and "permission denied". So the question is asked from a
// privileged port where the scanner may bind one (it runs as root), for a user named `vulnscan` and the
// command `id` that no server runs without trusting us: rsh-redone answers `\0Authentication failure`, its
// rlogind asks `\0Password: `; rexec checks a password (empty here) and answers `\1Login incorrect.`.

import { Conn } from '../conn'
import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [512, 513, 514]

const SERVICE: Record<number, string> = { 512: 'rexec', 513: 'rlogin', 514: 'rsh' }

/** The opening fields of each service, by port (another port: rsh's). */
export function request (port: number): Buffer {
  if (port === 512) return Buffer.from('0\0vulnscan\0\0id\0', 'latin1') // stderr port none, user, empty password, command
  if (port === 513) return Buffer.from('\0vulnscan\0vulnscan\0vt100/9600\0', 'latin1')
  return Buffer.from('0\0vulnscan\0vulnscan\0id\0', 'latin1') // stderr port none, local user, remote user, command
}

export function complete (reply: Buffer): boolean {
  return reply.length >= 2 && (reply[0] === 0 || reply[0] === 1) && /[\n:] ?$/.test(reply.toString('latin1'))
}

/** The status byte and the message after it; null unless the reply is one. */
export function parseAnswer (reply: Buffer): { ok: boolean, message: string } | null {
  if (reply.length === 0 || reply[0] > 1) return null
  const message = reply.subarray(1).toString('latin1').replace(/[\r\n]+$/, '').slice(0, 120)
  // One byte alone says little; a message must be printable text.
  if (message === '' || !/^[\x20-\x7e\r\n\t]+$/.test(message)) return reply.length === 1 && reply[0] === 0 ? { ok: true, message: '' } : null
  return { ok: reply[0] === 0, message }
}

export function parse (reply: Buffer, port: number, privileged: boolean): ProbeMatch | null {
  const a = parseAnswer(reply)
  if (a === null) return null
  return clean({
    service: SERVICE[port] ?? 'rsh',
    extraInfo: joinInfo(a.message !== '' && `"${a.message}"`, !privileged && 'from an unprivileged port')
  })
}

/** Ask from a privileged source port (when this process may bind one), else from any port. */
export async function ask (host: string, port: number, waitMs: number, signal: AbortSignal): Promise<{ reply: Buffer, privileged: boolean, closed: boolean } | null> {
  const root = typeof process.getuid === 'function' && process.getuid() === 0
  for (let i = 0; i < (root ? 4 : 1); i++) {
    const local = root ? 600 + Math.floor(Math.random() * 424) : undefined
    const c = await Conn.open(host, port, waitMs, signal, local)
    if (c === null) continue
    try {
      c.write(request(port))
      const reply = await c.read(complete, waitMs, 300)
      return { reply, privileged: local !== undefined, closed: c.closed }
    } finally {
      c.close()
    }
  }
  return null
}

export const probe: ProbeDescriptor = {
  name: 'rservices',
  ports,
  converse: async (io, s) => {
    // The engine's connection comes from an unprivileged port: a server may answer it all the same.
    io.write(request(s.port))
    const reply = await io.read(complete, s.wait(), s.idleMs)
    const first = parse(reply, s.port, false)
    const again = await ask(s.host, s.port, s.wait(), s.signal)
    const second = again !== null ? parse(again.reply, s.port, again.privileged) : null
    return second !== null ? { match: second, reply: again!.reply } : { match: first, reply }
  },
  products: []
}
