// ONC RPC's port mapper (RFC 1833) on TCP 111: a PMAPPROC_DUMP call (program 100000, version 2,
// procedure 4) answers the list of registered RPC programs, which is what shows NFS, mountd, NIS
// and friends behind it. The reply names no implementation (rpcbind and the old portmap answer the
// same DUMP), so no product is reported: the registered programs go into extraInfo.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [111]

const PMAP_PROG = 100000
const XID = 0x766e5331

/** Names of well-known RPC programs (from the rpc(5) database every Unix ships). */
const PROGRAMS: Record<number, string> = {
  100000: 'portmapper',
  100001: 'rstatd',
  100002: 'rusersd',
  100003: 'nfs',
  100004: 'ypserv',
  100005: 'mountd',
  100007: 'ypbind',
  100011: 'rquotad',
  100021: 'nlockmgr',
  100024: 'status',
  100227: 'nfs_acl'
}

/** The DUMP call, framed with TCP record marking (RFC 5531 section 11): one last fragment. */
export function dumpCall (): Buffer {
  const words = [XID, 0 /* CALL */, 2 /* RPC version */, PMAP_PROG, 2, 4 /* DUMP */, 0, 0 /* AUTH_NULL */, 0, 0 /* verifier */]
  const msg = Buffer.alloc(4 + words.length * 4)
  msg.writeUInt32BE(0x80000000 + words.length * 4, 0)
  words.forEach((w, i) => msg.writeUInt32BE(w, 4 + i * 4))
  return msg
}

/** The record's bytes once every fragment up to the last has arrived; null before. */
export function record (reply: Buffer): Buffer | null {
  const parts: Buffer[] = []
  for (let off = 0; off + 4 <= reply.length;) {
    const mark = reply.readUInt32BE(off)
    const len = mark & 0x7fffffff
    if (off + 4 + len > reply.length) return null
    parts.push(reply.subarray(off + 4, off + 4 + len))
    if (mark >= 0x80000000) return Buffer.concat(parts)
    off += 4 + len
  }
  return null
}

export function complete (reply: Buffer): boolean {
  return record(reply) !== null
}

export interface RpcMapping { program: number, version: number, protocol: 'tcp' | 'udp' | string, port: number }

/** The program list of a DUMP reply; null unless the bytes are an accepted RPC reply to our call. */
export function parseDump (reply: Buffer): RpcMapping[] | null {
  const rec = record(reply)
  if (!rec || rec.length < 24) return null
  if (rec.readUInt32BE(0) !== XID || rec.readUInt32BE(4) !== 1 /* REPLY */ || rec.readUInt32BE(8) !== 0 /* MSG_ACCEPTED */) return null
  const verfLen = rec.readUInt32BE(16)
  let off = 20 + Math.ceil(verfLen / 4) * 4
  if (off + 4 > rec.length || rec.readUInt32BE(off) !== 0 /* SUCCESS */) return null
  off += 4
  const list: RpcMapping[] = []
  while (off + 4 <= rec.length && rec.readUInt32BE(off) === 1 && list.length < 512) {
    if (off + 20 > rec.length) return null
    const prot = rec.readUInt32BE(off + 12)
    list.push({ program: rec.readUInt32BE(off + 4), version: rec.readUInt32BE(off + 8), protocol: prot === 6 ? 'tcp' : prot === 17 ? 'udp' : String(prot), port: rec.readUInt32BE(off + 16) })
    off += 20
  }
  return list
}

/** `portmapper v2-4 tcp/111 udp/111, nfs v3 tcp/2049`: each program with its versions and where it listens. */
export function describe (list: RpcMapping[]): string {
  const byProgram = new Map<number, { versions: Set<number>, at: Set<string> }>()
  for (const m of list) {
    const e = byProgram.get(m.program) ?? { versions: new Set(), at: new Set() }
    e.versions.add(m.version)
    e.at.add(`${m.protocol}/${m.port}`)
    byProgram.set(m.program, e)
  }
  return [...byProgram].map(([prog, e]) => {
    const v = [...e.versions].sort((a, b) => a - b)
    const versions = v.length > 1 && v[v.length - 1] - v[0] === v.length - 1 ? `${v[0]}-${v[v.length - 1]}` : v.join(',')
    return `${PROGRAMS[prog] ?? `program ${prog}`} v${versions} ${[...e.at].join(' ')}`
  }).join(', ')
}

export function parse (reply: Buffer): ProbeMatch | null {
  const list = parseDump(reply)
  if (!list) return null
  return clean({ service: 'rpcbind', extraInfo: joinInfo(list.length ? `programs: ${describe(list)}`.slice(0, 400) : 'no programs registered') })
}

export const probe: ProbeDescriptor = {
  name: 'rpcbind',
  ports,
  fallback: 'full',
  recognise: (reply) => parse(reply),
  request: () => dumpCall(),
  complete,
  parse: (reply) => parse(reply),
  products: []
}
