import { test } from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { generateOpenApi } from '../scripts/gen-openapi'

test('openapi.yaml is what the code generates (run `npm run openapi` after changing a route)', async (t) => {
  const generated = await generateOpenApi()
  const checkedIn = readFileSync(join(__dirname, '..', 'openapi.yaml'), 'utf8')
  t.equal(checkedIn, generated)
})

test('the document: 3.1, components named by $id, operationId, tags and error responses on every operation', async (t) => {
  const doc = parse(await generateOpenApi())
  t.equal(doc.openapi, '3.1.0')
  t.notMatch(JSON.stringify(doc), /def-\d/, 'no def-N component names')
  for (const name of ['Error', 'ScanRequest', 'ScanAck', 'Scan', 'Host', 'ApiKey', 'PageHost']) t.ok(doc.components.schemas[name], `component ${name}`)
  t.same(doc.components.securitySchemes.apiKey, { type: 'apiKey', in: 'header', name: 'X-API-Key', description: doc.components.securitySchemes.apiKey.description })
  for (const path of ['/health', '/app/scan', '/host']) t.ok(doc.paths[path], `seed path ${path} documented exactly`)
  t.notOk(Object.keys(doc.paths).some((p) => p.length > 1 && p.endsWith('/')), 'no trailing slashes')
  const ids = new Set<string>()
  for (const [path, ops] of Object.entries<Record<string, { operationId?: string, tags?: string[], responses: Record<string, unknown> }>>(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      t.ok(op.operationId, `${method} ${path} has an operationId`)
      t.notOk(ids.has(op.operationId!), 'operationIds are unique')
      ids.add(op.operationId!)
      t.ok(op.tags?.length, `${method} ${path} has tags`)
      t.ok(Object.keys(op.responses).some((s) => s.startsWith('4')), `${method} ${path} documents a 4xx`)
    }
  }
  t.match(doc.paths['/app/scan'].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/ScanRequest' })
  t.match(doc.components.schemas.ScanRequest.properties.priority.description, /5 .*most urgent/)
  t.same(doc.paths['/health'].get.security, [], '/health needs no key')
})
