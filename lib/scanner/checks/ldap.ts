// LDAP anonymous read: the root DSE is meant to be read by anyone (it says what the server supports and
// which naming contexts it holds); the entries under a naming context are not. Without binding, read the
// root DSE's namingContexts, then search one level under each (at most a few entries, no attributes): a
// server that returns entries lets anyone read its directory.

import type { ProbeIO } from '../probes/common'
import { attributesOf, children, complete, ldapMessages, searchRequest } from '../probes/ldap'

/** The entries (DN and attributes) and the result code of a search reply; null when no result came. */
export function searchResult (reply: Buffer): { entries: Array<{ dn: string, attrs: Map<string, string[]> }>, code: number } | null {
  const msgs = ldapMessages(reply)
  const done = msgs.find((m) => m.op === 0x65 || m.op === 0x78)
  if (done === undefined) return null
  const [code] = children(done.body)
  const entries = msgs.filter((m) => m.op === 0x64).map((m) => ({ dn: children(m.body)[0]?.body.toString('utf8') ?? '', attrs: attributesOf(m.body) }))
  return { entries, code: code?.tag === 0x0a && code.body.length === 1 ? code.body[0] : -1 }
}

const unbind = Buffer.from([0x30, 0x05, 0x02, 0x01, 0x7f, 0x42, 0x00])

/**
 * Read the root DSE's naming contexts, then search one level under each without binding. Null when the
 * server gave no usable answer; `entries` 0 when every context refused or held nothing readable.
 */
export async function ldapAnonymousRead (c: ProbeIO, wait: () => number): Promise<{ base: string, entries: number, sample: string[] } | null> {
  c.write(searchRequest(1, '', 0, 1, ['namingContexts'], 5))
  const dse = searchResult(await c.read(complete, wait()))
  if (dse === null) return null
  const contexts = dse.entries[0]?.attrs.get('namingcontexts') ?? []
  // No naming context published: nothing is there to read anonymously (or the root DSE itself is refused).
  let id = 2
  for (const base of contexts.slice(0, 4)) {
    c.write(searchRequest(id++, base, 1, 3, ['1.1'], 5))
    const r = searchResult(await c.read(complete, wait()))
    if (r === null) return null
    if (r.entries.length > 0) {
      c.write(unbind)
      return { base, entries: r.entries.length, sample: r.entries.map((e) => e.dn) }
    }
  }
  c.write(unbind)
  return { base: contexts[0] ?? '', entries: 0, sample: [] }
}
