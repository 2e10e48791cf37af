// Intrusive checks (run only when the scan sets `options.intrusive`): a login with an empty password, as an
// installer or a forgotten test account leaves it. Each tries one account and ends the session at once; a refusal
// leaves a failed login in the server's log, which is why they are off by default.

import type { Conn } from '../conn'
import * as mysql from '../probes/mysql'
import { evidenceOf, withConn, type CheckResult, type PortCheck } from './session'

const CLIENT_LONG_PASSWORD = 0x1
const CLIENT_PROTOCOL_41 = 0x200
const CLIENT_TRANSACTIONS = 0x2000
const CLIENT_SECURE_CONNECTION = 0x8000
const CLIENT_PLUGIN_AUTH = 0x80000

function packet (seq: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(4)
  h.writeUIntLE(payload.length, 0, 3)
  h[3] = seq & 0xff
  return Buffer.concat([h, payload])
}

/** HandshakeResponse41 for `user` with an empty password (an empty auth response whatever the plugin). */
export function mysqlLogin (user: string, seq: number, plugin = 'mysql_native_password'): Buffer {
  const fixed = Buffer.alloc(32)
  fixed.writeUInt32LE(CLIENT_LONG_PASSWORD | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH, 0)
  fixed.writeUInt32LE(16 * 1024 * 1024, 4)
  fixed[8] = 33 // utf8_general_ci
  return packet(seq, Buffer.concat([fixed, Buffer.from(user + '\0', 'latin1'), Buffer.from([0]), Buffer.from(plugin + '\0', 'latin1')]))
}

/** The first packet's payload and sequence number, or null. */
function firstPacket (reply: Buffer): { seq: number, body: Buffer } | null {
  if (!mysql.complete(reply)) return null
  return { seq: reply[3], body: reply.subarray(4, 4 + reply.readUIntLE(0, 3)) }
}

export type LoginOutcome = { accepted: true } | { accepted: false, code: number, message: string } | null

/** Log in as `user` with an empty password on a fresh connection; one auth switch is followed. */
export async function tryMysqlEmptyPassword (c: Conn, user: string, waitMs: () => number): Promise<LoginOutcome> {
  const greeting = firstPacket(await c.read(mysql.complete, waitMs()))
  if (greeting === null || greeting.body[0] !== 0x0a) return null
  c.write(mysqlLogin(user, greeting.seq + 1))
  for (let round = 0; round < 2; round++) {
    const answer = firstPacket(await c.read(mysql.complete, waitMs()))
    if (answer === null) return null
    const b = answer.body
    if (b[0] === 0x00) {
      c.write(packet(0, Buffer.from([0x01]))) // COM_QUIT
      return { accepted: true }
    }
    if (b[0] === 0xff && b.length >= 3) {
      const text = b.subarray(3).toString('latin1')
      return { accepted: false, code: b.readUInt16LE(1), message: (text.startsWith('#') ? text.slice(6) : text).slice(0, 160) }
    }
    // AuthSwitchRequest (0xfe): the empty password is an empty answer under any plugin.
    if (b[0] === 0xfe && round === 0) {
      c.write(packet(answer.seq + 1, Buffer.alloc(0)))
      continue
    }
    return null
  }
  return null
}

const mysqlEmptyRoot: PortCheck = {
  ids: ['VULNSCAN-MYSQL-EMPTY-PASSWORD'],
  intrusive: true,
  applies: (svc) => svc.service === 'mysql',
  run: async (s) => await withConn(s, async (c): Promise<CheckResult> => {
    const r = await tryMysqlEmptyPassword(c, 'root', () => s.wait())
    if (r === null) return null
    if (r.accepted) return [{ check: 'VULNSCAN-MYSQL-EMPTY-PASSWORD', evidence: evidenceOf('user root with an empty password: login accepted (OK packet)') }]
    return []
  })
}

export const DEFAULT_LOGIN_CHECKS: readonly PortCheck[] = [mysqlEmptyRoot]
