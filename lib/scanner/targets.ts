// Scan targets: validation (the API's 400s), scope (allow/deny lists of CIDRs) and expansion into
// host addresses. Address arithmetic is done on BigInts so IPv4 and IPv6 share one code path.

import { createHash } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import type { Target } from './types'
import { normalizeAddress, parseIpLiteral } from '../addresses'

export interface ExpandedHost {
  address: string
  hostnames: string[]
}

export interface ExcludedAddress {
  address: string
  reason: string
}

interface Block {
  text: string
  family: 4 | 6
  start: bigint
  end: bigint
}

type Addr = ipaddr.IPv4 | ipaddr.IPv6

const MAX_TARGET_LENGTH = 300

function familyOf (a: Addr): 4 | 6 {
  return a.kind() === 'ipv4' ? 4 : 6
}

/** Parse an IP literal; IPv4-mapped IPv6 addresses become IPv4 (that is where the packets go). */
function parseAddress (text: string): Addr | null {
  if (isIP(text) === 0) return null
  try {
    const a = parseIpLiteral(text)
    if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress()) return (a as ipaddr.IPv6).toIPv4Address()
    return a
  } catch {
    return null
  }
}

function toBigInt (a: Addr): bigint {
  let n = 0n
  for (const b of a.toByteArray()) n = (n << 8n) | BigInt(b)
  return n
}

function fromBigInt (n: bigint, family: 4 | 6): string {
  const len = family === 4 ? 4 : 16
  const bytes = new Array<number>(len)
  for (let i = len - 1; i >= 0; i--) {
    bytes[i] = Number(n & 0xffn)
    n >>= 8n
  }
  return ipaddr.fromByteArray(bytes).toString()
}

function canonical (a: Addr): string {
  return a.toString()
}

interface Span {
  family: 4 | 6
  start: bigint
  end: bigint
  /** How the target names its block in messages, e.g. "cidr /8" or "range". */
  label: string
}

function invalidAddress (text: string): string {
  return `'${text}' is not a valid IPv4 or IPv6 address`
}

// ::/96 less :: and ::1: the deprecated IPv4-compatible addresses (RFC 4291 2.5.5.1). Stacks read them
// differently (some as the IPv4 address, some as IPv6), so a target naming one is refused.
const V4_COMPATIBLE_END = (1n << 32n) - 1n

function deprecatedSpan (span: Span): boolean {
  return span.family === 6 && span.start <= V4_COMPATIBLE_END && span.end >= 2n
}

/** The address span a literal target covers, or an error message. */
function spanOf (target: Target): Span | string {
  const span = literalSpan(target)
  if (typeof span !== 'string' && deprecatedSpan(span)) {
    return `'${target.value}' is or covers a deprecated IPv4-compatible IPv6 address (::a.b.c.d); use the IPv4 address or ::ffff:a.b.c.d`
  }
  return span
}

function literalSpan (target: Target): Span | string {
  const value = target.value
  if (target.type === 'single_ip') {
    const a = parseAddress(value)
    if (a === null) return invalidAddress(value)
    const n = toBigInt(a)
    return { family: familyOf(a), start: n, end: n, label: 'address' }
  }
  if (target.type === 'ip_range') {
    const parts = value.split('-')
    if (parts.length !== 2) return `'${value}' is not a range of the form a.b.c.d-a.b.c.e`
    const [s, e] = parts.map((p) => p.trim())
    const a = parseAddress(s)
    if (a === null) return invalidAddress(s)
    const b = parseAddress(e)
    if (b === null) return invalidAddress(e)
    if (familyOf(a) !== familyOf(b)) return `range start ${canonical(a)} and end ${canonical(b)} are not of the same address family`
    const start = toBigInt(a)
    const end = toBigInt(b)
    if (start > end) return `range start ${canonical(a)} is after end ${canonical(b)}`
    return { family: familyOf(a), start, end, label: 'range' }
  }
  if (target.type === 'cidr') {
    const slash = value.indexOf('/')
    if (slash < 0) return `'${value}' is not a CIDR block (address/prefix)`
    const addrText = value.slice(0, slash)
    const prefixText = value.slice(slash + 1)
    const a = parseAddress(addrText)
    if (a === null) return invalidAddress(addrText)
    // A mapped IPv6 block was turned into IPv4 above; its prefix counts from the IPv4 part.
    const bits = familyOf(a) === 4 ? 32 : 128
    const offset = isIP(addrText) === 6 && familyOf(a) === 4 ? 96 : 0
    if (!/^\d{1,3}$/.test(prefixText)) return `'${prefixText}' is not a prefix length`
    const prefix = Number(prefixText) - offset
    if (prefix < 0 || prefix > bits) return `prefix /${prefixText} is out of range for ${familyOf(a) === 4 ? 'IPv4' : 'IPv6'}`
    const size = 1n << BigInt(bits - prefix)
    const start = toBigInt(a) & ~(size - 1n)
    return { family: familyOf(a), start, end: start + size - 1n, label: `cidr /${prefixText}` }
  }
  return `unknown target type '${String(target.type)}'`
}

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i

/** RFC 1123 host name check; a trailing dot is allowed, an all-numeric last label is not. */
export function isHostName (name: string): boolean {
  const n = name.endsWith('.') ? name.slice(0, -1) : name
  if (n.length === 0 || n.length > 253) return false
  const labels = n.split('.')
  if (!labels.every((l) => LABEL.test(l))) return false
  return !/^\d+$/.test(labels[labels.length - 1])
}

/**
 * Check one target without side effects (no DNS). Returns a message naming the problem, or null.
 * The caller prefixes where the target sits (e.g. `targets[0].value: `).
 */
export function validateTarget (target: Target, opts: { maxHosts: number }): string | null {
  if (typeof target?.value !== 'string') return 'the target value must be a string'
  if (target.value.length === 0) return 'the target value is empty'
  if (target.value.length > MAX_TARGET_LENGTH) return `the target value is longer than ${MAX_TARGET_LENGTH} characters`
  if (target.type === 'dns_name') {
    if (isIP(target.value) !== 0) return `'${target.value}' is an IP address, not a host name (use type single_ip)`
    return isHostName(target.value) ? null : `'${target.value}' is not a valid host name`
  }
  const span = spanOf(target)
  if (typeof span === 'string') return span
  const count = span.end - span.start + 1n
  if (count > BigInt(opts.maxHosts)) {
    return `${span.label} covers ${count} hosts, more than the limit of ${opts.maxHosts}`
  }
  return null
}

/** Disjoint, sorted address intervals of one family; adding a span returns the part not covered before. */
class Coverage {
  private readonly spans: { start: bigint, end: bigint }[] = []

  /** Cover [start, end] and return the sub-intervals that were not covered yet, in address order. */
  add (start: bigint, end: bigint): { start: bigint, end: bigint }[] {
    const fresh: { start: bigint, end: bigint }[] = []
    let cursor = start
    for (const s of this.spans) {
      if (s.end < cursor) continue
      if (s.start > end) break
      if (s.start > cursor) fresh.push({ start: cursor, end: s.start - 1n })
      cursor = s.end + 1n
      if (cursor > end) break
    }
    if (cursor <= end) fresh.push({ start: cursor, end })
    this.spans.push({ start, end })
    this.spans.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0))
    const merged: { start: bigint, end: bigint }[] = []
    for (const s of this.spans) {
      const last = merged[merged.length - 1]
      if (last !== undefined && s.start <= last.end + 1n) { if (s.end > last.end) last.end = s.end } else merged.push({ ...s })
    }
    this.spans.splice(0, this.spans.length, ...merged)
    return fresh
  }
}

/**
 * How many hosts the targets name, overlaps and duplicates counted once, without expanding anything: the union
 * of the literal spans per address family, plus one per distinct host name (it resolves to at least one
 * address; the worker checks the cap again once it has). Invalid targets count nothing (validateTarget says why).
 */
export function countHosts (targets: Target[]): bigint {
  const coverage = { 4: new Coverage(), 6: new Coverage() }
  const names = new Set<string>()
  let total = 0n
  for (const t of targets) {
    if (t.type === 'dns_name') {
      names.add(t.value.toLowerCase().replace(/\.$/, ''))
      continue
    }
    const span = spanOf(t)
    if (typeof span === 'string') continue
    for (const f of coverage[span.family].add(span.start, span.end)) total += f.end - f.start + 1n
  }
  return total + BigInt(names.size)
}

// Addresses expanded between two turns of the event loop, so that a big scan never holds up the process.
const EXPAND_CHUNK = 256

function splitList (list: string | string[]): string[] {
  const items = Array.isArray(list) ? list : [list]
  return items.flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '')
}

function parseBlock (text: string): Block {
  const target: Target = text.includes('/') ? { type: 'cidr', value: text } : { type: 'single_ip', value: text }
  // Scope entries are blocks, not scan targets: '::/0' in a deny list must stay possible.
  const span = literalSpan(target)
  if (typeof span === 'string') throw new Error(`scope entry '${text}': ${span}`)
  return { text, family: span.family, start: span.start, end: span.end }
}

/** Where scanning is allowed: an allow list (empty: everything) minus a deny list that always wins. */
export class Scope {
  readonly allow: readonly string[]
  readonly deny: readonly string[]
  private readonly allowBlocks: Block[]
  private readonly denyBlocks: Block[]
  private readonly allowList = new BlockList()
  private readonly denyList = new BlockList()

  constructor (allowBlocks: Block[], denyBlocks: Block[]) {
    this.allowBlocks = allowBlocks
    this.denyBlocks = denyBlocks
    this.allow = allowBlocks.map((b) => b.text)
    this.deny = denyBlocks.map((b) => b.text)
    for (const [blocks, list] of [[allowBlocks, this.allowList], [denyBlocks, this.denyList]] as const) {
      for (const b of blocks) {
        const prefix = (b.family === 4 ? 32 : 128) - (b.end - b.start + 1n).toString(2).length + 1
        list.addSubnet(fromBigInt(b.start, b.family), prefix, b.family === 4 ? 'ipv4' : 'ipv6')
      }
    }
  }

  allows (address: string): boolean {
    return this.refusal(address) === null
  }

  /** Why `address` may not be scanned, or null when it may. */
  refusal (address: string): string | null {
    const a = parseAddress(address)
    if (a === null) return invalidAddress(address)
    // Scope is about addresses, so an IPv6 zone (fe80::1%eth0) plays no part in the check.
    const text = fromBigInt(toBigInt(a), familyOf(a))
    const family = familyOf(a) === 4 ? 'ipv4' : 'ipv6'
    if (this.denyList.check(text, family)) {
      const n = toBigInt(a)
      const block = this.denyBlocks.find((b) => b.family === familyOf(a) && b.start <= n && n <= b.end)
      return `${text} is in the denied block ${block?.text ?? ''}`.trimEnd()
    }
    if (this.allowBlocks.length > 0 && !this.allowList.check(text, family)) return `${text} is outside the allowed scope`
    return null
  }

  /** Why a literal span may not be scanned: the denied block it touches or where it leaves the allow list. */
  spanRefusal (span: Span, what: string): string | null {
    const single = span.start === span.end
    for (const d of this.denyBlocks) {
      if (d.family === span.family && d.start <= span.end && span.start <= d.end) {
        return single ? `${what} is in the denied block ${d.text}` : `${what} overlaps the denied block ${d.text}`
      }
    }
    if (this.allowBlocks.length === 0) return null
    // Walk the span across the allow blocks in address order; the first address not covered is named.
    const allowed = this.allowBlocks.filter((b) => b.family === span.family)
      .sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0))
    let cursor = span.start
    for (const b of allowed) {
      if (b.start > cursor) break
      if (b.end >= cursor) cursor = b.end + 1n
      if (cursor > span.end) return null
    }
    return single ? `${what} is outside the allowed scope` : `${what} leaves the allowed scope at ${fromBigInt(cursor, span.family)}`
  }
}

/**
 * Build a scope from allow and deny lists (comma-separated CIDRs or single addresses). An empty allow
 * list allows everything; a denied block always wins. Throws on a malformed entry.
 */
export function parseScope (allow: string | string[], deny: string | string[]): Scope {
  return new Scope(splitList(allow).map(parseBlock), splitList(deny).map(parseBlock))
}

/** A scope entry (CIDR or address) as its network: family, first and last address, prefix length. */
export interface Network {
  family: 4 | 6
  start: bigint
  end: bigint
  prefix: number
  /** The network in canonical CIDR text, e.g. `10.1.0.0/16` (an IPv4-mapped entry reads as IPv4). */
  cidr: string
}

function networkOf (b: Block): Network {
  const bits = b.family === 4 ? 32 : 128
  const prefix = bits - (b.end - b.start + 1n).toString(2).length + 1
  return { family: b.family, start: b.start, end: b.end, prefix, cidr: `${fromBigInt(b.start, b.family)}/${prefix}` }
}

/** The networks of a scope list (CIDRs or single addresses). Throws on a malformed entry, as parseScope does. */
export function scopeNetworks (entries: readonly string[]): Network[] {
  return splitList([...entries]).map((e) => networkOf(parseBlock(e)))
}

/**
 * The addresses both scope lists allow, as a scope list: each pair of networks that overlap gives the narrower (two
 * CIDR blocks either nest or are disjoint). An empty list is no restriction, so the intersection with it is the
 * other list; two lists that share no address give null.
 */
export function intersectScopes (a: readonly string[], b: readonly string[]): string[] | null {
  if (a.length === 0) return [...b]
  if (b.length === 0) return [...a]
  const out = new Set<string>()
  for (const x of scopeNetworks(a)) {
    for (const y of scopeNetworks(b)) {
      if (x.family !== y.family || x.end < y.start || y.end < x.start) continue
      out.add(x.prefix >= y.prefix ? x.cidr : y.cidr)
    }
  }
  return out.size === 0 ? null : [...out]
}

/** Whether every address of the literal targets (single_ip, ip_range, cidr) lies in `scope`; false for a host name. */
export function targetsWithin (targets: readonly Target[], scope: Scope): boolean {
  return targets.every((t) => t.type !== 'dns_name' && scopeError(t, scope) === null)
}

/** Whether every address of the scope list `inner` lies in `scope`. */
export function networksWithin (inner: readonly string[], scope: Scope): boolean {
  return scopeNetworks(inner).every((n) => scope.spanRefusal({ family: n.family, start: n.start, end: n.end, label: 'cidr' }, n.cidr) === null)
}

/**
 * For literal targets (single_ip, ip_range, cidr): why the target may not be scanned under `scope`,
 * naming the denied block it touches or the part that leaves the allow list; null when it may.
 * Host names are checked after resolution (expandTargets).
 */
export function scopeError (target: Target, scope: Scope): string | null {
  if (target.type === 'dns_name') return null
  const span = spanOf(target)
  if (typeof span === 'string') return span
  const what = span.start === span.end ? fromBigInt(span.start, span.family) : target.value
  return scope.spanRefusal(span, what)
}

async function defaultResolve (name: string): Promise<string[]> {
  const records = await lookup(name, { all: true, verbatim: true })
  return records.map((r) => r.address)
}

/**
 * Expand targets into hosts: one entry per address (host names merged), in first-seen order.
 * Addresses outside the scope are listed in `excluded`, not scanned. Throws an Error when a target is
 * invalid, when a name does not resolve, or when more than `maxHosts` addresses remain.
 */
export async function expandTargets (
  targets: Target[],
  opts: { maxHosts: number, scope: Scope, resolve?: (name: string) => Promise<string[]> }
): Promise<{ hosts: ExpandedHost[], excluded: ExcludedAddress[] }> {
  const resolve = opts.resolve ?? defaultResolve
  const hosts = new Map<string, ExpandedHost>()
  const excluded = new Map<string, ExcludedAddress>()
  const add = (address: string, hostname?: string): void => {
    const reason = opts.scope.refusal(address)
    if (reason !== null) {
      if (!excluded.has(address)) excluded.set(address, { address, reason })
      return
    }
    let h = hosts.get(address)
    if (h === undefined) {
      if (hosts.size >= opts.maxHosts) {
        throw new Error(`the targets expand to more than the limit of ${opts.maxHosts} hosts`)
      }
      h = { address, hostnames: [] }
      hosts.set(address, h)
    }
    if (hostname !== undefined && !h.hostnames.includes(hostname)) h.hostnames.push(hostname)
  }

  const coverage = { 4: new Coverage(), 6: new Coverage() }
  let sinceYield = 0
  for (const t of targets) {
    const problem = validateTarget(t, { maxHosts: opts.maxHosts })
    if (problem !== null) throw new Error(`${t?.value}: ${problem}`)
    if (t.type === 'dns_name') {
      const name = t.value.toLowerCase().replace(/\.$/, '')
      let addresses: string[]
      try {
        addresses = await resolve(name)
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message
        throw new Error(`${t.value}: the name does not resolve (${code})`)
      }
      const parsed = addresses.map(parseAddress).filter((a): a is Addr => a !== null)
      if (parsed.length === 0) throw new Error(`${t.value}: the name does not resolve to any address`)
      for (const a of parsed) add(canonical(a), name)
      continue
    }
    if (t.type === 'single_ip') {
      // Through canonical(), not the span, so that an IPv6 zone survives.
      add(canonical(parseAddress(t.value) as Addr))
      continue
    }
    // Only the part no earlier target covered: overlapping and repeated blocks cost nothing twice.
    const span = spanOf(t) as Span
    for (const part of coverage[span.family].add(span.start, span.end)) {
      for (let n = part.start; n <= part.end; n++) {
        add(fromBigInt(n, span.family))
        if (++sinceYield >= EXPAND_CHUNK) {
          sinceYield = 0
          await new Promise<void>((resolve) => setImmediate(resolve))
        }
      }
    }
  }
  return { hosts: [...hosts.values()], excluded: [...excluded.values()] }
}

/** Guess a target's type from its syntax (for the CLI): address, a-b range, CIDR, else host name. */
export function inferTarget (value: string): Target {
  const v = value.trim()
  if (v.includes('/')) return { type: 'cidr', value: v }
  // Digits and dots, or any colon, mean an address was meant (so a typo is reported as a bad address).
  if (isIP(v) !== 0 || /^[\d.]+$/.test(v) || (v.includes(':') && !v.includes('-'))) return { type: 'single_ip', value: v }
  if (v.includes('-')) {
    const [a, b] = v.split('-')
    if (isIP(a?.trim() ?? '') !== 0 || isIP(b?.trim() ?? '') !== 0) return { type: 'ip_range', value: v }
  }
  return { type: 'dns_name', value: v }
}

/**
 * What makes two scans scans of the same targets: their target lists as sets, each value in one spelling (an
 * address in its canonical form, names and blocks in lower case), order and repeats aside. A scan diff's default
 * `against` is the previous completed scan with the same key.
 */
export function targetsKey (targets: readonly Target[]): string {
  const values = targets.map((t) => {
    const v = t.value.trim().toLowerCase()
    return `${t.type}:${t.type === 'single_ip' ? normalizeAddress(v) ?? v : v}`
  })
  return [...new Set(values)].sort().join('\n')
}

/** A fixed-length digest of targetsKey, for a store key. */
export function targetsDigest (targets: readonly Target[]): string {
  return createHash('sha256').update(targetsKey(targets)).digest('hex')
}
