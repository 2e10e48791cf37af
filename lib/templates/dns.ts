// The `dns` protocol of templates: one question sent to the DNS server found on the scanned port (never to a
// resolver of this machine), over UDP when the port is UDP and over TCP (TLS for DNS over TLS) otherwise, built and
// parsed by dns-packet. The reply becomes the parts Nuclei names: `raw` (also `data`…: the whole reply as dig prints
// it), `question`, `answer`, `ns`, `extra` (one record a line), `rcode` (the number, as Nuclei gives it) and `request`
// (the question as dig prints it). A server that never answers is a miss, never a hit.
//
// The scan target is an address, not a domain name: a question's name is a literal or built from template variables
// and helpers. A name drawn from the target ({{FQDN}}, {{Host}}…) is refused at load, except for PTR, where the
// address is turned into its reverse name (4.3.2.1.in-addr.arpa): the one question such a name can honestly ask.

import dgram from 'node:dgram'
import net from 'node:net'
import { randomInt } from 'node:crypto'
import * as dnsPacket from 'dns-packet'
import { Conn } from '../scanner/conn'
import { openTls } from '../scanner/tls'
import { interpolate, markersOf, parseExpression, usesOf, type Vars } from './dsl'
import { runMatchers, varsOf, KNOWN_PARTS, type Parts } from './match'
import type { Extractor, Matcher } from './types'

export interface DnsRequest {
  protocol: 'dns'
  /** The question's name as written (interpolated when sent). */
  name: string
  /** The record type (A, TXT …). */
  type: string
  /** The class number (1 IN, 3 CH …). */
  qclass: number
  /** The RD flag. */
  recursion: boolean
  /** Further sends over UDP after a try that got no answer. */
  retries: number
  matchersCondition: 'and' | 'or'
  matchers: Matcher[]
  extractors: Extractor[]
}

/** What the loader lends the parser of a `dns` block (its matcher and extractor parsers, its way to refuse). */
export interface DnsLoadHelpers {
  refuse: (reason: string) => never
  matcherOf: (raw: Record<string, unknown>, i: number) => Matcher
  extractorOf: (raw: Record<string, unknown>, i: number) => Extractor
  checkText: (text: string, where: string) => void
}

export const DNS_PARTS = [...KNOWN_PARTS, 'question', 'answer', 'ns', 'extra', 'rcode']

// dns-packet encodes ANY (255) though its types leave it out.
const TYPES = ['A', 'AAAA', 'CNAME', 'NS', 'TXT', 'SOA', 'PTR', 'MX', 'SRV', 'CAA', 'ANY', 'DS', 'TLSA']
const CLASSES: Record<string, number> = { inet: 1, csnet: 2, chaos: 3, hesiod: 4, none: 254, any: 255 }
const CLASS_NAMES: Record<number, string> = { 1: 'IN', 2: 'CS', 3: 'CH', 4: 'HS', 254: 'NONE', 255: 'ANY' }
const KNOWN_DNS = new Set(['name', 'type', 'class', 'recursion', 'retries', 'matchers', 'matchers-condition', 'extractors', 'id'])
/** Variables that stand for the target: here an address, never a name to ask about. */
const TARGET_NAMES = new Set(['fqdn', 'host', 'hostname', 'rdn', 'dn', 'sd', 'tld', 'input', 'baseurl', 'rooturl', 'port'])
const MAX_RETRIES = 5
const TRY_MS = 1500

/** The variables a text uses, through template variables too. */
function namesUsed (text: string, variables: Record<string, string>, seen = new Set<string>()): Set<string> {
  for (const e of markersOf(text)) {
    for (const n of usesOf(parseExpression(e)).names) {
      const lower = n.toLowerCase()
      if (seen.has(lower)) continue
      seen.add(lower)
      const v = Object.entries(variables).find(([k]) => k.toLowerCase() === lower)
      if (v !== undefined) namesUsed(v[1], variables, seen)
    }
  }
  return seen
}

/** One `dns:` item of a template, or a refusal through `h.refuse`. */
export function dnsRequestOf (raw: unknown, i: number, variables: Record<string, string>, h: DnsLoadHelpers): DnsRequest {
  const where = `dns request ${i + 1}`
  if (typeof raw !== 'object' || raw === null) return h.refuse(`${where} must be a mapping`)
  const r = raw as Record<string, unknown>
  for (const k of Object.keys(r)) {
    if (k === 'resolvers') h.refuse(`${where}: resolvers is not supported (the question goes to the scanned DNS server)`)
    if (!KNOWN_DNS.has(k)) h.refuse(`${where}: ${k} is not supported`)
  }
  if (typeof r.name !== 'string' || r.name.trim() === '') return h.refuse(`${where}: name is missing`)
  const name = r.name.trim()
  h.checkText(name, where)
  const type = String(r.type ?? 'A').toUpperCase()
  if (type === 'AXFR') h.refuse(`${where}: type AXFR is not supported (a zone transfer is many messages over TCP for a zone the template cannot name here)`)
  if (!TYPES.includes(type)) h.refuse(`${where}: type ${JSON.stringify(r.type)} is not supported (one of ${TYPES.join(', ')})`)
  const cls = String(r.class ?? 'inet').toLowerCase()
  if (CLASSES[cls] === undefined) h.refuse(`${where}: class ${JSON.stringify(r.class)} is not one of ${Object.keys(CLASSES).join(', ')}`)
  const target = [...namesUsed(name, variables)].filter((n) => TARGET_NAMES.has(n))
  if (target.length > 0 && type !== 'PTR') {
    h.refuse(`${where}: name ${JSON.stringify(name)} is drawn from the target, which here is an address, not a domain name (give a literal name; only PTR turns the address into its reverse name)`)
  }
  if (r.recursion !== undefined && typeof r.recursion !== 'boolean') h.refuse(`${where}: recursion must be true or false`)
  const retries = r.retries === undefined ? 1 : Number(r.retries)
  if (!Number.isInteger(retries) || retries < 0 || retries > MAX_RETRIES) h.refuse(`${where}: retries must be 0-${MAX_RETRIES}`)
  const matchers = (Array.isArray(r.matchers) ? r.matchers : []).map((m, j) => h.matcherOf(m as Record<string, unknown>, j))
  const extractors = (Array.isArray(r.extractors) ? r.extractors : []).map((e, j) => h.extractorOf(e as Record<string, unknown>, j))
  if (matchers.length === 0 && extractors.filter((e) => !e.internal).length === 0) h.refuse(`${where}: no matchers and no extractors: it could report nothing`)
  for (const x of [...matchers, ...extractors]) if (!DNS_PARTS.includes(x.part)) h.refuse(`part ${JSON.stringify(x.part)} does not exist in a dns exchange (${DNS_PARTS.join(', ')})`)
  const req: DnsRequest = {
    protocol: 'dns',
    name,
    type,
    qclass: CLASSES[cls],
    recursion: r.recursion !== false,
    retries,
    matchersCondition: r['matchers-condition'] === 'and' ? 'and' : 'or',
    matchers,
    extractors
  }
  const empty: Parts = Object.fromEntries(['data', ...DNS_PARTS].map((p) => [p, '']))
  if (matchers.length > 0 && runMatchers(matchers, req.matchersCondition, empty, varsOf(empty, { Hostname: '', Host: '', Port: '' })).ok) {
    h.refuse(`${where}: its matchers match an empty or absent reply (negative-only, size 0 or a dsl true on nothing)`)
  }
  return req
}

export function isDnsRequest (req: object): req is DnsRequest {
  return (req as { protocol?: unknown }).protocol === 'dns'
}

/** `4.3.2.1.in-addr.arpa` / the nibbles of an IPv6 address under ip6.arpa. */
export function reverseName (address: string): string {
  if (net.isIPv4(address)) return `${address.split('.').reverse().join('.')}.in-addr.arpa`
  const groups = address.split('::')
  const head = groups[0] === '' ? [] : groups[0].split(':')
  const tail = groups.length > 1 && groups[1] !== '' ? groups[1].split(':') : []
  const all = [...head, ...new Array(8 - head.length - tail.length).fill('0'), ...tail]
  return `${all.map((g) => g.padStart(4, '0')).join('').split('').reverse().join('.')}.ip6.arpa`
}

function fqdn (name: string): string {
  return name.endsWith('.') ? name : `${name}.`
}

function quoted (b: Buffer | string): string {
  return `"${Buffer.from(b).toString('latin1').replace(/["\\]/g, (c) => `\\${c}`).replace(/[^\x20-\x7e]/g, (c) => `\\${String(c.charCodeAt(0)).padStart(3, '0')}`)}"`
}

/** The record data as dig prints it; RFC 3597's generic form for what has no text form here. */
function rdataText (a: dnsPacket.Answer): string {
  const d = (a as { data?: unknown }).data
  switch (a.type) {
    case 'A': case 'AAAA': return String(d)
    case 'CNAME': case 'NS': case 'PTR': case 'DNAME': return fqdn(String(d))
    case 'TXT': return (Array.isArray(d) ? d : [d as Buffer | string]).map(quoted).join(' ')
    case 'MX': return `${a.data.preference} ${fqdn(a.data.exchange)}`
    case 'SRV': return `${a.data.priority ?? 0} ${a.data.weight ?? 0} ${a.data.port} ${fqdn(a.data.target)}`
    case 'SOA': return `${fqdn(a.data.mname)} ${fqdn(a.data.rname)} ${a.data.serial ?? 0} ${a.data.refresh ?? 0} ${a.data.retry ?? 0} ${a.data.expire ?? 0} ${a.data.minimum ?? 0}`
    case 'CAA': return `${a.data.flags ?? 0} ${a.data.tag} ${quoted(a.data.value)}`
    default: {
      const b = Buffer.isBuffer(d) ? d : Buffer.alloc(0)
      return `\\# ${b.length}${b.length > 0 ? ' ' + b.toString('hex') : ''}`
    }
  }
}

function recordText (a: dnsPacket.Answer): string {
  const ttl = (a as { ttl?: number }).ttl ?? 0
  const cls = (a as { class?: string }).class ?? 'IN'
  return `${fqdn(a.name)}\t${ttl}\t${cls}\t${a.type}\t${rdataText(a)}`
}

function section (records: dnsPacket.Answer[] | undefined): string {
  return (records ?? []).filter((a) => a.type !== 'OPT').map(recordText).join('\n')
}

const FLAG_BITS: Array<[number, string]> = [[0x8000, 'qr'], [0x0400, 'aa'], [0x0200, 'tc'], [0x0100, 'rd'], [0x0080, 'ra'], [0x0020, 'ad'], [0x0010, 'cd']]
const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED', 'YXDOMAIN', 'YXRRSET', 'NXRRSET', 'NOTAUTH', 'NOTZONE']

/** A message as dig prints it (header, flags, then each section that has records). */
export function digText (msg: Buffer, p: dnsPacket.DecodedPacket): string {
  const flags = msg.readUInt16BE(2)
  const rcode = flags & 0xf
  const q = questionText(msg, p)
  const counts = [4, 6, 8, 10].map((o) => msg.readUInt16BE(o))
  const lines = [
    `;; ->>HEADER<<- opcode: QUERY, status: ${RCODE_NAMES[rcode] ?? String(rcode)}, id: ${msg.readUInt16BE(0)}`,
    `;; flags:${FLAG_BITS.filter(([b]) => (flags & b) !== 0).map(([, n]) => ` ${n}`).join('')}; QUERY: ${counts[0]}, ANSWER: ${counts[1]}, AUTHORITY: ${counts[2]}, ADDITIONAL: ${counts[3]}`
  ]
  if (q !== '') lines.push('', ';; QUESTION SECTION:', q)
  for (const [title, recs] of [['ANSWER', p.answers], ['AUTHORITY', p.authorities], ['ADDITIONAL', p.additionals]] as const) {
    const text = section(recs)
    if (text !== '') lines.push('', `;; ${title} SECTION:`, text)
  }
  return lines.join('\n') + '\n'
}

/** The question section; its class read from the bytes, since dns-packet names only IN, CS, CH, HS and ANY. */
function questionText (msg: Buffer, p: dnsPacket.DecodedPacket): string {
  let off = 12
  for (let hops = 0; hops < 128 && off < msg.length; hops++) {
    const len = msg[off]
    if (len === 0 || (len & 0xc0) === 0xc0) {
      off += len === 0 ? 3 : 4
      break
    }
    off += 1 + len
  }
  const cls = off + 2 <= msg.length ? CLASS_NAMES[msg.readUInt16BE(off)] : undefined
  return (p.questions ?? []).map((x) => `;${fqdn(x.name)}\t\t${cls ?? x.class}\t${x.type}`).join('\n')
}

/** The query's bytes (no TCP length); dns-packet knows classes IN, CS, CH, HS and ANY only, so the class is set here. */
export function queryBytes (id: number, name: string, type: string, qclass: number, recursion: boolean): Buffer {
  const buf = dnsPacket.encode({ type: 'query', id, flags: recursion ? dnsPacket.RECURSION_DESIRED : 0, questions: [{ type: type as dnsPacket.RecordType, name: name.replace(/\.$/, ''), class: 'IN' }] })
  buf.writeUInt16BE(qclass, buf.length - 2)
  return buf
}

export interface DnsCtx {
  host: string
  port: number
  udp: boolean
  secure: boolean
  signal: AbortSignal
  remaining: (cap: number) => number
}

/** A reply to query `id`, or undefined when the bytes are none (another id, a query, not DNS at all). */
function replyOf (msg: Buffer, id: number): dnsPacket.DecodedPacket | undefined {
  if (msg.length < 12 || msg.readUInt16BE(0) !== id || (msg[2] & 0x80) === 0) return undefined
  try {
    return dnsPacket.decode(msg)
  } catch {
    return undefined
  }
}

type Got = { msg: Buffer, packet: dnsPacket.DecodedPacket } | 'silent' | null

async function overUdp (ctx: DnsCtx, query: Buffer, id: number, tries: number): Promise<Got> {
  const sock = dgram.createSocket(net.isIPv6(ctx.host) ? 'udp6' : 'udp4')
  try {
    return await new Promise<Got>((resolve) => {
      let timer: NodeJS.Timeout | undefined
      let left = tries
      const done = (g: Got): void => {
        clearTimeout(timer)
        ctx.signal.removeEventListener('abort', onAbort)
        resolve(g)
      }
      const onAbort = (): void => done(null)
      const send = (): void => {
        if (left-- <= 0 || ctx.remaining(TRY_MS) === 0) return done('silent')
        sock.send(query)
        timer = setTimeout(send, ctx.remaining(TRY_MS))
      }
      sock.on('error', () => done(null))
      // Connected: the kernel drops datagrams from any other address and port.
      sock.on('message', (msg) => {
        const packet = replyOf(msg, id)
        if (packet !== undefined) done({ msg, packet })
      })
      ctx.signal.addEventListener('abort', onAbort, { once: true })
      sock.connect(ctx.port, ctx.host, send)
    })
  } finally {
    sock.close()
  }
}

async function overTcp (ctx: DnsCtx, query: Buffer, id: number): Promise<Got> {
  let c: Conn | null
  if (ctx.secure) {
    const s = await openTls({ host: ctx.host, port: ctx.port, timeoutMs: ctx.remaining(TRY_MS * 2), signal: ctx.signal })
    c = s === null ? null : new Conn(s.socket, ctx.signal)
  } else {
    c = await Conn.open(ctx.host, ctx.port, ctx.remaining(TRY_MS), ctx.signal)
  }
  if (c === null) return null
  try {
    const len = Buffer.alloc(2)
    len.writeUInt16BE(query.length)
    c.write(Buffer.concat([len, query]))
    const got = await c.read((b) => b.length >= 2 && b.length >= 2 + b.readUInt16BE(0), ctx.remaining(TRY_MS * 2))
    if (got.length < 2 || got.length < 2 + got.readUInt16BE(0)) return 'silent'
    const msg = got.subarray(2, 2 + got.readUInt16BE(0))
    const packet = replyOf(msg, id)
    return packet === undefined ? 'silent' : { msg, packet }
  } finally {
    c.close()
  }
}

/**
 * One question and its reply as parts; 'silent' when the server gave no reply to it (a miss), null when the port
 * could not be reached or the budget ran out (no verdict).
 */
export async function dnsExchange (ctx: DnsCtx, req: DnsRequest, vars: Vars): Promise<Parts | 'silent' | null> {
  let name = interpolate(req.name, vars)
  if (req.type === 'PTR' && net.isIP(name) !== 0) name = reverseName(name)
  const id = randomInt(1, 0xffff)
  const query = queryBytes(id, name, req.type, req.qclass, req.recursion)
  let got: Got = 'silent'
  if (ctx.udp) {
    got = await overUdp(ctx, query, id, req.retries + 1)
    // Truncated: the whole reply is only to be had over TCP (RFC 7766).
    if (got !== null && got !== 'silent' && (got.msg.readUInt16BE(2) & 0x0200) !== 0) got = await overTcp(ctx, query, id)
  } else {
    // TCP delivers or fails on its own: asking again on a new connection would only spend the port's budget.
    got = await overTcp(ctx, query, id)
  }
  if (ctx.signal.aborted || got === null) return null
  if (got === 'silent') return 'silent'
  const { msg, packet } = got
  const raw = digText(msg, packet)
  return {
    data: raw,
    request: digText(query, dnsPacket.decode(query)),
    question: questionText(msg, packet),
    answer: section(packet.answers),
    ns: section(packet.authorities),
    extra: section(packet.additionals),
    rcode: String(msg.readUInt16BE(2) & 0xf)
  }
}
