// NFS's MOUNT protocol (program 100005, version 3, RFC 1813 section 5), reached through rpcbind: GETPORT finds
// mountd's TCP port, and EXPORT (procedure 5, AUTH_NULL) lists the exported directories, each with the groups
// (hosts, networks, netgroups) allowed to mount it. An export with no group, or the group `*`, is open to anyone.

import { record } from './rpcbind'

const XID = 0x766e5332
const MOUNT_PROG = 100005

/** One ONC RPC call with AUTH_NULL credentials and verifier, framed with TCP record marking. */
function call (prog: number, vers: number, proc: number, args: number[] = []): Buffer {
  const words = [XID, 0, 2, prog, vers, proc, 0, 0, 0, 0, ...args]
  const msg = Buffer.alloc(4 + words.length * 4)
  msg.writeUInt32BE(0x80000000 + words.length * 4, 0)
  words.forEach((w, i) => msg.writeUInt32BE(w >>> 0, 4 + i * 4))
  return msg
}

/** rpcbind GETPORT (PMAP v2 procedure 3) for mountd v3 over TCP. */
export function getportCall (): Buffer {
  return call(100000, 2, 3, [MOUNT_PROG, 3, 6, 0])
}

/** MOUNT v3 EXPORT. */
export function exportCall (): Buffer {
  return call(MOUNT_PROG, 3, 5)
}

export const complete = (reply: Buffer): boolean => record(reply) !== null

/** The results of an accepted, successful reply to our call; null otherwise. */
function results (reply: Buffer): Buffer | null {
  const rec = record(reply)
  if (rec === null || rec.length < 24) return null
  if (rec.readUInt32BE(0) !== XID || rec.readUInt32BE(4) !== 1 || rec.readUInt32BE(8) !== 0) return null
  const off = 20 + Math.ceil(rec.readUInt32BE(16) / 4) * 4
  if (off + 4 > rec.length || rec.readUInt32BE(off) !== 0) return null
  return rec.subarray(off + 4)
}

/** mountd's port from a GETPORT reply (0: not registered); null when the reply is not one. */
export function parseGetport (reply: Buffer): number | null {
  const r = results(reply)
  return r !== null && r.length >= 4 ? r.readUInt32BE(0) : null
}

export interface NfsExport { dir: string, groups: string[] }

/** The export list of an EXPORT reply; null when the reply is not one or is cut short. */
export function parseExports (reply: Buffer): NfsExport[] | null {
  const r = results(reply)
  if (r === null) return null
  let off = 0
  const str = (): string | null => {
    if (off + 4 > r.length) return null
    const len = r.readUInt32BE(off)
    if (len > 1024 || off + 4 + len > r.length) return null
    const s = r.subarray(off + 4, off + 4 + len).toString('utf8')
    off += 4 + Math.ceil(len / 4) * 4
    return s
  }
  const more = (): boolean | null => {
    if (off + 4 > r.length) return null
    const v = r.readUInt32BE(off)
    off += 4
    return v === 1
  }
  const out: NfsExport[] = []
  for (let next = more(); next === true && out.length < 256; next = more()) {
    const dir = str()
    if (dir === null) return null
    const groups: string[] = []
    for (let g = more(); g === true && groups.length < 256; g = more()) {
      const name = str()
      if (name === null) return null
      groups.push(name)
    }
    out.push({ dir, groups })
  }
  return out
}

/** Exports anyone may mount: no group named, or a wildcard. */
export function openExports (list: NfsExport[]): NfsExport[] {
  return list.filter((e) => e.groups.length === 0 || e.groups.some((g) => g === '*' || g === '0.0.0.0/0' || g === '::/0' || g === '(everyone)'))
}
