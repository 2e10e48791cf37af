// The generated SDK against a live server: every operation of openapi.yaml is called through the typed
// client, and every answer is checked against the document (status listed, media type listed, JSON body
// valid against the response schema), so a route that disagrees with its own document fails here.
import { test } from 'tap'
import { readFileSync } from 'node:fs'
import { parse } from 'yaml'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { createVulnscanClient, type VulnscanClient } from '../../sdk'
import { generateSdkTypes, OPENAPI_FILE, SDK_TYPES_FILE } from '../../scripts/gen-sdk'
import { backends, build, SERVICE_KEY } from '../helper'
import { startFakeNvd } from '../support/fake-nvd'
import { startReceiver } from '../support/webhook-receiver'
import { listenOnLoopback } from '../support/raw-http'

interface Operation {
  operationId: string
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>
}
type Document = { paths: Record<string, Record<string, Operation>>, components: Record<string, unknown> }

const doc = parse(readFileSync(OPENAPI_FILE, 'utf8')) as Document
const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'])
const allOperationIds = Object.values(doc.paths).flatMap((ops) => Object.entries(ops).filter(([m]) => METHODS.has(m)).map(([, op]) => op.operationId)).sort()

/**
 * Copies a schema with its references pointed at the registered document, and objects closed to fields the
 * document does not list: response schemas are the allow-list of what may leave the server, and a route
 * that sends stored JSON as it is (no serializer in between) could otherwise leak fields unnoticed.
 */
function strict (schema: unknown, insideAllOf = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => strict(s, insideAllOf))
  if (schema === null || typeof schema !== 'object') return schema
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith('#/')) out[k] = `vulnscan.yaml${v}`
    else if (k === 'allOf') out[k] = (v as unknown[]).map((s) => strict(s, true))
    else out[k] = strict(v, false)
  }
  // Inside allOf each part sees only its own properties, so closing one would refuse the others' fields.
  if (!insideAllOf && !('allOf' in out) && out.properties !== undefined && out.additionalProperties === undefined && out.unevaluatedProperties === undefined) {
    out.additionalProperties = false
  }
  return out
}

function contractChecker () {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false })
  addFormats(ajv)
  ajv.addSchema({ $id: 'vulnscan.yaml', components: strict(doc.components) } as object)
  const validators = new Map<string, ReturnType<typeof ajv.compile>>()
  return function validator (path: string, method: string, status: string, mediaType: string) {
    const key = `${method} ${path} ${status} ${mediaType}`
    let v = validators.get(key)
    if (v === undefined) {
      const schema = doc.paths[path][method].responses[status].content?.[mediaType]?.schema
      v = ajv.compile(strict(schema ?? {}) as object)
      validators.set(key, v)
    }
    return v
  }
}

test('sdk/schema.d.ts is what `npm run sdk` generates from openapi.yaml', async (t) => {
  t.equal(readFileSync(SDK_TYPES_FILE, 'utf8'), await generateSdkTypes(), 'run `npm run sdk` after `npm run openapi`')
})

test('the contract checker itself refuses what the document does not allow', async (t) => {
  const validate = contractChecker()
  const v = validate('/app/scan', 'post', '200', 'application/json')
  t.ok(v({ status: 'Message sent successfully', id: 'a' }), 'a valid acknowledgement passes')
  t.notOk(v({ status: 'Message sent', id: 'a' }), 'a wrong constant fails')
  t.notOk(v({ status: 'Message sent successfully', id: 'a', secret: 'x' }), 'a field the document does not list fails')
  const page = validate('/host', 'get', '200', 'application/json')
  t.notOk(page({ items: [{ address: '127.0.0.1' }], total: 1, limit: 50, offset: 0 }), 'a host missing required fields fails through $ref')
})

interface Call { operationId: string, status: number }

test('every operation through the generated client agrees with openapi.yaml', async (t) => {
  for (const backend of await backends()) t.test(backend, async (t) => {
    // The worker matches against the real fixture records, served by the fake NVD (never the real one), which
    // admits any rate: the client need not keep to NVD's public 5 requests per 30 s.
    const nvd = await startFakeNvd({ rateLimit: null })
    t.teardown(() => nvd.close())
    const { app } = await build(t, backend, { WORKER_ENABLED: true, NVD_API_URL: nvd.baseUrl, NVD_RATE_LIMIT: 1000, WEBHOOK_ALLOW: '127.0.0.0/8' })
    const listening = await listenOnLoopback(app)
    const baseUrl = `http://${listening.host}:${listening.port}`
    const validate = contractChecker()
    const calls: Call[] = []

    // Checks every answer any client below receives, whatever the operation.
    const checkAnswers = {
      async onResponse ({ request, response, schemaPath }: { request: Request, response: Response, schemaPath: string }) {
        const method = request.method.toLowerCase()
        const op = doc.paths[schemaPath]?.[method]
        if (op === undefined) {
          t.fail(`${request.method} ${schemaPath} is not in openapi.yaml`)
          return undefined
        }
        const status = String(response.status)
        calls.push({ operationId: op.operationId, status: response.status })
        const documented = op.responses[status]
        if (!t.ok(documented, `${op.operationId}: status ${status} is documented`, { documented: Object.keys(op.responses) })) return undefined
        const type = (response.headers.get('content-type') ?? '').split(';')[0].trim()
        const content = documented.content ?? {}
        if (Object.keys(content).length === 0) {
          t.equal(await response.clone().text(), '', `${op.operationId} ${status}: no body, as documented`)
          return undefined
        }
        if (!t.ok(content[type], `${op.operationId} ${status}: media type ${type} is documented`, { documented: Object.keys(content) })) return undefined
        if (type === 'application/json') {
          const body: unknown = await response.clone().json()
          const v = validate(schemaPath, method, status, type)
          t.ok(v(body), `${op.operationId} ${status}: body matches the document`, { errors: v.errors, body })
        }
        return undefined
      }
    }
    const client = (apiKey?: string): VulnscanClient => {
      const c = createVulnscanClient({ baseUrl, apiKey })
      c.use(checkAnswers)
      return c
    }
    const admin = client(SERVICE_KEY)

    t.test('health', async (t) => {
      const { data } = await client().GET('/health')
      t.equal(data?.status, 'ok')
    })

    t.test('unauthenticated and invalid requests get the documented errors', async (t) => {
      const { error, response } = await client('wrong-key-0123456789').GET('/host')
      t.equal(response.status, 401)
      t.same(error, { error: 'Invalid API key' })
      const bad = await admin.POST('/app/scan', { body: { targets: [{ value: '999.1.1.1', type: 'single_ip' }] } })
      t.equal(bad.response.status, 400)
      const missing = await admin.GET('/app/scan/{id}', { params: { path: { id: 'no-such-scan' } } })
      t.equal(missing.response.status, 404)
    })

    t.test('dynamic keys: create, list, use, admin refused, revoke', async (t) => {
      const created = await admin.POST('/admin/keys', { body: { label: 'sdk-test', expiresIn: '1d' } })
      t.equal(created.response.status, 201)
      const key = created.data!
      const listed = await admin.GET('/admin/keys', { params: { query: { limit: 10 } } })
      t.ok(listed.data?.items.some((k) => k.id === key.id), 'the new key is listed')
      const user = client(key.key)
      t.equal((await user.GET('/host')).response.status, 200, 'the dynamic key works')
      t.equal((await user.GET('/admin/keys')).response.status, 403, 'but not on admin routes')
      const changed = await admin.PATCH('/admin/keys/{id}', { params: { path: { id: key.id } }, body: { role: 'reader', scope: ['127.0.0.0/8'] } })
      t.equal(changed.response.status, 200)
      t.equal(changed.data?.role, 'reader')
      t.same(changed.data?.scope, ['127.0.0.0/8'])
      t.equal((await user.POST('/app/scan', { body: { targets: [{ value: '127.0.0.1', type: 'single_ip' }] } })).response.status, 403, 'a reader may not post')
      const audit = await admin.GET('/admin/audit', { params: { query: { method: 'PATCH', keyId: 'service', limit: 5 } } })
      t.equal(audit.response.status, 200)
      t.equal(audit.data?.items[0]?.targetId, key.id, 'the change is in the audit log')
      const refused = await admin.GET('/admin/audit/refused', { params: { query: { limit: 5 } } })
      t.equal(refused.response.status, 200, 'refused requests are counted per address')
      t.type(refused.data?.total, 'number')
      t.equal((await admin.DELETE('/admin/keys/{id}', { params: { path: { id: key.id } } })).response.status, 204)
      t.equal((await user.GET('/host')).response.status, 401, 'a revoked key is refused at once')
      t.equal((await admin.DELETE('/admin/keys/{id}', { params: { path: { id: key.id } } })).response.status, 404, 'revoking twice is a 404')
    })

    t.test('schedules: create, list, change, delete', async (t) => {
      const created = await admin.POST('/app/schedule', { body: { name: 'sdk', cron: '0 3 * * 1-5', timezone: 'Europe/Paris', scan: { targets: [{ value: '127.0.0.1', type: 'single_ip' }], options: { template: 'discovery' } } } })
      t.equal(created.response.status, 201)
      const id = created.data!.id
      t.ok(created.data?.nextRunAt, 'a next run')
      const bad = await admin.POST('/app/schedule', { body: { cron: '0 3 * *', scan: { targets: [{ value: '127.0.0.1', type: 'single_ip' }] } } })
      t.equal(bad.response.status, 400, 'a cron with 4 fields: 400')
      t.ok((await admin.GET('/app/schedule', { params: { query: { limit: 10 } } })).data?.items.some((x) => x.id === id))
      t.equal((await admin.GET('/app/schedule/{id}', { params: { path: { id } } })).data?.name, 'sdk')
      const off = await admin.PATCH('/app/schedule/{id}', { params: { path: { id } }, body: { enabled: false } })
      t.equal(off.data?.nextRunAt, null, 'disabled: no next run')
      t.equal((await admin.DELETE('/app/schedule/{id}', { params: { path: { id } } })).response.status, 204)
      t.equal((await admin.GET('/app/schedule/{id}', { params: { path: { id } } })).response.status, 404)
    })

    t.test('webhooks: create, test delivery, log, change, delete', async (t) => {
      const rx = await startReceiver([204])
      t.teardown(() => rx.close())
      const created = await admin.POST('/admin/webhook', { body: { url: rx.url, events: ['scan.failed'], filter: { minSeverity: 'high' }, format: 'json' } })
      t.equal(created.response.status, 201)
      const id = created.data!.id
      t.match(created.data?.secret, /^whsec_/)
      t.equal((await admin.POST('/admin/webhook', { body: { url: 'http://10.0.0.1/x', events: ['scan.failed'] } })).response.status, 400, 'a private address: 400')
      t.ok((await admin.GET('/admin/webhook', { params: { query: { limit: 10 } } })).data?.items.some((w) => w.id === id))
      t.equal((await admin.GET('/admin/webhook/{id}', { params: { path: { id } } })).data?.url, rx.url)
      const sent = await admin.POST('/admin/webhook/{id}/test', { params: { path: { id } } })
      t.match(sent.data, { ok: true, statusCode: 204, event: 'webhook.test' })
      t.equal((await rx.waitFor(1)).length, 1)
      t.equal((await admin.GET('/admin/webhook/{id}/deliveries', { params: { path: { id }, query: { limit: 5 } } })).data?.total, 1)
      t.equal((await admin.PATCH('/admin/webhook/{id}', { params: { path: { id } }, body: { enabled: false } })).data?.enabled, false)
      t.equal((await admin.DELETE('/admin/webhook/{id}', { params: { path: { id } } })).response.status, 204)
      t.equal((await admin.GET('/admin/webhook/{id}', { params: { path: { id } } })).response.status, 404)
    })

    t.test('webhooks: a delivery that failed for good is sent again', async (t) => {
      const rx = await startReceiver([204])
      t.teardown(() => rx.close())
      const id = (await admin.POST('/admin/webhook', { body: { url: rx.url, events: ['scan.completed'] } })).data!.id
      await app.store.keepFailedDelivery({
        webhookId: id, eventId: 'sdk-failed-delivery', event: 'scan.completed', body: '{"event":"scan.completed"}',
        failedAt: new Date().toISOString(), attempts: 5, statusCode: 503, error: 'the receiver answered 503'
      })
      t.equal((await admin.GET('/admin/webhook/{id}/deliveries', { params: { path: { id }, query: { failed: true } } })).data?.total, 1, 'listed as failed')
      const again = await admin.POST('/admin/webhook/{id}/deliveries/{delivery}/retry', { params: { path: { id, delivery: 'sdk-failed-delivery' } } })
      t.match(again.data, { status: 'queued', delivery: 'sdk-failed-delivery', event: 'scan.completed' })
      t.equal((await admin.POST('/admin/webhook/{id}/deliveries/{delivery}/retry', { params: { path: { id, delivery: 'no-such-delivery' } } })).response.status, 404)
      t.equal((await admin.DELETE('/admin/webhook/{id}', { params: { path: { id } } })).response.status, 204)
    })

    t.test('integrations: create (token never returned), list, change, sync, deliveries, delete', async (t) => {
      const created = await admin.POST('/admin/integrations', { body: { name: 'sdk', kind: 'gitlab', url: 'https://gitlab.example.com', project: 'sec/vulns', token: 'sdk-secret-token' } })
      t.equal(created.response.status, 201)
      const id = created.data!.id
      t.notOk(JSON.stringify(created.data).includes('sdk-secret-token'), 'no token in the answer')
      t.equal((await admin.POST('/admin/integrations', { body: { name: 'x', kind: 'github', url: 'https://api.github.com', project: 'no-slash', token: 't' } })).response.status, 400, 'a GitHub project without owner/repo: 400')
      t.ok((await admin.GET('/admin/integrations', { params: { query: { limit: 10 } } })).data?.items.some((x) => x.id === id))
      t.equal((await admin.GET('/admin/integrations/{id}', { params: { path: { id } } })).data?.grouping, 'finding')
      t.equal((await admin.POST('/admin/integrations/{id}/sync', { params: { path: { id } } })).response.status, 202)
      t.equal((await admin.GET('/admin/integrations/{id}/deliveries', { params: { path: { id }, query: { failed: true } } })).response.status, 200)
      t.equal((await admin.PATCH('/admin/integrations/{id}', { params: { path: { id } }, body: { enabled: false } })).data?.enabled, false)
      t.equal((await admin.DELETE('/admin/integrations/{id}', { params: { path: { id } } })).response.status, 204)
      t.equal((await admin.GET('/admin/integrations/{id}', { params: { path: { id } } })).response.status, 404)
    })

    t.test('templates: the loaded network templates, with what was refused', async (t) => {
      const listed = await admin.GET('/templates')
      t.equal(listed.response.status, 200)
      t.ok((listed.data?.items.length ?? 0) > 0, `${listed.data?.items.length ?? 0} templates loaded (the project's own)`)
    })

    t.test('credentials: store, list, read without the secret, rotate, re-seal, delete', async (t) => {
      const created = await admin.POST('/admin/credentials', { body: { name: 'sdk-credential', type: 'ssh', username: 'scanner', password: 'sdk-secret-1' } })
      t.equal(created.response.status, 201)
      const id = created.data!.id
      t.notOk(JSON.stringify(created.data).includes('sdk-secret-1'), 'the secret is never returned')
      t.ok((await admin.GET('/admin/credentials', { params: { query: { limit: 10 } } })).data?.items.some((c) => c.id === id))
      t.equal((await admin.GET('/admin/credentials/{id}', { params: { path: { id } } })).data?.username, 'scanner')
      const rotated = await admin.PATCH('/admin/credentials/{id}', { params: { path: { id } }, body: { password: 'sdk-secret-2' } })
      t.equal(rotated.response.status, 200)
      t.notOk(JSON.stringify(rotated.data).includes('sdk-secret-2'))
      t.equal((await admin.POST('/admin/credentials/rotate', {})).response.status, 200, 'every secret sealed again under the current key')
      t.equal((await admin.DELETE('/admin/credentials/{id}', { params: { path: { id } } })).response.status, 204)
      t.equal((await admin.GET('/admin/credentials/{id}', { params: { path: { id } } })).response.status, 404)
    })

    const scanId = `sdk-${backend}-${Date.now()}`
    t.test('a quick scan of 127.0.0.1 runs to completion', async (t) => {
      const posted = await admin.POST('/app/scan', { body: { id: scanId, targets: [{ value: '127.0.0.1', type: 'single_ip' }], options: { template: 'quick' }, priority: 5 } })
      t.same(posted.data, { status: 'Message sent successfully', id: scanId })
      const conflict = await admin.POST('/app/scan', { body: { id: scanId, targets: [{ value: '127.0.0.2', type: 'single_ip' }] } })
      t.equal(conflict.response.status, 409, 'same id, other body: 409')
      let scan
      const deadline = Date.now() + 90_000
      do {
        await new Promise((resolve) => setTimeout(resolve, 250))
        scan = (await admin.GET('/app/scan/{id}', { params: { path: { id: scanId } } })).data
      } while (scan !== undefined && !['completed', 'failed', 'cancelled'].includes(scan.status) && Date.now() < deadline)
      t.equal(scan?.status, 'completed', 'the scan completed', { scan })
      t.equal(scan?.progress.percent, 100)
      const listed = await admin.GET('/app/scan', { params: { query: { status: 'completed' } } })
      t.ok(listed.data?.items.some((s) => s.id === scanId), 'listed among completed scans')
    })

    t.test('the scan\'s events: progress or end events carrying the Scan, then the stream closes', async (t) => {
      const { data, response } = await admin.GET('/app/scan/{id}/events', { params: { path: { id: scanId } }, parseAs: 'text', signal: AbortSignal.timeout(20_000) })
      t.equal(response.status, 200)
      const events = (data ?? '').split('\n\n').filter((block) => block.startsWith('event:')).map((block) => {
        const [, name] = /^event: (\S+)/.exec(block) ?? []
        const json = /^data: (.*)$/m.exec(block)?.[1]
        return { name, data: json === undefined ? undefined : JSON.parse(json) as unknown }
      })
      t.ok(events.length >= 1, 'at least the final event')
      const last = events[events.length - 1]
      t.equal(last.name, 'end', 'the last event is end')
      t.match(last.data, { id: scanId, status: 'completed' })
      const isScan = contractChecker()('/app/scan/{id}', 'get', '200', 'application/json')
      for (const e of events) t.ok(isScan(e.data), `${e.name} event data is a Scan as the document defines it`, { errors: isScan.errors })
      const missing = await admin.GET('/app/scan/{id}/events', { params: { path: { id: 'no-such-scan' } }, parseAs: 'text' })
      t.equal(missing.response.status, 404)
    })

    t.test('the scan\'s report: JSON as the document defines it, the other formats by their media types', async (t) => {
      const json = await admin.GET('/app/scan/{id}/report', { params: { path: { id: scanId }, query: { format: 'json' } } })
      t.equal(json.response.status, 200)
      t.equal((json.data as { scan: { id: string } } | undefined)?.scan.id, scanId)
      for (const format of ['csv', 'sarif', 'html'] as const) {
        const other = await admin.GET('/app/scan/{id}/report', { params: { path: { id: scanId }, query: { format } }, parseAs: 'text' })
        t.equal(other.response.status, 200, format)
        t.match(other.response.headers.get('content-disposition'), new RegExp(`filename="vulnscan-report-.*\\.${format}"`))
      }
      const link = await admin.POST('/app/scan/{id}/report/link', { params: { path: { id: scanId } }, body: { expiresIn: 120 } })
      t.equal(link.response.status, 200, 'a link to the report')
      const token = new URL(link.data!.url, baseUrl).searchParams.get('token') ?? ''
      const shared = await client().GET('/app/scan/{id}/report/shared', { params: { path: { id: scanId }, query: { token } }, parseAs: 'text' })
      t.equal(shared.response.status, 200, 'opened without a key')
      t.match(shared.response.headers.get('content-disposition'), /^inline;/)
      const forged = await client().GET('/app/scan/{id}/report/shared', { params: { path: { id: scanId }, query: { token: `${token.split('.')[0]}.AAAAAAAAAAAA` } } })
      t.equal(forged.response.status, 403, 'a changed link is refused')
      const missing = await admin.GET('/app/scan/{id}/report', { params: { path: { id: 'no-such-scan' } } })
      t.equal(missing.response.status, 404)
    })

    t.test('cancelling: a queued scan is cancelled, an ended one is a 409', async (t) => {
      // Lowest priority and the whole port range, so it is still queued or running when the cancel arrives.
      const id = `sdk-cancel-${backend}`
      await admin.POST('/app/scan', { body: { id, targets: [{ value: '127.0.0.1', type: 'single_ip' }], options: { template: 'full' }, priority: 1 } })
      const cancelled = await admin.DELETE('/app/scan/{id}', { params: { path: { id } } })
      t.equal(cancelled.response.status, 200)
      t.equal(cancelled.data?.status, 'cancelled')
      t.equal((await admin.DELETE('/app/scan/{id}', { params: { path: { id } } })).response.status, 409, 'cancelling twice: 409')
      t.equal((await admin.DELETE('/app/scan/{id}', { params: { path: { id: scanId } } })).response.status, 409, 'a completed scan: 409')
      t.equal((await admin.DELETE('/app/scan/{id}', { params: { path: { id: 'no-such-scan' } } })).response.status, 404)
    })

    t.test('one scan\'s results, and a diff with another', async (t) => {
      const hosts = await admin.GET('/host', { params: { query: { scanId } } })
      t.ok(hosts.data?.items.some((h) => h.address === '127.0.0.1'), 'the scan saw 127.0.0.1')
      const found = await admin.GET('/vulnerability', { params: { query: { scanId, limit: 500 } } })
      const page = found.data as { total: number, items: Array<{ address: string }> }
      t.ok(page.total > 0, 'and observed findings there')
      t.ok(page.items.every((f) => f.address === '127.0.0.1'))
      t.equal((await admin.GET('/host', { params: { query: { scanId: 'no-such-scan' } } })).response.status, 404, 'an unknown scan: 404')
      const none = await admin.GET('/app/scan/{id}/diff', { params: { path: { id: scanId } } })
      t.equal(none.response.status, 409, 'no earlier completed scan of 127.0.0.1: 409')
      const against = `sdk-cancel-${backend}`
      const diff = await admin.GET('/app/scan/{id}/diff', { params: { path: { id: scanId }, query: { against, limit: 10 } } })
      t.equal(diff.response.status, 200)
      t.equal(diff.data?.against, against)
      t.equal(diff.data?.totals.newFindings, page.total, 'against a scan cancelled before it saw anything, every finding is new')
      t.same(diff.data?.hosts.appeared.map((h) => h.address), ['127.0.0.1'])
      t.equal((await admin.GET('/app/scan/{id}/diff', { params: { path: { id: 'no-such-scan' } } })).response.status, 404)
    })

    t.test('hosts', async (t) => {
      const { data } = await admin.GET('/host')
      const host = data?.items.find((h) => h.address === '127.0.0.1')
      t.ok(host, '127.0.0.1 is a host now')
      t.ok(host?.ports.some((p) => p.state === 'open'), 'with open ports')
    })

    t.test('one host: its record and its findings', async (t) => {
      const host = await admin.GET('/host/{address}', { params: { path: { address: '127.0.0.1' } } })
      t.equal(host.response.status, 200)
      t.equal(host.data?.address, '127.0.0.1')
      const filtered = await admin.GET('/host', { params: { query: { port: host.data?.ports.find((p) => p.state === 'open')?.port, sort: 'address' } } })
      t.ok(filtered.data?.items.some((h) => h.address === '127.0.0.1'), 'found again by one of its open ports')
      const found = await admin.GET('/host/{address}/vulnerability', { params: { path: { address: '127.0.0.1' }, query: { sort: 'cvss' } } })
      t.equal(found.response.status, 200)
      t.ok(found.data!.items.length > 0, 'the fixture NVD records give findings for this machine\'s daemons', { host: host.data })
      t.equal(found.data!.items.length, host.data!.findingsCount, 'the host counts what its finding list holds')
      const hostBom = await admin.GET('/host/{address}/report', { params: { path: { address: '127.0.0.1' }, query: { format: 'cyclonedx' } }, parseAs: 'text' })
      t.equal(hostBom.response.status, 200, 'the host\'s CycloneDX document')
      t.match(JSON.parse(hostBom.data as string), { bomFormat: 'CycloneDX', specVersion: '1.6' })
      const listVex = await admin.GET('/vulnerability/report', { params: { query: { format: 'openvex', host: '127.0.0.1' } }, parseAs: 'text' })
      t.equal(listVex.response.status, 200, 'the finding list\'s OpenVEX document')
      t.equal(JSON.parse(listVex.data as string).statements.length, found.data!.total, 'one statement per finding')
      const unknown = await admin.GET('/host/{address}', { params: { path: { address: '192.0.2.77' } } })
      t.equal(unknown.response.status, 404, 'a host never scanned is a 404')
      const invalid = await admin.GET('/host/{address}', { params: { path: { address: 'not-an-address' } } })
      t.equal(invalid.response.status, 400, 'an address that is none is a 400')
    })

    t.test('host tags: set, changed, filtered on', async (t) => {
      const path = { address: '127.0.0.1' }
      const set = await admin.PUT('/host/{address}/tags', { params: { path }, body: { tags: ['sdk', 'prod'] } })
      t.equal(set.response.status, 200)
      t.same(set.data?.tags, ['prod', 'sdk'])
      const changed = await admin.PATCH('/host/{address}/tags', { params: { path }, body: { add: ['team:sdk'], remove: ['prod'] } })
      t.same(changed.data?.tags, ['sdk', 'team:sdk'])
      t.equal((await admin.PUT('/host/{address}/tags', { params: { path }, body: { tags: ['Not-A-Tag'] } })).response.status, 400)
      t.equal((await admin.PATCH('/host/{address}/tags', { params: { path: { address: '192.0.2.77' } }, body: { add: ['x'] } })).response.status, 404)
      t.same((await admin.GET('/host', { params: { query: { tag: 'team:sdk' } } })).data?.items.map((h) => h.address), ['127.0.0.1'])
      type FindingPage = { total: number } | undefined
      const tagged = (await admin.GET('/vulnerability', { params: { query: { tag: 'team:sdk', limit: 500 } } })).data as FindingPage
      const onHost = (await admin.GET('/vulnerability', { params: { query: { host: '127.0.0.1', limit: 500 } } })).data as FindingPage
      t.ok(tagged !== undefined && tagged.total > 0)
      t.equal(tagged?.total, onHost?.total, 'the tag\'s findings are the host\'s')
      t.same((await admin.PUT('/host/{address}/tags', { params: { path }, body: { tags: [] } })).data?.tags, [])
    })

    t.test('findings: list, filters, CSV, a decision that sticks', async (t) => {
      const all = await admin.GET('/vulnerability', { params: { query: { host: '127.0.0.1', limit: 500 } } })
      t.equal(all.response.status, 200)
      const page = all.data as Exclude<typeof all.data, string | undefined>
      t.ok(page.items.length > 0, 'findings from the scan')
      const first = page.items[0]
      const byCve = await admin.GET('/vulnerability', { params: { query: { cveId: first.cveId } } })
      t.ok((byCve.data as typeof page).items.every((f) => f.cveId === first.cveId), 'the CVE filter holds')
      const csv = await admin.GET('/vulnerability', { params: { query: { host: '127.0.0.1' } }, headers: { accept: 'text/csv' }, parseAs: 'text' })
      t.equal(csv.response.status, 200)
      t.match(csv.response.headers.get('content-type'), /^text\/csv/)
      // Records, not lines: a quoted field may hold line breaks (a template's evidence quotes a protocol's reply).
      const rows: string[] = []
      let quoted = false
      let row = ''
      for (const ch of (csv.data as string).trim()) {
        if (ch === '"') quoted = !quoted
        if (!quoted && ch === '\n') { rows.push(row.replace(/\r$/, '')); row = '' } else row += ch
      }
      rows.push(row)
      t.equal(rows.length, page.total + 1, 'a header row and one row per finding')
      t.match(rows.slice(1).join('\n'), first.cveId)
      const refused = await admin.GET('/vulnerability', { headers: { accept: 'application/xml' } })
      t.equal(refused.response.status, 406, 'a media type the list does not come in: 406')

      const cve = await admin.GET('/vulnerability/{cveId}', { params: { path: { cveId: first.cveId } } })
      t.equal(cve.response.status, 200)
      t.equal(cve.data?.id, first.cveId)
      t.ok(cve.data?.affectedHosts.includes('127.0.0.1'), 'the CVE lists the scanned host among those it affects')
      t.equal(cve.data?.cvss ?? null, first.cvss, 'the same score as the finding')
      const notIndexed = await admin.GET('/vulnerability/{cveId}', { params: { path: { cveId: 'CVE-1999-99999' } } })
      t.equal(notIndexed.response.status, 404, 'a CVE the index does not hold: 404')
      const malformed = await admin.GET('/vulnerability/{cveId}', { params: { path: { cveId: 'CVE-12' } } })
      t.equal(malformed.response.status, 400, 'not a CVE id: 400')

      const decided = await admin.PATCH('/vulnerability/finding/{id}', { params: { path: { id: first.id } }, body: { status: 'accepted', comment: 'lab machine, SDK test' } })
      t.equal(decided.response.status, 200)
      t.equal(decided.data?.status, 'accepted')
      t.equal(decided.data?.comment, 'lab machine, SDK test')
      const accepted = await admin.GET('/host/{address}/vulnerability', { params: { path: { address: '127.0.0.1' }, query: { status: 'accepted' } } })
      t.ok(accepted.data?.items.some((f) => f.id === first.id), 'the decision is stored')
      const noSuch = await admin.PATCH('/vulnerability/finding/{id}', { params: { path: { id: '0'.repeat(24) } }, body: { status: 'false_positive' } })
      t.equal(noSuch.response.status, 404)
    })

    t.test('deleting a host removes it and its findings', async (t) => {
      const gone = await admin.DELETE('/host/{address}', { params: { path: { address: '127.0.0.1' } } })
      t.equal(gone.response.status, 204)
      t.equal((await admin.GET('/host/{address}', { params: { path: { address: '127.0.0.1' } } })).response.status, 404)
      const left = await admin.GET('/vulnerability', { params: { query: { host: '127.0.0.1' } } })
      t.equal((left.data as { total: number }).total, 0, 'no findings left on it')
      t.equal((await admin.DELETE('/host/{address}', { params: { path: { address: '127.0.0.1' } } })).response.status, 404, 'deleting twice is a 404')
    })

    t.test('every operation of the document was called', async (t) => {
      const called = [...new Set(calls.map((c) => c.operationId))].sort()
      t.same(called, allOperationIds, 'a new route needs SDK coverage here')
    })
  })
})
