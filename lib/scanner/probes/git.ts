// Git's own protocol (git daemon, port 9418): the client opens with a pkt-line request
// `git-upload-pack <path>\0host=<host>\0`, here with `version=2` as an extra parameter. A served
// repository answers with its capabilities, whose `agent=git/2.39.5` names the server; a path it
// does not serve gets an `ERR` pkt-line. The probe asks for `/`: it knows no repository name, so
// most daemons only show that they speak the protocol.

import { clean, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [9418]

function pkt (s: string): Buffer {
  const body = Buffer.from(s, 'utf8')
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0'), 'ascii'), body])
}

export function request (host: string): Buffer {
  return pkt(`git-upload-pack /\0host=${host}\0\0version=2\0`)
}

/** The pkt-lines of a reply (flush packets as null), up to the first incomplete one. */
function pktLines (reply: Buffer): Array<string | null> | null {
  const out: Array<string | null> = []
  for (let off = 0; off + 4 <= reply.length;) {
    const hex = reply.subarray(off, off + 4).toString('latin1')
    if (!/^[0-9a-f]{4}$/.test(hex)) return null
    const len = parseInt(hex, 16)
    if (len === 0) { out.push(null); off += 4; continue }
    if (len < 4 || off + len > reply.length) break
    out.push(reply.subarray(off + 4, off + len).toString('utf8').replace(/\n$/, ''))
    off += len
  }
  return out
}

export function complete (reply: Buffer): boolean {
  const ls = pktLines(reply)
  return ls !== null && (ls.includes(null) || ls.some((l) => l?.startsWith('ERR ')))
}

/** Products by the `agent` capability; group 1 is the version. */
const AGENTS: Array<[RegExp, string]> = [
  [/^git\/(\d+(?:\.\d+)*)/, 'Git'],
  [/^JGit\/(\d[\w.-]*)/, 'JGit']
]

export function parse (reply: Buffer): ProbeMatch | null {
  const ls = pktLines(reply)
  if (!ls?.length) return null
  const err = ls.find((l) => l?.startsWith('ERR '))
  if (err) return { service: 'git', extraInfo: err.slice(4, 124) }
  const v2 = ls[0] === 'version 2'
  // Protocol v0/v1: the first ref line carries the capabilities after a NUL.
  const caps = v2 ? ls.slice(1).filter((l): l is string => l !== null) : (ls[0]?.split('\0')[1] ?? '').split(' ')
  if (!v2 && !/^[0-9a-f]{40,64} /.test(ls[0] ?? '')) return null
  const agent = caps.find((c) => c.startsWith('agent='))?.slice(6)
  const known = agent ? AGENTS.find(([re]) => re.test(agent)) : undefined
  return clean({
    service: 'git',
    product: known?.[1],
    version: known && agent ? (known[0].exec(agent) as RegExpExecArray)[1] : undefined,
    extraInfo: agent && !known ? `agent ${agent}` : v2 ? 'protocol v2' : undefined
  })
}

export const probe: ProbeDescriptor = {
  name: 'git',
  ports,
  fallback: 'full',
  request: ({ host }) => request(host),
  complete,
  parse: (reply) => parse(reply),
  products: AGENTS.map(([, p]) => p)
}
