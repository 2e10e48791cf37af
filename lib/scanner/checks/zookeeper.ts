// ZooKeeper without authentication: open a session with no credentials and list the children of the root znode
// (names only, no data, no watch), then close the session. A server that answers with the names lets anyone read
// its tree; one that enforces authentication (`enforce.auth.enabled`), or whose root ACL denies the world, answers
// with an error code instead. The four-letter word `srvr` is no test of this: ZooKeeper 3.5 and later always allow
// it, whatever `4lw.commands.whitelist` says, because zkServer.sh needs it.
//
// Wire format: Jute records, each request and reply framed by a 32-bit big-endian length.

import type { ProbeIO } from '../probes/common'

const frame = (body: Buffer): Buffer => {
  const len = Buffer.alloc(4)
  len.writeInt32BE(body.length)
  return Buffer.concat([len, body])
}

/** ConnectRequest: protocol 0, no zxid seen, a 10 s session, no session id, an empty password, read-only allowed. */
export function connectRequest (): Buffer {
  const b = Buffer.alloc(4 + 8 + 4 + 8 + 4 + 16 + 1)
  b.writeInt32BE(10_000, 12)
  b.writeInt32BE(16, 24)
  b[44] = 1
  return frame(b)
}

/** getChildren (type 8) of `path` without a watch. */
export function getChildrenRequest (xid: number, path: string): Buffer {
  const p = Buffer.from(path, 'utf8')
  const b = Buffer.alloc(8 + 4 + p.length + 1)
  b.writeInt32BE(xid, 0)
  b.writeInt32BE(8, 4)
  b.writeInt32BE(p.length, 8)
  p.copy(b, 12)
  return frame(b)
}

/** closeSession (type -11). */
export function closeSessionRequest (xid: number): Buffer {
  const b = Buffer.alloc(8)
  b.writeInt32BE(xid, 0)
  b.writeInt32BE(-11, 4)
  return frame(b)
}

/** The complete frames at the start of a reply. */
export function frames (reply: Buffer): Buffer[] {
  const out: Buffer[] = []
  for (let off = 0; off + 4 <= reply.length;) {
    const len = reply.readInt32BE(off)
    if (len < 0 || len > 1 << 20 || off + 4 + len > reply.length) break
    out.push(reply.subarray(off + 4, off + 4 + len))
    off += 4 + len
  }
  return out
}

/** The session id of a ConnectResponse (0: the server refused the session), null when it is not one. */
export function sessionOf (f: Buffer): bigint | null {
  return f.length >= 16 ? f.readBigInt64BE(8) : null
}

/** A getChildren reply: its error code (0: ok) and the child names. */
export function childrenOf (f: Buffer, xid: number): { err: number, children: string[] } | null {
  if (f.length < 16 || f.readInt32BE(0) !== xid) return null
  const err = f.readInt32BE(12)
  if (err !== 0) return { err, children: [] }
  if (f.length < 20) return null
  const n = f.readInt32BE(16)
  const children: string[] = []
  let off = 20
  for (let i = 0; i < n && i < 1000; i++) {
    if (off + 4 > f.length) return null
    const len = f.readInt32BE(off)
    off += 4
    if (len < 0 || off + len > f.length) return null
    children.push(f.subarray(off, off + len).toString('utf8'))
    off += len
  }
  return { err, children }
}

/**
 * Open a session without credentials and list `/`. Null when no clear answer came; `refused` with the server's
 * error code (or the session refused, or the connection closed) when it would not; the names when it did.
 */
export async function zookeeperAnonymousRead (c: ProbeIO & { closed: boolean }, wait: () => number): Promise<{ children: string[] } | { refused: string } | null> {
  c.write(connectRequest())
  const hello = frames(await c.read((r) => frames(r).length >= 1, wait()))[0]
  if (hello === undefined) return c.closed ? { refused: 'the server closed the connection at the session request' } : null
  const session = sessionOf(hello)
  if (session === null) return null
  if (session === 0n) return { refused: 'the server refused the session' }
  c.write(getChildrenRequest(1, '/'))
  const reply = frames(await c.read((r) => frames(r).length >= 1, wait()))[0]
  if (reply === undefined) return c.closed ? { refused: 'the server closed the connection at the first request' } : null
  const r = childrenOf(reply, 1)
  if (r === null) return null
  c.write(closeSessionRequest(2))
  return r.err === 0 ? { children: r.children } : { refused: `getChildren / answered error ${r.err}` }
}
