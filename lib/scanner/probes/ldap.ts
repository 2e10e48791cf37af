// LDAP (RFC 4511): an anonymous base-scope search of the root DSE, which servers answer before any
// bind. `vendorName`/`vendorVersion` (RFC 3045) name the product where the server publishes them;
// OpenLDAP publishes neither but marks its root DSE with `objectClass: OpenLDAProotDSE`; Active
// Directory shows itself by its functionality-level attributes. A server that wants a bind first
// still answers with an LDAP result, so the service is known even then.

import { clean, joinInfo, type ProbeMatch } from './common'
import type { ProbeDescriptor } from './descriptor'

export const ports = [389, 3268]

export const tlsPorts = [636, 3269]

/** Root DSE attributes asked for: the identity ones, then every operational one ("+"). */
const ATTRIBUTES = ['vendorName', 'vendorVersion', 'objectClass', 'supportedLDAPVersion', 'namingContexts',
  'domainControllerFunctionality', 'forestFunctionality', 'dnsHostName', '+']

function tlv (tag: number, body: Buffer): Buffer {
  const n = body.length
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff])
  return Buffer.concat([Buffer.from([tag]), len, body])
}

const octets = (s: string, tag = 0x04): Buffer => tlv(tag, Buffer.from(s, 'utf8'))
const int = (n: number, tag = 0x02): Buffer => tlv(tag, Buffer.from([n]))

/**
 * SearchRequest: `base`, scope (0 base, 1 one level), filter (objectClass=*), size and time limits, attributes.
 * The probe asks for the root DSE; the anonymous-read check (../checks/ldap.ts) searches under naming contexts.
 */
export function searchRequest (messageId: number, base: string, scope: 0 | 1, sizeLimit: number, attributes: string[], timeLimit = 0): Buffer {
  const search = Buffer.concat([
    octets(base), int(scope, 0x0a), int(0, 0x0a), int(sizeLimit), int(timeLimit), tlv(0x01, Buffer.from([0])),
    octets('objectClass', 0x87),
    tlv(0x30, Buffer.concat(attributes.map((a) => octets(a))))
  ])
  return tlv(0x30, Buffer.concat([int(messageId), tlv(0x63, search)]))
}

/** SearchRequest for the root DSE: base "", scope base, filter (objectClass=*). */
export function rootDseRequest (messageId = 1): Buffer {
  return searchRequest(messageId, '', 0, 0, ATTRIBUTES)
}

export interface Node { tag: number, body: Buffer, end: number }

/** One BER TLV at `off` (definite lengths only); null when incomplete or malformed. */
function read (buf: Buffer, off: number): Node | null {
  if (off + 2 > buf.length) return null
  const tag = buf[off]
  let len = buf[off + 1]
  let start = off + 2
  if (len & 0x80) {
    const n = len & 0x7f
    if (n === 0 || n > 4 || start + n > buf.length) return null
    len = 0
    for (let i = 0; i < n; i++) len = len * 256 + buf[start + i]
    start += n
  }
  if (start + len > buf.length) return null
  return { tag, body: buf.subarray(start, start + len), end: start + len }
}

/** The TLVs one after another in `buf` (a constructed value's body), up to the first incomplete one. */
export function children (buf: Buffer): Node[] {
  const out: Node[] = []
  for (let off = 0; off < buf.length;) {
    const n = read(buf, off)
    if (!n) break
    out.push(n)
    off = n.end
  }
  return out
}

export interface LdapMessage { op: number, body: Buffer }

/** The complete LDAPMessages at the start of a reply: operation tag and body. */
export function ldapMessages (reply: Buffer): LdapMessage[] {
  const out: LdapMessage[] = []
  for (let off = 0; off < reply.length;) {
    const m = read(reply, off)
    if (!m || m.tag !== 0x30) break
    const [id, op] = children(m.body)
    if (!id || id.tag !== 0x02 || !op) break
    out.push({ op: op.tag, body: op.body })
    off = m.end
  }
  return out
}

/** Complete at SearchResultDone (or any response that ends the exchange, such as a notice of disconnection). */
export function complete (reply: Buffer): boolean {
  return ldapMessages(reply).some((m) => m.op === 0x65 || m.op === 0x78)
}

const RESULT_CODES: Record<number, string> = {
  1: 'operationsError', 2: 'protocolError', 8: 'strongerAuthRequired', 13: 'confidentialityRequired',
  48: 'inappropriateAuthentication', 49: 'invalidCredentials', 50: 'insufficientAccessRights', 53: 'unwillingToPerform'
}

/** Products by `vendorVersion`; group 1 is the version. */
const VENDOR_VERSIONS: Array<[RegExp, string]> = [
  [/^389-Directory\/(\d[\w.]*)/, '389 Directory Server'],
  [/^OpenDJ (\d[\w.]*)/, 'OpenDJ'],
  [/^ForgeRock Directory Services (\d[\w.]*)/, 'ForgeRock Directory Services'],
  [/^LDAP Agent for (?:Novell|NetIQ) eDirectory (\d[\w.]*)/, 'NetIQ eDirectory']
]

export const products = ['OpenLDAP', 'ApacheDS', 'Microsoft Active Directory', ...VENDOR_VERSIONS.map(([, p]) => p)]

/** A SearchResultEntry's attributes by lower-case type. */
export function attributesOf (entry: Buffer): Map<string, string[]> {
  const attrs = new Map<string, string[]>()
  const [, list] = children(entry)
  if (!list || list.tag !== 0x30) return attrs
  for (const a of children(list.body)) {
    const [type, vals] = children(a.body)
    if (!type || !vals) continue
    attrs.set(type.body.toString('utf8').toLowerCase(), children(vals.body).map((v) => v.body.toString('utf8')))
  }
  return attrs
}

export function parse (reply: Buffer): ProbeMatch | null {
  const msgs = ldapMessages(reply)
  if (!msgs.length || !msgs.some((m) => m.op === 0x64 || m.op === 0x65 || m.op === 0x78)) return null
  const entry = msgs.find((m) => m.op === 0x64)
  if (!entry) {
    const done = msgs.find((m) => m.op === 0x65 || m.op === 0x78)
    const [code] = done ? children(done.body) : []
    const rc = code?.tag === 0x0a && code.body.length === 1 ? code.body[0] : undefined
    return clean({ service: 'ldap', extraInfo: rc ? `root DSE refused: ${RESULT_CODES[rc] ?? `result ${rc}`}` : undefined })
  }
  const attrs = attributesOf(entry.body)
  const one = (k: string): string | undefined => attrs.get(k.toLowerCase())?.[0]
  const vendorName = one('vendorName')
  const vendorVersion = one('vendorVersion')
  const classes = attrs.get('objectclass') ?? []
  const result: ProbeMatch = { service: 'ldap' }
  const known = vendorVersion ? VENDOR_VERSIONS.find(([re]) => re.test(vendorVersion)) : undefined
  if (known && vendorVersion) {
    result.product = known[1]
    result.version = (known[0].exec(vendorVersion) as RegExpExecArray)[1]
  } else if (classes.includes('OpenLDAProotDSE')) {
    result.product = 'OpenLDAP'
  } else if (vendorName === 'Apache Software Foundation') {
    result.product = 'ApacheDS'
    if (vendorVersion && /^\d/.test(vendorVersion)) result.version = vendorVersion
  } else if (attrs.has('domaincontrollerfunctionality') || attrs.has('forestfunctionality')) {
    result.product = 'Microsoft Active Directory'
  }
  const versions = attrs.get('supportedldapversion')
  const contexts = attrs.get('namingcontexts')
  result.extraInfo = joinInfo(
    !result.product && vendorName ? `vendor ${vendorName}${vendorVersion ? ' ' + vendorVersion : ''}` : undefined,
    versions?.length ? `LDAPv${versions.join(', v')}` : undefined,
    contexts?.length ? `naming contexts ${contexts.slice(0, 4).join('; ')}` : undefined,
    one('dnsHostName') && `host ${one('dnsHostName')}`)
  return clean(result)
}

export const probe: ProbeDescriptor = {
  name: 'ldap',
  ports,
  tlsPorts,
  fallback: 'full',
  recognise: (reply) => parse(reply),
  request: () => rootDseRequest(),
  complete,
  parse: (reply) => parse(reply),
  products
}
