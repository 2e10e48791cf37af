// Regular expressions of templates run on RE2 (re2js): matching time is linear in the input, so no pattern a
// template brings can hang the worker with catastrophic backtracking. Patterns are written in Go's RE2 syntax, the
// syntax the format documents; one RE2 does not accept (a backreference, a lookaround) refuses the template at load.

import type { RE2JS as RE2 } from 're2js' with { 'resolution-mode': 'import' }

// re2js ships its CommonJS build beside ESM typings: required here, typed from the ESM declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { RE2JS } = require('re2js') as { RE2JS: typeof RE2 }
type RE2JS = RE2

const cache = new Map<string, RE2JS>()
const CACHE_MAX = 2000

/** The compiled pattern; throws an Error saying why when RE2 refuses it. */
export function compileRegex (pattern: string): RE2JS {
  let re = cache.get(pattern)
  if (re !== undefined) return re
  try {
    re = RE2JS.compile(pattern)
  } catch (err) {
    throw new Error(`regex ${JSON.stringify(pattern)} is not valid RE2: ${(err as Error).message}`)
  }
  if (cache.size >= CACHE_MAX) cache.clear()
  cache.set(pattern, re)
  return re
}

/** Whether the pattern matches anywhere in the text. */
export function regexTest (pattern: string, text: string): boolean {
  return compileRegex(pattern).matcher(text).find()
}

/** Every match of the pattern in the text: group `group` of each (0: the whole match), at most `max`. */
export function regexAll (pattern: string, text: string, group = 0, max = 50): string[] {
  const re = compileRegex(pattern)
  if (group > re.groupCount()) return []
  const m = re.matcher(text)
  const out: string[] = []
  // find() steps past an empty match itself (as Java's Matcher does); the cap bounds the loop regardless.
  for (let i = 0; out.length < max && i < max * 4 && m.find(); i++) {
    const g = m.group(group)
    if (g !== null) out.push(g)
  }
  return out
}

/** Replace every match (`$1` names a group). */
export function regexReplace (pattern: string, text: string, replacement: string): string {
  return compileRegex(pattern).matcher(text).replaceAll(replacement)
}
