// SSH speaks first: the identification string `SSH-protoversion-softwareversion SP comments`
// (RFC 4253 section 4.2), possibly after other lines, which the RFC allows.

import { clean, distroTag, joinInfo, lines, matchProduct, type ProbeMatch, type ProductSignature } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [22, 2222]

/** Products by the prefix of the software-version field; the rest of the field is the version. */
const PRODUCTS: ProductSignature[] = [
  [/^OpenSSH_([\w.]+)/, 'OpenSSH'],
  [/^dropbear_([\w.]+)/i, 'Dropbear sshd'],
  [/^libssh_([\w.]+)/, 'libssh'],
  [/^libssh2_([\w.]+)/, 'libssh2'],
  [/^Cisco-([\w.]+)/, 'Cisco SSH'],
  [/^ROSSSH()/, 'MikroTik RouterOS sshd'],
  [/^mod_sftp(?:\/([\w.]+))?/, 'ProFTPD mod_sftp'],
  [/^Go()/, 'Golang x/crypto/ssh server'],
  [/^AsyncSSH_([\w.]+)/, 'AsyncSSH'],
  [/^paramiko_([\w.]+)/, 'Paramiko'],
  [/^WeOnlyDo(?:-wodFTPD)?\s?([\d.]+)?/, 'WeOnlyDo sshd'],
  [/^Erlang\/([\w.]+)/, 'Erlang/OTP SSH'],
  [/^SSHD()$/, 'SSHD'],
  [/^(?:Twisted|Conch)_?([\w.]+)?/, 'Twisted Conch sshd']
]

/** True once an identification line has arrived complete. */
export function complete (reply: Buffer): boolean {
  return lines(reply).some((l) => l.startsWith('SSH-'))
}

export function parse (reply: Buffer): ProbeMatch | null {
  const ident = lines(reply).find((l) => l.startsWith('SSH-'))
  if (!ident) return null
  const m = /^SSH-(\d+\.\d+)-(\S+)(?: (.*))?$/.exec(ident)
  if (!m) return { service: 'ssh', extraInfo: 'malformed identification string' }
  const [, proto, software, comment] = m
  const result: ProbeMatch = { service: 'ssh' }
  Object.assign(result, matchProduct(software, PRODUCTS))
  const tag = comment ? distroTag(comment) : undefined
  if (tag) result.distro = tag.distro
  result.extraInfo = joinInfo(comment ? comment.trim() : undefined, `protocol ${proto}`)
  return clean(result)
}

export const probe: ProbeDescriptor = {
  name: 'ssh',
  ports,
  serverFirst: true,
  recognise: parse,
  products: PRODUCTS.map(([, product]) => product)
}
