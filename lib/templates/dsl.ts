// The expression language of templates (`dsl` matchers and extractors, `{{…}}` in requests and variables): parsed
// by jsep, evaluated here. Values are strings, numbers and booleans; `==`/`!=` compare as the format does (a number
// and its decimal text are equal), `+` adds numbers and joins anything else, `=~` tests a regex. Names resolve from
// the exchange's variables (data, raw, request, Hostname, Port, named reads, extracted values, template variables).
// Only the helper functions below exist: a template naming another is refused when it loads, never half-run.

import jsep from 'jsep'
import { createHash, randomBytes, randomInt } from 'node:crypto'
import { regexAll, regexReplace, regexTest } from './regex'

export type Value = string | number | boolean | null | Value[]
export type Vars = Record<string, Value | undefined>
type Node = jsep.Expression

jsep.addBinaryOp('=~', 6)
jsep.addBinaryOp('!~', 6)

const ast = new Map<string, Node>()

/** The parsed expression; throws when it does not parse. */
export function parseExpression (src: string): Node {
  let n = ast.get(src)
  if (n !== undefined) return n
  try {
    n = jsep(src)
  } catch (err) {
    throw new Error(`expression ${JSON.stringify(src)} does not parse: ${(err as Error).message}`)
  }
  if (ast.size > 5000) ast.clear()
  ast.set(src, n)
  return n
}

export function str (v: Value | undefined): string {
  if (v === undefined || v === null) return ''
  if (Array.isArray(v)) return v.map(str).join(',')
  return String(v)
}

function num (v: Value | undefined): number {
  if (typeof v === 'number') return v
  if (typeof v === 'boolean') return v ? 1 : 0
  const n = Number(str(v))
  if (Number.isNaN(n)) throw new Error(`not a number: ${JSON.stringify(str(v))}`)
  return n
}

export function truthy (v: Value | undefined): boolean {
  if (typeof v === 'boolean') return v
  if (typeof v === 'number') return v !== 0
  if (Array.isArray(v)) return v.length > 0
  return v !== undefined && v !== null && v !== '' && v !== 'false'
}

/** Compare two dotted versions segment by segment, numbers as numbers (1.10 > 1.9), a letter suffix after. */
export function versionCompare (a: string, b: string): number {
  const parts = (v: string): string[] => v.trim().replace(/^v/i, '').split(/[.\-+_]/)
  const pa = parts(a)
  const pb = parts(b)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? '0'
    const y = pb[i] ?? '0'
    const mx = /^(\d*)(.*)$/.exec(x) as RegExpExecArray
    const my = /^(\d*)(.*)$/.exec(y) as RegExpExecArray
    const nx = Number(mx[1] || '0')
    const ny = Number(my[1] || '0')
    if (nx !== ny) return nx < ny ? -1 : 1
    if (mx[2] !== my[2]) return mx[2] < my[2] ? -1 : 1
  }
  return 0
}

function compareVersions (version: string, ...constraints: string[]): boolean {
  return constraints.every((c) => c.split(',').every((one) => {
    const m = /^\s*(<=|>=|==|!=|<|>|=)?\s*(\S+)\s*$/.exec(one)
    if (m === null) throw new Error(`bad version constraint ${JSON.stringify(one)}`)
    const r = versionCompare(version, m[2])
    switch (m[1] ?? '=') {
      case '<': return r < 0
      case '<=': return r <= 0
      case '>': return r > 0
      case '>=': return r >= 0
      case '!=': return r !== 0
      default: return r === 0
    }
  }))
}

const hash = (alg: string) => (s: Value) => createHash(alg).update(Buffer.from(str(s), 'latin1')).digest('hex')
const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
const randFrom = (n: Value, chars: string): string => Array.from({ length: Math.min(1024, num(n)) }, () => chars[randomInt(chars.length)]).join('')

/** The helper functions, by name: each takes and gives Values. */
export const HELPERS: Readonly<Record<string, (...a: Value[]) => Value>> = Object.freeze({
  to_lower: (s) => str(s).toLowerCase(),
  to_upper: (s) => str(s).toUpperCase(),
  tolower: (s) => str(s).toLowerCase(),
  toupper: (s) => str(s).toUpperCase(),
  contains: (s, sub) => str(s).includes(str(sub)),
  contains_all: (s, ...subs) => subs.every((x) => str(s).includes(str(x))),
  contains_any: (s, ...subs) => subs.some((x) => str(s).includes(str(x))),
  equals_any: (s, ...xs) => xs.some((x) => str(x) === str(s)),
  starts_with: (s, ...p) => p.some((x) => str(s).startsWith(str(x))),
  ends_with: (s, ...p) => p.some((x) => str(s).endsWith(str(x))),
  line_starts_with: (s, ...p) => str(s).split(/\r?\n/).some((l) => p.some((x) => l.startsWith(str(x)))),
  line_ends_with: (s, ...p) => str(s).split(/\r?\n/).some((l) => p.some((x) => l.endsWith(str(x)))),
  regex: (pattern, s) => regexTest(str(pattern), str(s)),
  regex_all: (pattern, s) => regexAll(str(pattern), str(s)),
  replace: (s, old, rep) => str(s).split(str(old)).join(str(rep)),
  replace_regex: (s, pattern, rep) => regexReplace(str(pattern), str(s), str(rep)),
  len: (s) => Array.isArray(s) ? s.length : str(s).length,
  trim: (s, cut) => cut === undefined ? str(s).trim() : trimChars(str(s), str(cut), true, true),
  trim_left: (s, cut) => trimChars(str(s), str(cut), true, false),
  trim_right: (s, cut) => trimChars(str(s), str(cut), false, true),
  trim_space: (s) => str(s).trim(),
  trim_prefix: (s, p) => str(s).startsWith(str(p)) ? str(s).slice(str(p).length) : str(s),
  trim_suffix: (s, p) => str(s).endsWith(str(p)) && str(p) !== '' ? str(s).slice(0, -str(p).length) : str(s),
  concat: (...xs) => xs.map(str).join(''),
  join: (sep, ...xs) => xs.flatMap((x) => Array.isArray(x) ? x.map(str) : [str(x)]).join(str(sep)),
  split: (s, sep) => str(s).split(str(sep)),
  repeat: (s, n) => str(s).repeat(Math.min(65536, Math.max(0, num(n)))),
  reverse: (s) => [...str(s)].reverse().join(''),
  substr: (s, start, end) => str(s).slice(num(start), end === undefined ? undefined : num(end)),
  index: (s, sub) => str(s).indexOf(str(sub)),
  to_string: (s) => str(s),
  to_number: (s) => num(s),
  hex_encode: (s) => Buffer.from(str(s), 'latin1').toString('hex'),
  hex_decode: (s) => Buffer.from(str(s).replace(/\s+/g, ''), 'hex').toString('latin1'),
  base64: (s) => Buffer.from(str(s), 'latin1').toString('base64'),
  base64_decode: (s) => Buffer.from(str(s), 'base64').toString('latin1'),
  base64_py: (s) => Buffer.from(str(s), 'latin1').toString('base64') + '\n',
  url_encode: (s) => encodeURIComponent(str(s)),
  url_decode: (s) => decodeURIComponent(str(s)),
  md5: hash('md5'),
  sha1: hash('sha1'),
  sha256: hash('sha256'),
  sha512: hash('sha512'),
  hex_to_dec: (s) => parseInt(str(s), 16),
  dec_to_hex: (s) => Math.trunc(num(s)).toString(16),
  bin_to_dec: (s) => parseInt(str(s), 2),
  oct_to_dec: (s) => parseInt(str(s), 8),
  compare_versions: (v, ...c) => compareVersions(str(v), ...c.map(str)),
  rand_base: (n, chars) => randFrom(n, chars === undefined || str(chars) === '' ? ALNUM : str(chars)),
  rand_char: (chars) => randFrom(1, chars === undefined || str(chars) === '' ? ALNUM : str(chars)),
  rand_text_alpha: (n) => randFrom(n, ALNUM.slice(0, 52)),
  rand_text_alphanumeric: (n) => randFrom(n, ALNUM),
  rand_text_numeric: (n) => randFrom(n, '0123456789'),
  rand_int: (min, max) => randomInt(min === undefined ? 0 : num(min), max === undefined ? 2 ** 31 - 1 : num(max)),
  rand_hex: (n) => randomBytes(Math.min(512, num(n))).toString('hex').slice(0, num(n)),
  unix_time: (add) => Math.floor(Date.now() / 1000) + (add === undefined ? 0 : num(add)),
  print_debug: () => true
})

function trimChars (s: string, cut: string, left: boolean, right: boolean): string {
  const set = new Set(cut === '' ? [' ', '\t', '\r', '\n'] : [...cut])
  let a = 0
  let b = s.length
  if (left) while (a < b && set.has(s[a])) a++
  if (right) while (b > a && set.has(s[b - 1])) b--
  return s.slice(a, b)
}

function equal (a: Value, b: Value): boolean {
  if (typeof a === 'number' || typeof b === 'number') {
    const x = Number(a)
    const y = Number(b)
    if (!Number.isNaN(x) && !Number.isNaN(y) && str(a) !== '' && str(b) !== '') return x === y
  }
  if (typeof a === 'boolean' || typeof b === 'boolean') return truthy(a) === truthy(b)
  return str(a) === str(b)
}

function binary (op: string, l: Value, r: () => Value): Value {
  switch (op) {
    case '&&': return truthy(l) && truthy(r())
    case '||': return truthy(l) || truthy(r())
  }
  const b = r()
  switch (op) {
    case '==': case '===': return equal(l, b)
    case '!=': case '!==': return !equal(l, b)
    case '<': return num(l) < num(b)
    case '<=': return num(l) <= num(b)
    case '>': return num(l) > num(b)
    case '>=': return num(l) >= num(b)
    case '+': return typeof l === 'number' && typeof b === 'number' ? l + b : str(l) + str(b)
    case '-': return num(l) - num(b)
    case '*': return num(l) * num(b)
    case '/': return num(l) / num(b)
    case '%': return num(l) % num(b)
    case '=~': return regexTest(str(b), str(l))
    case '!~': return !regexTest(str(b), str(l))
  }
  throw new Error(`operator ${op} is not supported`)
}

/** Evaluate a parsed expression against the variables; throws on an unknown name or function. */
export function evaluate (node: Node, vars: Vars): Value {
  switch (node.type) {
    case 'Literal': return (node as jsep.Literal).value as Value
    case 'Identifier': {
      const name = (node as jsep.Identifier).name
      if (name === 'true') return true
      if (name === 'false') return false
      if (name === 'nil' || name === 'null') return null
      const v = lookup(vars, name)
      if (v === undefined) throw new Error(`unknown name ${name}`)
      return v
    }
    case 'BinaryExpression': {
      const b = node as jsep.BinaryExpression
      return binary(b.operator, evaluate(b.left, vars), () => evaluate(b.right, vars))
    }
    case 'UnaryExpression': {
      const u = node as jsep.UnaryExpression
      const v = evaluate(u.argument, vars)
      if (u.operator === '!') return !truthy(v)
      if (u.operator === '-') return -num(v)
      if (u.operator === '+') return num(v)
      throw new Error(`operator ${u.operator} is not supported`)
    }
    case 'ConditionalExpression': {
      const c = node as jsep.ConditionalExpression
      return truthy(evaluate(c.test, vars)) ? evaluate(c.consequent, vars) : evaluate(c.alternate, vars)
    }
    case 'CallExpression': {
      const c = node as jsep.CallExpression
      const name = c.callee.type === 'Identifier' ? (c.callee as jsep.Identifier).name : ''
      const fn = HELPERS[name]
      if (fn === undefined) throw new Error(`unknown function ${name || '(expression)'}`)
      return fn(...c.arguments.map((a) => evaluate(a, vars)))
    }
    case 'Compound': {
      const body = (node as jsep.Compound).body
      if (body.length === 0) throw new Error('empty expression')
      return evaluate(body[body.length - 1], vars)
    }
  }
  throw new Error(`${node.type} is not supported`)
}

/** Names are matched exactly, then without regard to case (`hostname` for `Hostname`). */
function lookup (vars: Vars, name: string): Value | undefined {
  if (Object.prototype.hasOwnProperty.call(vars, name)) return vars[name]
  const lower = name.toLowerCase()
  for (const k of Object.keys(vars)) if (k.toLowerCase() === lower) return vars[k]
  return undefined
}

/** The functions and names an expression uses: for refusing at load what could never run. */
export function usesOf (node: Node, out = { functions: new Set<string>(), names: new Set<string>(), unsupported: new Set<string>() }): typeof out {
  switch (node.type) {
    case 'Literal': break
    case 'Identifier': out.names.add((node as jsep.Identifier).name); break
    case 'BinaryExpression': usesOf((node as jsep.BinaryExpression).left, out); usesOf((node as jsep.BinaryExpression).right, out); break
    case 'UnaryExpression': usesOf((node as jsep.UnaryExpression).argument, out); break
    case 'ConditionalExpression': {
      const c = node as jsep.ConditionalExpression
      usesOf(c.test, out); usesOf(c.consequent, out); usesOf(c.alternate, out)
      break
    }
    case 'CallExpression': {
      const c = node as jsep.CallExpression
      if (c.callee.type === 'Identifier') out.functions.add((c.callee as jsep.Identifier).name)
      else out.unsupported.add('a call of a computed function')
      for (const a of c.arguments) usesOf(a, out)
      break
    }
    case 'Compound': for (const b of (node as jsep.Compound).body) usesOf(b, out); break
    default: out.unsupported.add(node.type)
  }
  return out
}

/** Why an expression cannot run here (an unknown function, a construct the evaluator lacks), or null. */
export function expressionProblem (src: string): string | null {
  let node: Node
  try {
    node = parseExpression(src)
  } catch (err) {
    return (err as Error).message
  }
  const u = usesOf(node)
  const unknown = [...u.functions].filter((f) => HELPERS[f] === undefined)
  if (unknown.length > 0) return `unsupported DSL function(s): ${unknown.join(', ')}`
  if (u.unsupported.size > 0) return `unsupported expression construct(s): ${[...u.unsupported].join(', ')}`
  return null
}

/** Evaluate source text; throws on any failure. */
export function evalExpression (src: string, vars: Vars): Value {
  return evaluate(parseExpression(src), vars)
}

const MARKER = /\{\{([^{}]+?)\}\}/g

/**
 * Replace each `{{expr}}` in the text by the expression's value. A marker whose expression fails (an unknown name)
 * throws: a request with a hole in it is never sent.
 */
export function interpolate (text: string, vars: Vars): string {
  return text.replace(MARKER, (_, expr: string) => str(evalExpression(expr.trim(), vars)))
}

/** The expressions inside `{{…}}` markers of a text. */
export function markersOf (text: string): string[] {
  return [...text.matchAll(MARKER)].map((m) => m[1].trim())
}
