// Loading templates in the Nuclei format. A file loads whole or is refused with a reason: a protocol or feature this
// engine does not run, an expression naming a helper it lacks, a regex RE2 cannot run, or matchers that would match
// an empty or absent reply (they would report every port that said nothing). Nothing is ever half-run.

import { parse as parseYaml } from 'yaml'
import { expressionProblem, markersOf } from './dsl'
import { compileRegex } from './regex'
import { KNOWN_PARTS, runMatchers, varsOf } from './match'
import { servicesOf } from './binding'
import { signatureOf } from './signing'
import { sslRequestsOf } from './ssl'
import { dnsRequestOf } from './dns'
import type { KeyObject } from 'node:crypto'
import type { Extractor, ExtractorType, LoadedTemplate, Matcher, MatcherType, NetInput, NetRequest, Refusal, TemplateOrigin } from './types'
import type { TemplateSeverity } from '../domain/severity'

/** Tags that make a template intrusive: it runs only when the scan sets `options.intrusive`. */
export const INTRUSIVE_TAGS = ['intrusive', 'dos', 'bruteforce', 'brute-force', 'default-login', 'fuzz', 'fuzzing']

const SEVERITIES: TemplateSeverity[] = ['critical', 'high', 'medium', 'low', 'info', 'unknown']
const MATCHER_TYPES: MatcherType[] = ['word', 'regex', 'binary', 'size', 'dsl']
const EXTRACTOR_TYPES: ExtractorType[] = ['regex', 'kval', 'json', 'dsl']
/** Top-level keys of protocols this engine does not run, with what to say. */
const REFUSED_PROTOCOLS: Record<string, string> = {
  http: 'the http protocol is not supported (vulnscan runs network templates; its HTTP exposures are code checks)',
  requests: 'the http protocol is not supported (vulnscan runs network templates; its HTTP exposures are code checks)',
  headless: 'the headless protocol is not supported (no browser runs here)',
  code: 'the code protocol is not supported (it runs programs on the scanning host)',
  javascript: 'the javascript protocol is not supported (no script modules run here)',
  file: 'the file protocol is not supported (it reads local files, not services)',
  websocket: 'the websocket protocol is not supported',
  whois: 'the whois protocol is not supported',
  workflows: 'workflows are not supported',
  flow: 'flow is not supported',
  'self-contained': 'self-contained templates are not supported'
}
const KNOWN_TOP = new Set(['id', 'info', 'variables', 'tcp', 'network', 'ssl', 'dns', 'stop-at-first-match', 'constants'])
const KNOWN_TCP = new Set(['host', 'address', 'port', 'inputs', 'read-size', 'read-all', 'matchers', 'matchers-condition', 'extractors', 'id', 'name'])
const ID_PATTERN = /^([a-zA-Z0-9]+[-_])*[a-zA-Z0-9]+$/
const MAX_READ = 1 << 20

class Refused extends Error {}
const refuse = (reason: string): never => { throw new Refused(reason) }

function strings (v: unknown, what: string): string[] {
  if (v === undefined || v === null) return []
  if (typeof v === 'string' || typeof v === 'number') return [String(v)]
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number')) return v.map(String)
  return refuse(`${what} must be a string or a list of strings`)
}

function splitList (v: unknown, what: string): string[] {
  return strings(v, what).flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '')
}

function checkExpression (src: string, where: string): void {
  const p = expressionProblem(src)
  if (p !== null) refuse(`${where}: ${p}`)
}

function checkText (text: string, where: string): void {
  for (const e of markersOf(text)) checkExpression(e, where)
}

function matcherOf (raw: Record<string, unknown>, i: number): Matcher {
  const where = `matcher ${i + 1}`
  const type = raw.type as MatcherType
  if (!MATCHER_TYPES.includes(type)) refuse(`${where}: matcher type ${JSON.stringify(raw.type)} is not supported`)
  const part = typeof raw.part === 'string' ? raw.part : 'data'
  const key = { word: 'words', regex: 'regex', binary: 'binary', size: 'size', dsl: 'dsl' }[type]
  const values = type === 'size' ? [] : strings(raw[key], `${where} ${key}`)
  const sizes = type === 'size' ? strings(raw.size, `${where} size`).map(Number) : []
  if (type === 'size' && (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 0))) refuse(`${where}: size needs whole numbers`)
  if (type !== 'size' && values.length === 0) refuse(`${where}: no ${key} given`)
  if (raw.encoding !== undefined && raw.encoding !== 'hex') refuse(`${where}: encoding ${JSON.stringify(raw.encoding)} is not supported`)
  if (type === 'regex') for (const v of values) { try { compileRegex(v) } catch (err) { refuse(`${where}: ${(err as Error).message}`) } }
  if (type === 'binary' || raw.encoding === 'hex') for (const v of values) if (!/^([0-9a-fA-F]{2}|\s)*$/.test(v)) refuse(`${where}: ${JSON.stringify(v)} is not hex`)
  if (type === 'dsl') for (const v of values) checkExpression(v, where)
  if (type === 'word') for (const v of values) checkText(v, where)
  if (raw['match-all'] !== undefined) refuse(`${where}: match-all is not supported`)
  const condition = raw.condition === 'and' ? 'and' : 'or'
  if (raw.condition !== undefined && raw.condition !== 'and' && raw.condition !== 'or') refuse(`${where}: condition must be and or or`)
  return {
    type,
    part,
    condition,
    negative: raw.negative === true,
    caseInsensitive: raw['case-insensitive'] === true,
    ...(raw.encoding === 'hex' ? { encoding: 'hex' as const } : {}),
    ...(typeof raw.name === 'string' ? { name: raw.name } : {}),
    internal: raw.internal === true,
    values,
    sizes
  }
}

function extractorOf (raw: Record<string, unknown>, i: number): Extractor {
  const where = `extractor ${i + 1}`
  const type = raw.type as ExtractorType
  if (!EXTRACTOR_TYPES.includes(type)) refuse(`${where}: extractor type ${JSON.stringify(raw.type)} is not supported`)
  const values = strings(raw[type], `${where} ${type}`)
  if (values.length === 0) refuse(`${where}: no ${type} given`)
  if (type === 'regex') for (const v of values) { try { compileRegex(v) } catch (err) { refuse(`${where}: ${(err as Error).message}`) } }
  if (type === 'dsl') for (const v of values) checkExpression(v, where)
  const group = raw.group === undefined ? 0 : Number(raw.group)
  if (!Number.isInteger(group) || group < 0) refuse(`${where}: group must be a whole number`)
  return {
    type,
    part: typeof raw.part === 'string' ? raw.part : 'data',
    ...(typeof raw.name === 'string' ? { name: raw.name } : {}),
    internal: raw.internal === true,
    group,
    values
  }
}

function inputOf (raw: unknown, i: number): NetInput {
  const where = `input ${i + 1}`
  if (typeof raw !== 'object' || raw === null) return refuse(`${where} must be a mapping`)
  const r = raw as Record<string, unknown>
  for (const k of Object.keys(r)) if (!['data', 'type', 'read', 'name'].includes(k)) refuse(`${where}: ${k} is not supported`)
  if (r.type !== undefined && r.type !== 'hex' && r.type !== 'text') refuse(`${where}: type ${JSON.stringify(r.type)} is not supported`)
  const data = r.data === undefined ? '' : typeof r.data === 'string' || typeof r.data === 'number' ? String(r.data) : refuse(`${where}: data must be text`)
  const hex = r.type === 'hex'
  if (hex && !/^([0-9a-fA-F]{2}|\s|\{\{[^}]*\}\})*$/.test(data)) refuse(`${where}: data is not hex`)
  checkText(data, where)
  const read = r.read === undefined ? 0 : Number(r.read)
  if (!Number.isInteger(read) || read < 0 || read > MAX_READ) refuse(`${where}: read must be a whole number of bytes up to ${MAX_READ}`)
  return { data, hex, read, ...(typeof r.name === 'string' ? { name: r.name } : {}) }
}

function portsOf (raw: unknown, hosts: string[]): number[] {
  const out = splitList(raw, 'port').map(Number)
  for (const h of hosts) {
    const m = /:(\d{1,5})$/.exec(h.replace(/^[a-z]+:\/\//, ''))
    if (m !== null) out.push(Number(m[1]))
  }
  if (out.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) refuse('port must be 1-65535')
  return [...new Set(out)]
}

function requestOf (raw: unknown, i: number): NetRequest {
  if (typeof raw !== 'object' || raw === null) return refuse(`tcp request ${i + 1} must be a mapping`)
  const r = raw as Record<string, unknown>
  for (const k of Object.keys(r)) if (!KNOWN_TCP.has(k)) refuse(`tcp request ${i + 1}: ${k} is not supported`)
  const hosts = strings(r.host ?? r.address ?? '{{Hostname}}', 'host')
  for (const h of hosts) {
    if (!/^(tls:\/\/)?\{\{(Hostname|Host)\}\}(:\d{1,5})?$/.test(h)) refuse(`host ${JSON.stringify(h)}: a template may only talk to the port it is run on ({{Hostname}}, tls://{{Hostname}})`)
  }
  const inputs = (Array.isArray(r.inputs) ? r.inputs : r.inputs === undefined ? [] : refuse('inputs must be a list')).map(inputOf)
  const matchers = (Array.isArray(r.matchers) ? r.matchers : []).map((m, j) => matcherOf(m as Record<string, unknown>, j))
  const extractors = (Array.isArray(r.extractors) ? r.extractors : []).map((e, j) => extractorOf(e as Record<string, unknown>, j))
  if (matchers.length === 0 && extractors.filter((e) => !e.internal).length === 0) refuse(`tcp request ${i + 1}: no matchers and no extractors: it could report nothing`)
  const readSize = r['read-size'] === undefined ? 1024 : Number(r['read-size'])
  if (!Number.isInteger(readSize) || readSize < 1 || readSize > MAX_READ) refuse(`read-size must be 1-${MAX_READ}`)
  const parts = new Set([...KNOWN_PARTS, ...inputs.flatMap((x) => x.name !== undefined ? [x.name] : [])])
  for (const x of [...matchers, ...extractors]) if (!parts.has(x.part)) refuse(`part ${JSON.stringify(x.part)} does not exist in a network exchange`)
  const req: NetRequest = {
    hosts,
    ports: portsOf(r.port, hosts),
    tls: hosts.some((h) => h.startsWith('tls://')),
    inputs,
    readSize,
    readAll: r['read-all'] === true,
    matchersCondition: r['matchers-condition'] === 'and' ? 'and' : 'or',
    matchers,
    extractors
  }
  // The rule Nuclei lacks: matchers that hold on an empty reply would report a port that said nothing.
  const emptyParts: Record<string, string> = { data: '', request: '' }
  for (const x of inputs) if (x.name !== undefined) emptyParts[x.name] = ''
  if (matchers.length > 0 && runMatchers(matchers, req.matchersCondition, emptyParts, varsOf(emptyParts, { Hostname: '', Host: '', Port: '' })).ok) {
    refuse(`tcp request ${i + 1}: its matchers match an empty or absent reply (negative-only, size 0 or a dsl true on nothing)`)
  }
  return req
}

function infoOf (raw: unknown): Pick<LoadedTemplate, 'name' | 'severity' | 'description' | 'remediation' | 'tags' | 'cveIds' | 'cweIds' | 'cpe'> {
  if (typeof raw !== 'object' || raw === null) return refuse('info is missing')
  const info = raw as Record<string, unknown>
  const severity = String(info.severity ?? '').toLowerCase() as TemplateSeverity
  if (!SEVERITIES.includes(severity)) refuse(`info.severity ${JSON.stringify(info.severity)} is not one of ${SEVERITIES.join(', ')}`)
  if (typeof info.name !== 'string' || info.name === '') refuse('info.name is missing')
  const cls = (typeof info.classification === 'object' && info.classification !== null ? info.classification : {}) as Record<string, unknown>
  const cveIds = splitList(cls['cve-id'], 'classification.cve-id').map((c) => c.toUpperCase())
  for (const c of cveIds) if (!/^CVE-\d{4}-\d{4,}$/.test(c)) refuse(`classification.cve-id ${c} is not a CVE id`)
  return {
    name: info.name as string,
    severity,
    description: typeof info.description === 'string' ? info.description.trim() : '',
    ...(typeof info.remediation === 'string' ? { remediation: info.remediation.trim() } : {}),
    tags: splitList(info.tags, 'info.tags').map((t) => t.toLowerCase()),
    cveIds,
    cweIds: splitList(cls['cwe-id'], 'classification.cwe-id').map((c) => c.toUpperCase()),
    ...(typeof cls.cpe === 'string' ? { cpe: cls.cpe } : {})
  }
}

function build (doc: Record<string, unknown>, file: string, origin: TemplateOrigin): Omit<LoadedTemplate, 'signature'> {
  const id = doc.id
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) refuse(`id ${JSON.stringify(id)} is missing or not of letters, digits, - and _`)
  for (const [k, why] of Object.entries(REFUSED_PROTOCOLS)) if (doc[k] !== undefined) refuse(why)
  for (const k of Object.keys(doc)) if (!KNOWN_TOP.has(k)) refuse(`${k} is not supported`)
  const info = infoOf(doc.info)
  const tcp = doc.tcp ?? doc.network
  if (doc.ssl !== undefined && tcp !== undefined) refuse('ssl and tcp requests in one template: they run on different ports')
  if (doc.dns !== undefined && tcp !== undefined) refuse('dns and tcp requests in one template are not supported')
  if (doc.dns !== undefined && doc.ssl !== undefined) refuse('dns and ssl requests in one template are not supported')
  const ssl = doc.ssl === undefined ? undefined : sslRequestsOf(doc.ssl, { matcherOf, extractorOf, checkText, refuse })
  const blocks = tcp ?? doc.dns
  if (ssl === undefined && (!Array.isArray(blocks) || blocks.length === 0)) refuse('no tcp (network), ssl or dns requests: nothing to run')
  const variables: Record<string, string> = {}
  const rawVars = (doc.variables ?? {}) as Record<string, unknown>
  if (typeof rawVars !== 'object' || Array.isArray(rawVars)) refuse('variables must be a mapping')
  for (const [k, v] of Object.entries(rawVars)) {
    if (typeof v !== 'string' && typeof v !== 'number') refuse(`variable ${k} must be text`)
    variables[k] = String(v)
    checkText(variables[k], `variable ${k}`)
  }
  const dns = doc.dns !== undefined ? (blocks as unknown[]).map((r, i) => dnsRequestOf(r, i, variables, { refuse, matcherOf, extractorOf, checkText })) : undefined
  const requests = ssl !== undefined || dns !== undefined ? [] : (blocks as unknown[]).map(requestOf)
  const ports = [...new Set(requests.flatMap((r) => r.ports))]
  return {
    id: id as string,
    ...info,
    variables,
    requests,
    ...(ssl !== undefined ? { ssl } : {}),
    ...(dns !== undefined ? { dns } : {}),
    // An ssl template is for TLS, whatever runs inside it (binding.ts); a dns template asks DNS questions, so it
    // runs on DNS servers only, whatever its tags say.
    services: ssl !== undefined ? [] : dns !== undefined ? ['dns'] : servicesOf(id as string, info.tags, ports),
    ports,
    intrusive: info.tags.some((t) => INTRUSIVE_TAGS.includes(t)),
    origin,
    file
  }
}

export interface LoadOptions {
  origin: TemplateOrigin
  /** Public key that verifies `# digest:` lines; null: none configured. */
  key: KeyObject | null
  /** Refuse user templates without a valid signature. */
  requireSigned: boolean
}

/** One template file's text, loaded or refused. */
export function loadTemplate (text: string, file: string, opts: LoadOptions): LoadedTemplate | Refusal {
  let doc: unknown
  try {
    doc = parseYaml(text, { maxAliasCount: 100 })
  } catch (err) {
    return { file, origin: opts.origin, reason: `not valid YAML: ${(err as Error).message.split('\n')[0]}` }
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return { file, origin: opts.origin, reason: 'not a template (a YAML mapping with id and info)' }
  const rawId = (doc as Record<string, unknown>).id
  const id = typeof rawId === 'string' ? rawId : undefined
  const signature = signatureOf(text, opts.key)
  if (signature === 'invalid') return { file, id, origin: opts.origin, reason: 'its # digest: signature does not verify with TEMPLATES_SIGNING_CERT' }
  if (opts.requireSigned && opts.origin === 'user' && signature !== 'signed') return { file, id, origin: opts.origin, reason: 'unsigned, and TEMPLATES_REQUIRE_SIGNED is set' }
  try {
    return { ...build(doc as Record<string, unknown>, file, opts.origin), signature }
  } catch (err) {
    if (err instanceof Refused) return { file, id, origin: opts.origin, reason: err.message }
    return { file, id, origin: opts.origin, reason: `could not be loaded: ${(err as Error).message}` }
  }
}

export function isRefusal (x: LoadedTemplate | Refusal): x is Refusal {
  return 'reason' in x
}
