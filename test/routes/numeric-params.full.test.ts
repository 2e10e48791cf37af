// Every numeric query or path parameter of every operation is bounded and refuses what is not a finite number
// in range, with a 400 in the error shape, on every backend. The operations come from the live document, so a
// new route is covered as soon as it exists.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'

interface Param { name: string, in: string, required?: boolean, schema: { type?: string, minimum?: number, maximum?: number } }
interface Op { parameters?: Param[] }

const HOSTILE = ['Infinity', '-Infinity', '1e400', '-1e400', 'NaN', '1e21', '-1e21', '9007199254740993', '1e308']

function numeric (p: Param): boolean {
  return p.schema.type === 'integer' || p.schema.type === 'number'
}

function sample (p: Param): string {
  if (numeric(p)) return String(p.schema.minimum ?? 1)
  if (p.name === 'address') return '127.0.0.1'
  if (p.name === 'cveId') return 'CVE-2024-0001'
  return 'x'
}

test('every numeric parameter in the document has finite bounds', async (t) => {
  const { app } = await build(t, 'memory')
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, Op>> }
  let seen = 0
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const p of op.parameters ?? []) {
        if (!numeric(p)) continue
        seen++
        t.ok(Number.isFinite(p.schema.minimum), `${method} ${path} ${p.name} has a minimum`)
        t.ok(Number.isFinite(p.schema.maximum) && (p.schema.maximum as number) <= Number.MAX_SAFE_INTEGER, `${method} ${path} ${p.name} has a safe maximum`)
      }
    }
  }
  t.ok(seen >= 5, `numeric parameters found (${seen})`)
})

test('non-finite and out-of-range numbers are a 400 everywhere', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const doc = app.swagger() as unknown as { paths: Record<string, Record<string, Op>> }
      for (const [path, ops] of Object.entries(doc.paths)) {
        const op = ops.get
        if (op === undefined) continue
        for (const p of (op.parameters ?? []).filter(numeric)) {
          for (const bad of HOSTILE) {
            let url = path
            const query = new URLSearchParams()
            for (const q of op.parameters ?? []) {
              const value = q === p ? bad : sample(q)
              if (q.in === 'path') url = url.replace(`{${q.name}}`, encodeURIComponent(value))
              else if (q === p || q.required === true) query.set(q.name, value)
            }
            const res = await app.inject({ url: `${url}?${query.toString()}`, headers: { 'x-api-key': SERVICE_KEY } })
            t.equal(res.statusCode, 400, `GET ${url}?${query.toString()}`)
            t.match(res.json(), { error: String, code: 'VULNSCAN_VALIDATION' })
            t.match(res.json().error, p.name)
          }
        }
      }
    })
  }
})
