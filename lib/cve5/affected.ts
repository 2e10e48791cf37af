// Decide a detected version against one `affected[]` entry of a CVE JSON 5 record, following the
// CVE schema's version status algorithm (cve-schema docs/versions.md): the first version object
// that covers the version gives its status, refined by `changes[]`; otherwise `defaultStatus`
// (unknown when absent). On top of the schema, what CNAs actually write is handled: GitHub's range
// strings in `version` (">= 7.0.0, < 7.2.6"), `"0"` / `"unspecified"` as an open lower bound,
// `"*"` and `"6.1.*"` upper bounds, and `n/a` placeholders, which never match.
//
// Whatever cannot be compared from a banner (git commit ranges, vendor release names such as
// "R34 P2") makes the entry `unknown` instead of letting `defaultStatus` speak for it.

import { compareVersions, splitDistroVersion } from '../cpe/version'
import { GRAPH_TYPES, type Cve5Affected, type Cve5Version, type VersionStatus } from './record'

export interface VersionDecision {
  status: VersionStatus
  /** The exact rule, e.g. `cna: redis/redis ">= 7.0.0, < 7.2.6" (semver)`. */
  rule: string
  /** A listed version or range decided, the entry's defaultStatus did, or nothing could. */
  by: 'range' | 'default' | 'undecidable'
}

/** Lower bounds that mean "no lower bound". */
const OPEN_LOWER = new Set(['0', '*', 'unspecified', 'unknown', 'all', 'all versions', '-'])

export function isNotApplicable (s: string | undefined): boolean {
  return s !== undefined && /^n\/?a$/i.test(s.trim())
}

function isCommitLike (s: string): boolean {
  return /^[0-9a-f]{7,40}$/i.test(s) && /[a-f]/i.test(s) && !s.includes('.')
}

function isVersionLike (s: string): boolean {
  return /^v?\d[0-9a-z.+~_:-]*$/i.test(s) && !isCommitLike(s)
}

type Op = '<' | '<=' | '>' | '>=' | '='
interface Constraint { op: Op, v: string }

/**
 * GitHub-style and plain-language range strings in `version`: `>= 7.0.0, < 7.2.6`, `< 1.2.3`,
 * `<= 2.0`, `= 1.4.0`, `before 1.2.3`, `1.2.3 and earlier`. Null when the string is not one.
 */
export function parseRangeString (text: string): Constraint[] | null {
  const s = text.trim()
  let m = /^(?:before|prior to)\s+(\S+)$/i.exec(s)
  if (m) return isVersionLike(m[1]) ? [{ op: '<', v: m[1] }] : null
  m = /^(\S+)\s+(?:and|or)\s+(?:earlier|prior|below|before|lower)$/i.exec(s) ??
    /^(?:up to and including|up to|through)\s+(\S+)$/i.exec(s)
  if (m) return isVersionLike(m[1]) ? [{ op: '<=', v: m[1] }] : null
  if (!/^(?:>=|<=|>|<|==?)/.test(s)) return null
  const out: Constraint[] = []
  for (const clause of s.split(',')) {
    const c = /^\s*(>=|<=|>|<|==?)\s*(\S+)\s*$/.exec(clause)
    if (!c || !isVersionLike(c[2])) return null
    out.push({ op: (c[1] === '==' ? '=' : c[1]) as Op, v: c[2] })
  }
  return out
}

function holds (version: string, c: Constraint): boolean {
  const d = compareVersions(version, c.v)
  switch (c.op) {
    case '<': return d < 0
    case '<=': return d <= 0
    case '>': return d > 0
    case '>=': return d >= 0
    default: return d === 0
  }
}

type Upper = { kind: 'none' } | { kind: 'version', v: string, inclusive: boolean } | { kind: 'series', prefix: string }
type Lower = { kind: 'none' } | { kind: 'version', v: string }

function parseLower (s: string): Lower | null {
  const t = s.trim()
  if (OPEN_LOWER.has(t.toLowerCase())) return { kind: 'none' }
  const series = /^(.+?)\.[*x]$/i.exec(t)
  if (series && isVersionLike(series[1])) return { kind: 'version', v: series[1] }
  return isVersionLike(t) ? { kind: 'version', v: t } : null
}

function parseUpper (s: string, inclusive: boolean): Upper | null {
  const t = s.trim()
  if (t === '*') return { kind: 'none' }
  // `"6.1.*"`: the whole 6.1 series is the bound (the schema's `*` is infinity, not a pattern).
  const series = /^(.+?)\.[*x]$/i.exec(t)
  if (series && isVersionLike(series[1])) return { kind: 'series', prefix: series[1] }
  if (isVersionLike(t)) return { kind: 'version', v: t, inclusive }
  // A bound ending in `*` that names no version (Log4j's "log4j-core*") is still infinity.
  if (t.endsWith('*')) return { kind: 'none' }
  return null
}

function withinSeries (version: string, prefix: string): boolean {
  const n = prefix.split('.').length
  return compareVersions(version.split('.').slice(0, n).join('.'), prefix) <= 0
}

interface Evaluation {
  /** 'match': covers the version; 'miss': does not; 'undecidable': cannot tell. */
  outcome: 'match' | 'miss' | 'undecidable'
  status: VersionStatus
  text: string
  type?: string
  /** The status change that applied, e.g. `, unaffected from 2.12.2`. */
  note?: string
}

function typeLabel (v: Cve5Version, rangeString: boolean): string | undefined {
  return v.versionType ?? (rangeString ? 'semver' : undefined)
}

function rangeText (v: Cve5Version, lower: Lower | null, upper: Upper | null): string {
  const parts: string[] = []
  if (!lower || lower.kind === 'version') parts.push(`>= ${v.version}`)
  const bound = v.lessThan ?? v.lessThanOrEqual
  if (bound !== undefined && !(upper && upper.kind === 'none')) parts.push(`${v.lessThan !== undefined ? '<' : '<='} ${bound}`)
  return parts.length > 0 ? parts.join(', ') : '*'
}

function evaluate (v: Cve5Version, version: string): Evaluation {
  const graph = v.versionType !== undefined && GRAPH_TYPES.has(v.versionType)
  const bound = v.lessThan ?? v.lessThanOrEqual
  if (bound === undefined) {
    const constraints = parseRangeString(v.version)
    if (constraints) {
      const ok = constraints.every((c) => holds(version, c))
      return { outcome: ok ? 'match' : 'miss', status: v.status, text: v.version, type: typeLabel(v, true) }
    }
    const text = `= ${v.version}`
    if (graph || isNotApplicable(v.version) || !isVersionLike(v.version)) {
      return { outcome: 'undecidable', status: 'unknown', text, type: v.versionType }
    }
    return { outcome: compareVersions(version, v.version) === 0 ? 'match' : 'miss', status: v.status, text, type: v.versionType }
  }
  const lower = parseLower(v.version)
  const upper = parseUpper(bound, v.lessThanOrEqual !== undefined)
  const text = rangeText(v, lower, upper)
  if (graph || !lower || !upper || isNotApplicable(v.version)) {
    return { outcome: 'undecidable', status: 'unknown', text, type: v.versionType }
  }
  const aboveLower = lower.kind === 'none' || compareVersions(version, lower.v) >= 0
  let belowUpper = true
  if (upper.kind === 'version') {
    const d = compareVersions(version, upper.v)
    belowUpper = upper.inclusive ? d <= 0 : d < 0
  } else if (upper.kind === 'series') {
    belowUpper = withinSeries(version, upper.prefix)
  }
  if (!aboveLower || !belowUpper) return { outcome: 'miss', status: v.status, text, type: v.versionType }
  let status = v.status
  let note: string | undefined
  if (v.changes && v.changes.length > 0) {
    if (!v.changes.every((c) => isVersionLike(c.at))) {
      return { outcome: 'undecidable', status: 'unknown', text, type: v.versionType }
    }
    const sorted = [...v.changes].sort((a, b) => compareVersions(a.at, b.at))
    for (const c of sorted) {
      if (compareVersions(c.at, version) > 0) break
      status = c.status
      note = `, ${c.status} from ${c.at}`
    }
  }
  return { outcome: 'match', status, text, type: v.versionType, note }
}

function entryName (entry: Cve5Affected): string {
  return `${entry.vendor ?? '?'}/${entry.product ?? entry.packageName ?? '?'}`
}

function formatRule (entry: Cve5Affected, e: Evaluation): string {
  return `${entry.origin}: ${entryName(entry)} "${e.text}"${e.type ? ` (${e.type})` : ''}${e.note ?? ''}`
}

/** The upstream part of a detected version, as CNAs write versions (`9.2p1-2+deb12u3` → `9.2p1`). */
function upstreamOf (version: string): string {
  return splitDistroVersion(version.trim().replace(/^v(?=\d)/i, '')).upstream
}

/**
 * Status of `version` under one affected entry, with the rule that decided it. Entries that name
 * `n/a` as product, or give only `n/a` versions, are always `unknown`: they never match.
 */
export function decideVersion (entry: Cve5Affected, version: string): VersionDecision {
  const name = `${entry.origin}: ${entryName(entry)}`
  const hasName = entry.product !== undefined || entry.packageName !== undefined || (entry.cpes?.length ?? 0) > 0
  if (!hasName || isNotApplicable(entry.product)) {
    return { status: 'unknown', rule: `${name}: product n/a never matches`, by: 'undecidable' }
  }
  const v = upstreamOf(version)
  if (v === '' || !isVersionLike(v)) {
    return { status: 'unknown', rule: `${name}: no comparable version detected`, by: 'undecidable' }
  }
  let undecidable: Evaluation | undefined
  for (const item of entry.versions) {
    const e = evaluate(item, v)
    if (e.outcome === 'match') return { status: e.status, rule: formatRule(entry, e), by: 'range' }
    if (e.outcome === 'undecidable' && undecidable === undefined) undecidable = e
  }
  if (undecidable) {
    return { status: 'unknown', rule: `${formatRule(entry, undecidable)} cannot be compared with ${v}`, by: 'undecidable' }
  }
  const def = entry.defaultStatus ?? 'unknown'
  return {
    status: def,
    rule: `${name} defaultStatus ${def} (no listed version covers ${v})`,
    by: 'default'
  }
}
