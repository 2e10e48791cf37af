// LDAP anonymous read: the root DSE is meant to be read by anyone (it says what the server supports and
// which naming contexts it holds); the entries under a naming context are not. Without binding, read the
// root DSE's namingContexts, then search one level under each (at most a few entries, no attributes): a
// server that returns entries lets anyone read its directory.

import type { ProbeIO } from '../probes/common'

function tlv (tag: number, body: Buffer): Buffer {
  const n = body.length
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff])
  return Buffer.concat([Buffer.from([tag]), len, body])
}
const octets = (s: string, tag = 0x04): Buffer => tlv(tag, Buffer.from(s, 'utf8'))
const int = (n: number, tag = 0x02): Buffer => tlv(tag, Buffer.from([n]))

/** SearchRequest: `base`, scope (0 base, 1 one level), filter (objectClass=*), size limit, attributes. */
export function searchRequest (messageId: number, base: string, scope: 0 | 1, sizeLimit: number, attributes: string[]): Buffer {
  const search = Buffer.concat([
    octets(base), int(scope, 0x0a), int(0, 0x0a), int(sizeLimit), int(5), tlv(0x01, Buffer.from([0])),
    octets('objectClass', 0x87),
    tlv(0x30, Buffer.concat(attributes.map((a) => octets(a))))
  ])
  return tlv(0x30, Buffer.concat([int(messageId), tlv(0x63, search)]))
}

interface Node { tag: number, body: Buffer, end: number }

function read (buf: Buffer, off: number): Node | null {
  if (off + 2 > buf.length) return null
  const tag = buf[off]
  let len = buf[off + 1]
  let start = off + 2
  if ((len & 0x80) !== 0) {
    const n = len & 0x7f
    if (n === 0 || n > 4 || start + n > buf.length) return null
    len = 0
    for (let i = 0; i < n; i++) len = len * 256 + buf[start + i]
    start += n
  }
  if (start + len > buf.length) return null
  return { tag, body: buf.subarray(start, start + len), end: start + len }
}

function children (buf: Buffer): Node[] {
  const out: Node[] = []
  for (let off = 0; off < buf.length;) {
    const n = read(buf, off)
    if (n === null) break
    out.push(n)
    off = n.end
  }
  return out
}

/** The complete LDAPMessages of a reply: operation tag and body. */
export function ldapMessages (reply: Buffer): Array<{ op: number, body: Buffer }> {
  const out: Array<{ op: number, body: Buffer }> = []
  for (let off = 0; off < reply.length;) {
    const m = read(reply, off)
    if (m === null || m.tag !== 0x30) break
    const [id, op] = children(m.body)
    if (id === undefined || id.tag !== 0x02 || op === undefined) break
    out.push({ op: op.tag, body: op.body })
    off = m.end
  }
  return out
}

/** Complete at SearchResultDone or a notice of disconnection. */
export function searchDone (reply: Buffer): boolean {
  return ldapMessages(reply).some((m) => m.op === 0x65 || m.op === 0x78)
}

/** The entries (DN and attributes) and the result code of a search reply; null when no result came. */
export function searchResult (reply: Buffer): { entries: Array<{ dn: string, attrs: Map<string, string[]> }>, code: number } | null {
  const msgs = ldapMessages(reply)
  const done = msgs.find((m) => m.op === 0x65 || m.op === 0x78)
  if (done === undefined) return null
  const [code] = children(done.body)
  const entries = msgs.filter((m) => m.op === 0x64).map((m) => {
    const [dn, list] = children(m.body)
    const attrs = new Map<string, string[]>()
    for (const a of list !== undefined ? children(list.body) : []) {
      const [type, vals] = children(a.body)
      if (type !== undefined && vals !== undefined) attrs.set(type.body.toString('utf8').toLowerCase(), children(vals.body).map((v) => v.body.toString('utf8')))
    }
    return { dn: dn?.body.toString('utf8') ?? '', attrs }
  })
  return { entries, code: code?.tag === 0x0a && code.body.length === 1 ? code.body[0] : -1 }
}

const unbind = Buffer.from([0x30, 0x05, 0x02, 0x01, 0x7f, 0x42, 0x00])

/**
 * Read the root DSE's naming contexts, then search one level under each without binding. Null when the
 * server gave no usable answer; `entries` 0 when every context refused or held nothing readable.
 */
export async function ldapAnonymousRead (c: ProbeIO, wait: () => number): Promise<{ base: string, entries: number, sample: string[] } | null> {
  c.write(searchRequest(1, '', 0, 1, ['namingContexts']))
  const dse = searchResult(await c.read(searchDone, wait()))
  if (dse === null) return null
  const contexts = dse.entries[0]?.attrs.get('namingcontexts') ?? []
  // No naming context published: nothing is there to read anonymously (or the root DSE itself is refused).
  let id = 2
  for (const base of contexts.slice(0, 4)) {
    c.write(searchRequest(id++, base, 1, 3, ['1.1']))
    const r = searchResult(await c.read(searchDone, wait()))
    if (r === null) return null
    if (r.entries.length > 0) {
      c.write(unbind)
      return { base, entries: r.entries.length, sample: r.entries.map((e) => e.dn) }
    }
  }
  c.write(unbind)
  return { base: contexts[0] ?? '', entries: 0, sample: [] }
}
