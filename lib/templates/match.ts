// Matchers and extractors over one exchange. An exchange is its parts (text as latin1, one character per byte):
// `data` (every read together; also `body`, `raw`, `all`, `response`), `request` (what was sent), and one part per
// named input. A matcher's part that the exchange lacks is empty, never an error.

import { evalExpression, interpolate, str, truthy, type Vars } from './dsl'
import { regexAll, regexTest } from './regex'
import type { Extractor, Matcher } from './types'

export const DATA_PARTS = ['data', 'body', 'raw', 'all', 'response']
export const KNOWN_PARTS = [...DATA_PARTS, 'request']

export type Parts = Record<string, string>

export function partOf (parts: Parts, name: string): string {
  if (DATA_PARTS.includes(name)) return parts.data ?? ''
  return parts[name] ?? ''
}

/** The variables an expression sees: the parts, the request's variables, the values extracted so far. */
export function varsOf (parts: Parts, base: Vars): Vars {
  const out: Vars = { ...base }
  for (const [k, v] of Object.entries(parts)) out[k] = v
  const data = parts.data ?? ''
  for (const p of DATA_PARTS) out[p] = data
  out.content_length = data.length
  return out
}

function hexText (hex: string): string {
  return Buffer.from(hex.replace(/\s+/g, ''), 'hex').toString('latin1')
}

/** One value of a matcher tested on the text (before `negative`). */
function one (m: Matcher, text: string, value: string, vars: Vars): boolean {
  switch (m.type) {
    case 'word': {
      let v = value
      if (v.includes('{{')) {
        try {
          v = interpolate(v, vars)
        } catch {
          return false
        }
      }
      const w = m.encoding === 'hex' ? hexText(v) : v
      return m.caseInsensitive ? text.toLowerCase().includes(w.toLowerCase()) : text.includes(w)
    }
    case 'regex': return regexTest(m.caseInsensitive ? `(?i)${value}` : value, text)
    case 'binary': return text.includes(hexText(value))
    case 'dsl':
      try {
        return truthy(evalExpression(value, vars))
      } catch {
        // A name the exchange did not produce, a value of the wrong kind: no match, never a crash.
        return false
      }
    default: return false
  }
}

/** Whether one matcher matches, `negative` applied; with the matched values for evidence. */
export function runMatcher (m: Matcher, parts: Parts, vars: Vars): { ok: boolean, matched: string[] } {
  const text = partOf(parts, m.part)
  let ok: boolean
  let matched: string[] = []
  if (m.type === 'size') {
    ok = m.sizes.some((s) => text.length === s)
    if (ok) matched = [`size ${text.length}`]
  } else {
    const hits = m.values.map((v) => one(m, text, v, vars))
    ok = m.condition === 'and' ? hits.every(Boolean) : hits.some(Boolean)
    matched = m.values.filter((_, i) => hits[i])
  }
  if (m.negative) return { ok: !ok, matched: !ok ? [`not ${m.type}`] : [] }
  return { ok, matched }
}

/** Whether the request's matchers match, under its matchers-condition; the matched values for evidence. */
export function runMatchers (matchers: Matcher[], condition: 'and' | 'or', parts: Parts, vars: Vars): { ok: boolean, matched: string[] } {
  if (matchers.length === 0) return { ok: false, matched: [] }
  const results = matchers.map((m) => ({ m, r: runMatcher(m, parts, vars) }))
  const ok = condition === 'and' ? results.every((x) => x.r.ok) : results.some((x) => x.r.ok)
  if (!ok) return { ok: false, matched: [] }
  const matched = results.filter((x) => x.r.ok && !x.m.internal).flatMap((x) => x.m.name !== undefined ? [x.m.name] : x.r.matched)
  return { ok, matched }
}

/** A path of the JSON extractor, a jq subset: `.a.b`, `.a[0]`, `.a[]`, `.["key"]`. */
export function jsonPath (doc: unknown, path: string): unknown[] {
  const steps = [...path.trim().matchAll(/\.?([A-Za-z_][\w-]*)|\[(\d*)\]|\["([^"]*)"\]|\.$/g)]
  let cur: unknown[] = [doc]
  for (const s of steps) {
    if (s[0] === '.') continue
    const next: unknown[] = []
    for (const c of cur) {
      if (c === null || typeof c !== 'object') continue
      const key = s[1] ?? s[3]
      if (key !== undefined) next.push((c as Record<string, unknown>)[key])
      else if (s[2] === '') next.push(...(Array.isArray(c) ? c : Object.values(c)))
      else if (Array.isArray(c)) next.push(c[Number(s[2])])
    }
    cur = next.filter((x) => x !== undefined)
  }
  return cur
}

/** The values one extractor takes from the exchange (bounded). */
export function runExtractor (e: Extractor, parts: Parts, vars: Vars): string[] {
  const text = partOf(parts, e.part)
  const out: string[] = []
  for (const v of e.values) {
    switch (e.type) {
      case 'regex': out.push(...regexAll(v, text, e.group)); break
      case 'kval': {
        const got = vars[v] ?? vars[v.replace(/-/g, '_')]
        if (got !== undefined && got !== null && str(got) !== '') out.push(str(got))
        break
      }
      case 'json': {
        let doc: unknown
        try {
          doc = JSON.parse(text)
        } catch {
          break
        }
        out.push(...jsonPath(doc, v).map((x) => typeof x === 'string' ? x : JSON.stringify(x)))
        break
      }
      case 'dsl':
        try {
          const r = evalExpression(v, vars)
          if (r !== null && str(r) !== '') out.push(str(r))
        } catch {}
        break
    }
  }
  return [...new Set(out)].slice(0, 20).map((s) => s.length > 200 ? s.slice(0, 200) + '…' : s)
}
