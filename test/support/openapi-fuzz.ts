// Requests generated from the published OpenAPI document, and a check of each answer against that document.
// The document is the contract clients generate SDKs from, so the fuzz reads it rather than the code's schemas:
// a route that drifts from it fails here.
import fs from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import Ajv, { type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { parse } from 'yaml'

export type Schema = Record<string, any>

export interface Parameter { name: string, in: 'path' | 'query' | 'header', required?: boolean, schema: Schema }

export interface Operation {
  id: string
  method: string
  path: string
  parameters: Parameter[]
  body?: Schema
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>
  public: boolean
}

export type KeyKind = 'service' | 'dynamic' | 'invalid' | 'missing'

export interface FuzzRequest {
  /** Path parameter values, inserted percent-encoded unless `rawPath` names them. */
  params: Record<string, string>
  rawPath: string[]
  /** Query pairs in order; a name may repeat. */
  query: Array<[string, string]>
  /** Query pairs appended without encoding (malformed escapes and the like). */
  rawQuery: string
  headers: Record<string, string>
  key: KeyKind
  /** The body exactly as sent; undefined sends none. */
  payload?: string
  contentType?: string
  /** What was changed from a valid request, for the failure report. */
  mutation: string
}

const DOC_URN = 'urn:vulnscan:openapi'

export function loadDocument (file = path.join(__dirname, '..', '..', 'openapi.yaml')): Schema {
  return parse(fs.readFileSync(file, 'utf8')) as Schema
}

export function operations (doc: Schema): Operation[] {
  const ops: Operation[] = []
  for (const [p, item] of Object.entries<Schema>(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method]
      if (op === undefined) continue
      ops.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path: p,
        parameters: [...(item.parameters ?? []), ...(op.parameters ?? [])],
        body: op.requestBody?.content?.['application/json']?.schema,
        responses: op.responses,
        public: Array.isArray(op.security) && op.security.length === 0
      })
    }
  }
  return ops
}

function retarget (node: unknown): unknown {
  if (Array.isArray(node)) return node.map(retarget)
  if (node === null || typeof node !== 'object') return node
  const out: Schema = {}
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? DOC_URN + v : retarget(v)
  }
  return out
}

/** Validates response bodies against the document's schemas, `$ref`s resolved to its components. */
export class ResponseChecker {
  private readonly ajv: Ajv
  private readonly cache = new Map<string, ValidateFunction>()

  constructor (doc: Schema) {
    this.ajv = new Ajv({ strict: false, allErrors: true })
    addFormats(this.ajv)
    this.ajv.addSchema({ $id: DOC_URN, components: retarget(doc.components) } as Schema)
  }

  /** Errors of `body` against the schema, or null when it conforms. */
  errors (cacheKey: string, schema: Schema, body: unknown): string | null {
    let validate = this.cache.get(cacheKey)
    if (validate === undefined) {
      validate = this.ajv.compile(retarget(schema) as Schema)
      this.cache.set(cacheKey, validate)
    }
    return validate(body) ? null : this.ajv.errorsText(validate.errors)
  }
}

export function resolve (doc: Schema, schema: Schema): Schema {
  let s = schema
  while (typeof s.$ref === 'string') {
    const name = s.$ref.replace('#/components/schemas/', '')
    s = doc.components.schemas[name]
  }
  return s
}

/**
 * Values the schema accepts. `overrides` replaces a named component (scan targets are loopback addresses only,
 * never a name to resolve). Arrays are kept short: the point is shapes, not volume.
 */
export function valid (doc: Schema, schema: Schema, overrides: Record<string, fc.Arbitrary<unknown>> = {}): fc.Arbitrary<unknown> {
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '')
    if (overrides[name] !== undefined) return overrides[name]
    return fc.constant(null).chain(() => valid(doc, doc.components.schemas[name], overrides))
  }
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum)
  if ('const' in schema) return fc.constant(schema.const)
  const alternatives = schema.anyOf ?? schema.oneOf
  if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map((s: Schema) => valid(doc, s, overrides)))
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((type: string) => valid(doc, { ...schema, type }, overrides)))
  switch (schema.type) {
    case 'null': return fc.constant(null)
    case 'boolean': return fc.boolean()
    case 'integer': return fc.integer({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6 })
    case 'number': return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true })
    case 'string': return validString(schema)
    case 'array': return fc.array(valid(doc, schema.items ?? {}, overrides), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) })
    case 'object': {
      const props: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [k, v] of Object.entries<Schema>(schema.properties ?? {})) props[k] = valid(doc, v, overrides)
      return fc.record(props, { requiredKeys: schema.required ?? [] })
    }
    default: return fc.jsonValue({ maxDepth: 2 })
  }
}

function validString (schema: Schema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0
  const max = schema.maxLength ?? 300
  if (schema.format === 'date-time') return fc.date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true }).map((d) => d.toISOString())
  if (typeof schema.pattern === 'string') {
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= max)
  }
  return fc.string({ minLength: min, maxLength: Math.min(max, 80), unit: 'grapheme' })
}

const byte = fc.integer({ min: 0, max: 255 })

/** Targets inside 127.0.0.0/8 or ::1 only: generated scans never name anything else. */
export const loopbackTarget: fc.Arbitrary<unknown> = fc.oneof(
  fc.tuple(byte, byte, byte).map(([a, b, c]) => ({ type: 'single_ip', value: `127.${a}.${b}.${c}` })),
  fc.constant({ type: 'single_ip', value: '::1' }),
  fc.tuple(byte, byte, fc.integer({ min: 22, max: 32 })).map(([a, b, bits]) => ({ type: 'cidr', value: `127.${a}.${b}.0/${bits}` })),
  fc.tuple(byte, byte, byte, fc.integer({ min: 0, max: 300 })).map(([a, b, c, n]) => {
    const end = Math.min(255, c + n)
    return { type: 'ip_range', value: `127.${a}.${b}.${c}-127.${a}.${b}.${end}` }
  })
)

const port = fc.integer({ min: 1, max: 65535 })

/** Port lists the service accepts, beside the schema's own strings (its pattern allows any digits). */
const portSpec: fc.Arbitrary<string> = fc.array(fc.oneof(port.map(String), fc.tuple(port, fc.integer({ min: 0, max: 200 })).map(([a, n]) => `${a}-${Math.min(65535, a + n)}`)), { minLength: 1, maxLength: 5 })
  .map((parts) => parts.join(','))

/** Text a client should never be able to hurt the service with, as a query value, path segment or header. */
export const nastyText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'Infinity', '-Infinity', '1e400', '-1e400', '1e21', '1e308', '9007199254740993', '-1', '-0', '0', 'NaN', '', ' ',
    '0x10', '1.5', '1,2', '١٢', 'true', 'null', '[]', '{}', '__proto__', 'constructor', 'x:state', 'a:b:c', '%', '%25',
    '%ff', '..', '.', '-42', '00000000000000000000000a', 'CVE-2024-6387', 'cve-9999-99999999999999999999', '::127.0.0.1',
    '::ffff:127.0.0.1', '127.0.0.1', '127.000.000.001', '0177.0.0.1', '[::1]', '127.0.0.1%eth0', 'fe80::1%lo',
    '\u0000', 'é', '\u202e', '😀', 'a'.repeat(65), 'a'.repeat(129), 'x'.repeat(5000)
  ),
  fc.string({ maxLength: 40, unit: 'binary' }),
  fc.string({ minLength: 100, maxLength: 2000 })
)

/** Numbers as text that a lenient parser reads as something out of range, or as no number at all. */
export const nastyNumber: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('Infinity', '-Infinity', '+Infinity', 'infinity', '1e400', '-1e400', '1e21', '1e308', '9007199254740993',
    '-1', '-0', '0', '0.0', '1.5', '10.0000001', 'NaN', '', '0x10', '0b1', '1_000', ' 5', '5 ', '١٢', '1e-400', '500.5', '501', '2147483648'),
  fc.double().map(String),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String)
)

/** JSON values of every type, including ones JSON.parse turns into extremes. */
export const nastyJson: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('1e400', '-1e400', '1e21', '-1', '0', '3.5', '9007199254740993', 'null', 'true', '[]', '{}', '""',
    '"Infinity"', '"1e400"', '"3"', '"x:state"', '"-42"', '"é"', '"\\u0000"', '[1,2,3]', '{"__proto__":{"x":1}}'),
  nastyText.map((s) => JSON.stringify(s)),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v))
)

/** Bodies that are not the JSON they claim to be. */
export const malformedJson: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', '{', '}', '[', '{"a":', '{"a":1,}', 'nul', 'NaN', 'Infinity', "{'a':1}", '\u0000', '{"a":1}{"b":2}', '\ufeff{}'),
  fc.string({ maxLength: 200, unit: 'binary' })
)

export const wrongContentType: fc.Arbitrary<string> = fc.constantFrom(
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml',
  'application/json; charset=latin1', 'application/jsonx', 'APPLICATION/JSON', 'application/merge-patch+json', '*/*'
)

const ACCEPT = fc.constantFrom('application/json', 'text/csv', 'text/event-stream', 'application/xml', '*/*', 'text/csv;q=0', 'text/*', 'é')

/** Replace the value at a path inside a JSON object; paths are chosen from the object's own leaves and nodes. */
function paths (v: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (v === null || typeof v !== 'object') return [prefix]
  const out: Array<Array<string | number>> = prefix.length > 0 ? [prefix] : []
  for (const [k, child] of Object.entries(v)) out.push(...paths(child, [...prefix, Array.isArray(v) ? Number(k) : k]))
  return out
}

function setAt (root: unknown, at: Array<string | number>, rawJson: string): string {
  // Substitute a marker, serialise, then splice the raw JSON in: keeps values JSON.stringify cannot write (1e400).
  const marker = '"\u0001MARK\u0001"'
  const copy = structuredClone(root) as any
  let node = copy
  for (const k of at.slice(0, -1)) node = node[k]
  node[at[at.length - 1]] = '\u0001MARK\u0001'
  return JSON.stringify(copy).replace(marker, rawJson)
}

export interface Pools {
  /**
   * Known values per path parameter name (ids of seeded objects), mixed with generated ones. Read when a value
   * is drawn, so ids added while the fuzz runs (scans it created) are drawn too.
   */
  params: Record<string, string[]>
  /** Known values per query parameter name (a report link's token), mixed with generated ones in the same way. */
  query?: Record<string, string[]>
  /** Ids a body's `id` takes now and then instead of a generated one: ids that once collided with store keys. */
  bodyIds?: string[]
}

function paramArb (doc: Schema, p: Parameter, pools: Pools): fc.Arbitrary<string> {
  const gen = valid(doc, p.schema).map((v) => String(v))
  const known = pools.params[p.name] ?? []
  if (known.length === 0) return gen
  return fc.oneof({ arbitrary: fc.nat().map((i) => known[i % known.length]), weight: 2 }, { arbitrary: gen, weight: 1 })
}

const keyKind: fc.Arbitrary<KeyKind> = fc.constantFrom<KeyKind>('service', 'service', 'service', 'dynamic', 'invalid', 'missing')

/** A request the document says is well-formed (the key may still be wrong: that is part of the contract too). */
export function validRequest (doc: Schema, op: Operation, pools: Pools): fc.Arbitrary<FuzzRequest> {
  const params: Record<string, fc.Arbitrary<string>> = {}
  for (const p of op.parameters.filter((p) => p.in === 'path')) params[p.name] = paramArb(doc, p, pools)
  const query = op.parameters.filter((p) => p.in === 'query')
  const queryValue = (p: Parameter): fc.Arbitrary<string> => {
    const gen = valid(doc, p.schema).map((v) => String(v))
    const known = pools.query?.[p.name] ?? []
    return known.length === 0 ? gen : fc.oneof({ arbitrary: fc.nat().map((i) => known[i % known.length]), weight: 2 }, { arbitrary: gen, weight: 1 })
  }
  // A required query parameter is always sent; an optional one now and then.
  const queryArb = fc.tuple(...query.map((p) => p.required === true
    ? queryValue(p).map((v) => [p.name, v] as [string, string])
    : fc.option(queryValue(p).map((v) => [p.name, v] as [string, string]), { freq: 2 })))
  const ids = pools.bodyIds ?? []
  const bodyArb = op.body === undefined
    ? fc.constant(undefined)
    : fc.tuple(valid(doc, op.body, {
      Target: loopbackTarget,
      ScanOptions: fc.oneof(valid(doc, doc.components.schemas.ScanOptions), fc.record({ template: valid(doc, doc.components.schemas.ScanOptions.properties.template), ports: portSpec }, { requiredKeys: [] })),
      // Expressions and zones the service accepts, beside ones it refuses: random text is almost never a cron.
      CronExpression: fc.oneof(fc.constantFrom('0 3 * * 1-5', '*/5 * * * * *', '@daily', '0 0 1 1 *', '30 2 * * sun'), valid(doc, doc.components.schemas.CronExpression)),
      // A test delivery may reach what PATCH sets: loopback only (the fuzz's deny list refuses the rest), no name to resolve.
      WebhookUrl: fc.oneof(fc.constantFrom('http://127.0.0.9:9/x?token=1', 'http://localhost:9/x', 'http://10.0.0.1/x', 'http://[::1]:9/x', 'http://93.184.216.34:8080/x'), valid(doc, doc.components.schemas.WebhookUrl)),
      TimeZone: fc.oneof(fc.constantFrom('UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata'), valid(doc, doc.components.schemas.TimeZone)),
      // A password credential with a fresh name beside random ones: random text is almost never a private key.
      CredentialCreate: fc.oneof(
        fc.record({ name: fc.stringMatching(/^[a-z][a-z0-9-]{2,20}$/), type: fc.constant('ssh'), username: fc.constantFrom('vulnscan', 'scan.user', '_svc'), password: fc.string({ minLength: 1, maxLength: 40 }) }),
        valid(doc, doc.components.schemas.CredentialCreate)),
      // A tracker the fuzz's deny list lets through, with a project of its kind, beside random ones (almost never valid).
      IntegrationCreate: fc.oneof(
        fc.record({ name: fc.stringMatching(/^[a-z][a-z0-9-]{2,20}$/), kind: fc.constant('github'), url: fc.constant('http://127.0.0.9:9/api'), project: fc.constantFrom('org/repo', 'example/security'), token: fc.string({ minLength: 1, maxLength: 40 }) }),
        valid(doc, doc.components.schemas.IntegrationCreate)),
      CredentialPatch: fc.oneof(
        fc.record({ description: fc.string({ maxLength: 50 }), port: fc.integer({ min: 1, max: 65535 }) }, { requiredKeys: [] }).filter((r) => Object.keys(r).length > 0),
        valid(doc, doc.components.schemas.CredentialPatch))
    }), fc.option(fc.nat(), { freq: 2 })).map(([b, pick]) => {
      const body = b as Record<string, unknown>
      if (pick !== null && ids.length > 0 && 'id' in (resolve(doc, op.body as Schema).properties ?? {})) body.id = ids[pick % ids.length]
      return JSON.stringify(body)
    })
  return fc.record({
    params: fc.record(params),
    query: queryArb.map((pairs) => pairs.filter((x): x is [string, string] => x !== null)),
    key: keyKind,
    payload: bodyArb,
    accept: fc.option(ACCEPT, { freq: 3 })
  }).map(({ params, query, key, payload, accept }) => ({
    params,
    rawPath: [],
    query,
    rawQuery: '',
    headers: accept === null ? {} as Record<string, string> : { accept },
    key,
    payload,
    contentType: payload === undefined ? undefined : 'application/json',
    mutation: 'none'
  }))
}

/** A valid request with one thing broken: a parameter, the body, its type, a header. */
export function invalidRequest (doc: Schema, op: Operation, pools: Pools): fc.Arbitrary<FuzzRequest> {
  const base = validRequest(doc, op, pools).map((r) => ({ ...r, key: 'service' as KeyKind }))
  const pathNames = op.parameters.filter((p) => p.in === 'path').map((p) => p.name)
  const queryNames = op.parameters.filter((p) => p.in === 'query').map((p) => p.name)
  const mutations: Array<fc.Arbitrary<(r: FuzzRequest) => FuzzRequest>> = [
    fc.tuple(fc.constantFrom('invalid', 'missing', 'dynamic') as fc.Arbitrary<KeyKind>, fc.constantFrom('', 'x'.repeat(5000), 'test-service-key-0123456789abcdeF', 'é', ' test-service-key-0123456789abcdef'))
      .map(([key, odd]) => (r) => ({ ...r, key, headers: key === 'invalid' && odd !== '' ? { ...r.headers, 'x-api-key': odd } : r.headers, mutation: `key ${key} ${odd.slice(0, 40)}` })),
    fc.tuple(fc.constantFrom('x-request-id', 'accept', 'x-forwarded-for', 'last-event-id', 'accept-encoding'), nastyText.filter((s) => /^[\t\x20-\x7e\x80-\xff]*$/.test(s)))
      .map(([name, value]) => (r) => ({ ...r, headers: { ...r.headers, [name]: value }, mutation: `header ${name}=${value.slice(0, 60)}` })),
    fc.constant((r: FuzzRequest) => ({ ...r, rawQuery: 'unknown=1&__proto__[x]=1&constructor=1', mutation: 'unknown query params' }))
  ]
  if (pathNames.length > 0) {
    mutations.push(fc.tuple(fc.constantFrom(...pathNames), nastyText, fc.boolean())
      .map(([name, value, raw]) => (r) => ({
        ...r,
        params: { ...r.params, [name]: value },
        rawPath: raw ? [name] : [],
        mutation: `path ${name}=${JSON.stringify(value.slice(0, 60))}${raw ? ' (raw)' : ''}`
      })))
  }
  if (queryNames.length > 0) {
    const numeric = new Set(op.parameters.filter((p) => p.in === 'query' && ['integer', 'number'].includes(p.schema.type)).map((p) => p.name))
    mutations.push(fc.constantFrom(...queryNames).chain((name) => fc.tuple(fc.constant(name), numeric.has(name) ? fc.oneof(nastyNumber, nastyText) : nastyText))
      .map(([name, value]) => (r) => ({ ...r, query: [...r.query.filter(([n]) => n !== name), [name, value]], mutation: `query ${name}=${JSON.stringify(value.slice(0, 60))}` })))
    mutations.push(fc.tuple(fc.constantFrom(...queryNames), fc.array(nastyText, { minLength: 2, maxLength: 3 }))
      .map(([name, values]) => (r) => ({ ...r, query: [...r.query, ...values.map((v) => [name, v] as [string, string])], mutation: `duplicated query ${name}=${JSON.stringify(values.map((v) => v.slice(0, 30)))}` })))
    mutations.push(fc.constantFrom('%', '%f', '%ff', '%00', '%zz', 'limit=%E2%82', '&&&', '=', '?&=')
      .map((raw) => (r) => ({ ...r, rawQuery: raw, mutation: `raw query ${raw}` })))
  }
  if (op.body !== undefined) {
    mutations.push(malformedJson.map((payload) => (r) => ({ ...r, payload, mutation: `malformed body ${JSON.stringify(payload.slice(0, 60))}` })))
    mutations.push(wrongContentType.map((contentType) => (r) => ({ ...r, contentType, mutation: `content-type ${contentType}` })))
    mutations.push(fc.constant((r: FuzzRequest) => ({ ...r, contentType: undefined, mutation: 'body without content-type' })))
    mutations.push(fc.constant((r: FuzzRequest) => ({ ...r, payload: undefined, contentType: undefined, mutation: 'no body' })))
    mutations.push(fc.tuple(fc.nat(), nastyJson).map(([pick, json]) => (r) => {
      const parsed = JSON.parse(r.payload ?? 'null') as unknown
      const all = paths(parsed)
      if (all.length === 0) return { ...r, payload: json, mutation: `body ${json.slice(0, 60)}` }
      const at = all[pick % all.length]
      return { ...r, payload: at.length === 0 ? json : setAt(parsed, at, json), mutation: `body ${at.join('.')}=${json.slice(0, 60)}` }
    }))
    mutations.push(fc.tuple(fc.string({ maxLength: 20 }), nastyJson).map(([k, json]) => (r) => {
      const parsed = JSON.parse(r.payload ?? 'null') as unknown
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return r
      const extra = `,${JSON.stringify(k)}:${json}}`
      const text = JSON.stringify(parsed)
      return { ...r, payload: text === '{}' ? `{${extra.slice(1)}` : text.slice(0, -1) + extra, mutation: `extra body field ${JSON.stringify(k)}=${json.slice(0, 40)}` }
    }))
    mutations.push(fc.integer({ min: 1, max: 40 }).map((n) => (r) => {
      // A big body: at most a little over the test's limit; the document promises 413 beyond it.
      const payload = JSON.stringify({ targets: Array.from({ length: n * 700 }, (_, i) => ({ type: 'single_ip', value: `127.0.${(i >> 8) & 255}.${i & 255}` })) })
      return { ...r, payload, contentType: 'application/json', mutation: `body of ${payload.length} bytes` }
    }))
  } else {
    mutations.push(fc.tuple(fc.constantFrom('{}', '{"a":1}', 'not json'), fc.constantFrom('application/json', 'text/plain'))
      .map(([payload, contentType]) => (r) => ({ ...r, payload, contentType, mutation: `unexpected body ${payload} as ${contentType}` })))
  }
  return fc.tuple(base, fc.oneof(...mutations)).map(([r, mutate]) => mutate(r))
}

export function urlOf (op: Operation, r: FuzzRequest): string {
  let url = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = r.params[name] ?? ''
    return r.rawPath.includes(name) ? v : encodeURIComponent(v)
  })
  const qs = r.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
  if (r.rawQuery !== '') qs.push(r.rawQuery)
  if (qs.length > 0) url += '?' + qs.join('&')
  return url
}
