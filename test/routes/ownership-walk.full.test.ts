// Every operation of openapi.yaml, walked with a reader and an operator that have a scope and an operator that has
// none, on every backend, each answer checked against the ownership model (docs/security-model.md): the role the
// document states (x-required-role); an address outside the key's scope is a 403 before anything is looked up; a
// scan, schedule or webhook the key may not see (neither made by it nor reaching only inside its scope) is a 404,
// one it sees but did not make a 403 to change (admins change everything); lists, exports, reports, diffs, streams
// and counts hold nothing outside the scope. The rules are keyed by operationId: an operation without one fails
// the walk, so a new route states its place in the model before it ships.
import { test, type Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { backends, build, SERVICE_KEY } from '../helper'
import { finding, write } from '../support/results'
import { rawFixture } from '../support/nvd-fixtures'
import { loadDocument, operations, type Operation } from '../support/openapi-fuzz'
import { newScanRecord } from '../../lib/scans'
import { roleAllows, type Role } from '../../lib/access'
import { parseScope } from '../../lib/scanner/targets'
import type { ScanRecord } from '../../lib/store/types'

const SCOPE = '10.61.0.0/16'
/** Hosts inside and outside the scoped keys' scope. */
const IN = '10.61.0.5'
const OUT = '10.62.0.5'
const T0 = Date.parse('2026-04-01T00:00:00.000Z')
const CVE = 'CVE-2024-6387'
const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const inScope = parseScope([SCOPE], [])

type Who = 'reader' | 'scoped' | 'open'
const KEYS: Record<Who, { role: Role, scope: string[] }> = {
  reader: { role: 'reader', scope: [SCOPE] },
  scoped: { role: 'operator', scope: [SCOPE] },
  open: { role: 'operator', scope: [] }
}
const WHO = Object.keys(KEYS) as Who[]

type Json = Record<string, any>

interface World {
  app: FastifyInstance
  key: Record<Who | 'admin', string>
  id: Record<Who | 'admin', string>
  /** Every finding's id by host address. */
  findingOn: Record<string, string>
  n: number
}

/** The model: what a key sees and may change. Written from docs/security-model.md, not from the code. */
const model = {
  seesAddress: (who: Who, address: string): boolean => KEYS[who].scope.length === 0 || inScope.allows(address),
  /** A scan or schedule: its maker sees it; others when all it may touch (its given scope, else its literal targets) lies in their scope. */
  sees: (w: World, who: Who, r: { createdBy: string, keyScope?: string[], targets?: { value: string, type: string }[], targetTags?: string[] }): boolean => {
    if (KEYS[who].scope.length === 0 || r.createdBy === w.id[who]) return true
    if ((r.keyScope ?? []).length > 0) return (r.keyScope ?? []).every((c) => c === SCOPE || c.startsWith('10.61.'))
    if ((r.targetTags ?? []).length > 0) return false
    return (r.targets ?? []).every((t) => t.type === 'single_ip' && inScope.allows(t.value))
  },
  owns: (w: World, who: Who, r: { createdBy: string }): boolean => r.createdBy === w.id[who]
}

interface Case {
  /** What the case is about, for the assertion's name. */
  what: string
  method: string
  url: string
  payload?: unknown
  headers?: Record<string, string>
  /** The status the model expects once the role allows the operation. */
  expect: number
  /** More checks on a 2xx answer. */
  check?: (t: Test, res: LightMyRequestResponse) => unknown
}

type Rule = (w: World, who: Who) => Promise<Case[]>

let seq = 0
const fresh = (prefix: string): string => `${prefix}-${++seq}`

/** A scan stored as made by `by`, in a given state, as a client or a schedule would have made it. */
async function scan (w: World, by: Who | 'admin', targets: string[], status: 'queued' | 'completed' = 'completed', extra: Partial<ScanRecord> = {}): Promise<ScanRecord> {
  const record = newScanRecord({ id: fresh('walk'), targets: targets.map((value) => ({ value, type: 'single_ip' as const })) }, w.id[by])
  const scope = by === 'admin' ? [] : KEYS[by].scope
  if (scope.length > 0) record.keyScope = [...scope]
  Object.assign(record, extra)
  await w.app.store.createScan(record)
  if (status === 'completed') await w.app.store.updateScan(record.id, { status: 'completed', finishedAt: new Date().toISOString() })
  return (await w.app.store.getScan(record.id))!
}

async function schedule (w: World, by: Who | 'admin', body: Json): Promise<Json> {
  const res = await w.app.inject({ method: 'POST', url: '/app/schedule', headers: { 'x-api-key': w.key[by] }, payload: { cron: '0 3 * * *', ...body } })
  if (res.statusCode !== 201) throw new Error(`seeding a schedule: ${res.statusCode} ${res.body}`)
  return { ...res.json(), ...(await w.app.store.getSchedule(res.json().id)) }
}

/** A host of its own, with a finding, for an operation that changes or deletes it. */
async function host (w: World, inside: boolean): Promise<string> {
  const address = `${inside ? '10.61' : '10.62'}.${1 + (++w.n >> 8)}.${w.n & 255}`
  await w.app.results.recordHost(write({ address, at: T0, scanId: 'walk-hosts', services: [SSH], findings: [finding(address, 22, CVE, 'OpenSSH', '9.2p1')] }))
  return address
}

/** Every address in a body (JSON or CSV or HTML): none may lie outside the key's scope. */
function addressesIn (text: string): string[] {
  return [...new Set(text.match(/\b10\.6[0-9]\.\d{1,3}\.\d{1,3}\b/g) ?? [])]
}

const onlySeen = (who: Who, label: string) => (t: Test, res: LightMyRequestResponse): void => {
  const outside = addressesIn(res.body).filter((a) => !model.seesAddress(who, a))
  t.same(outside, [], `${label}: no address outside the key's scope in the answer`)
}

const seesList = (w: World, who: Who, kind: 'scan' | 'schedule', all: Json[]) => (t: Test, res: LightMyRequestResponse): void => {
  const body = res.json()
  const shown = new Set((body.items as Json[]).map((i) => i.id))
  const expected = all.filter((r) => model.sees(w, who, r as never))
  t.equal(body.total, expected.length, `${kind}s: the total counts only what the key sees`)
  for (const r of all) t.equal(shown.has(r.id), model.sees(w, who, r as never), `${kind} ${r.id} by ${r.createdBy} is listed exactly when the key sees it`)
  onlySeen(who, `${kind} list`)(t, res)
}

/** The rules, by operationId. */
const RULES: Record<string, Rule> = {
  // Admin only: every key below admin gets 403 from the role check (x-required-role), whatever it names.
  listAudit: async () => [{ what: 'the audit log', method: 'GET', url: '/admin/audit', expect: 200 }],
  listRefusedRequests: async () => [{ what: 'refused counters', method: 'GET', url: '/admin/audit/refused', expect: 200 }],
  createApiKey: async () => [{ what: 'a key', method: 'POST', url: '/admin/keys', payload: { label: 'x' }, expect: 201 }],
  listApiKeys: async () => [{ what: 'keys', method: 'GET', url: '/admin/keys', expect: 200 }],
  revokeApiKey: async (w) => [{ what: 'the open key', method: 'DELETE', url: `/admin/keys/${w.id.open}`, expect: 204 }],
  updateApiKey: async (w) => [{ what: 'the open key', method: 'PATCH', url: `/admin/keys/${w.id.open}`, payload: { scope: [] }, expect: 200 }],
  createWebhook: async () => [{ what: 'a webhook', method: 'POST', url: '/admin/webhook', payload: { url: 'https://hooks.example.com/x', events: ['scan.failed'] }, expect: 201 }],
  listWebhooks: async () => [{ what: 'webhooks', method: 'GET', url: '/admin/webhook', expect: 200 }],
  getWebhook: async (w) => [{ what: 'a webhook', method: 'GET', url: `/admin/webhook/${await webhook(w)}`, expect: 200 }],
  updateWebhook: async (w) => [{ what: 'a webhook', method: 'PATCH', url: `/admin/webhook/${await webhook(w)}`, payload: { enabled: false }, expect: 200 }],
  deleteWebhook: async (w) => [{ what: 'a webhook', method: 'DELETE', url: `/admin/webhook/${await webhook(w)}`, expect: 204 }],
  listWebhookDeliveries: async (w) => [{ what: 'a webhook', method: 'GET', url: `/admin/webhook/${await webhook(w)}/deliveries`, expect: 200 }],
  // No failed delivery is kept for a fresh webhook: the admin reaches the lookup (404), every other key is refused its role.
  retryWebhookDelivery: async (w) => [{ what: 'a failed delivery', method: 'POST', url: `/admin/webhook/${await webhook(w)}/deliveries/none/retry`, expect: 404 }],
  testWebhook: async (w) => [{ what: 'a webhook', method: 'POST', url: `/admin/webhook/${await webhook(w)}/test`, expect: 200 }],
  // Issue-tracker integrations (admin only): they name no address, and their tokens are write-only.
  createIntegration: async () => [{ what: 'an integration', method: 'POST', url: '/admin/integrations', payload: INTEGRATION, expect: 201 }],
  listIntegrations: async () => [{ what: 'integrations', method: 'GET', url: '/admin/integrations', expect: 200 }],
  getIntegration: async (w) => [{ what: 'an integration', method: 'GET', url: `/admin/integrations/${await integration(w)}`, expect: 200 }],
  updateIntegration: async (w) => [{ what: 'an integration', method: 'PATCH', url: `/admin/integrations/${await integration(w)}`, payload: { enabled: false }, expect: 200 }],
  deleteIntegration: async (w) => [{ what: 'an integration', method: 'DELETE', url: `/admin/integrations/${await integration(w)}`, expect: 204 }],
  syncIntegration: async (w) => [{ what: 'an integration', method: 'POST', url: `/admin/integrations/${await integration(w)}/sync`, expect: 202 }],
  listIntegrationDeliveries: async (w) => [{ what: 'an integration', method: 'GET', url: `/admin/integrations/${await integration(w)}/deliveries`, expect: 200 }],

  // Credentials (admin only): an operator names one in a scan (checked in test/worker/credentialed.test.ts), never reads or changes it.
  createCredential: async () => [{ what: 'a credential', method: 'POST', url: '/admin/credentials', payload: { name: fresh('walk-cred'), type: 'ssh', username: 'scan', password: 'walk-secret' }, expect: 201 }],
  listCredentials: async () => [{ what: 'credentials', method: 'GET', url: '/admin/credentials', expect: 200 }],
  getCredential: async (w) => [{ what: 'a credential', method: 'GET', url: `/admin/credentials/${await credential(w)}`, expect: 200 }],
  updateCredential: async (w) => [{ what: 'a credential', method: 'PATCH', url: `/admin/credentials/${await credential(w)}`, payload: { password: 'walk-secret-2' }, expect: 200 }],
  deleteCredential: async (w) => [{ what: 'a credential', method: 'DELETE', url: `/admin/credentials/${await credential(w)}`, expect: 204 }],
  rotateCredentialsKey: async () => [{ what: 'the secrets', method: 'POST', url: '/admin/credentials/rotate', expect: 200 }],

  getHealth: async () => [{ what: 'health', method: 'GET', url: '/health', expect: 200 }],
  // The loaded templates: no addresses in them, so every role reads the same list.
  listTemplates: async () => [{ what: 'templates', method: 'GET', url: '/templates', expect: 200 }],

  createScan: async (w, who) => {
    const seeded = await scan(w, 'admin', [IN])
    return [
      { what: 'a scan inside the scope', method: 'POST', url: '/app/scan', payload: { targets: [{ value: IN, type: 'single_ip' }] }, expect: 200 },
      { what: 'a scan outside the scope', method: 'POST', url: '/app/scan', payload: { targets: [{ value: OUT, type: 'single_ip' }] }, expect: model.seesAddress(who, OUT) ? 200 : 403 },
      { what: 'a scan id in the namespace schedules use', method: 'POST', url: '/app/scan', payload: { id: 'schedule.x.1.y', targets: [{ value: IN, type: 'single_ip' }] }, expect: 400 },
      { what: 'the id of another key\'s scan, with its very body', method: 'POST', url: '/app/scan', payload: { id: seeded.id, targets: [{ value: IN, type: 'single_ip' }] }, expect: 409 },
      { what: 'tags only hosts outside the scope carry', method: 'POST', url: '/app/scan', payload: { targetTags: ['outside'] }, expect: model.seesAddress(who, OUT) ? 200 : 400 }
    ]
  },
  listScans: async (w, who) => {
    const all = await everyScan(w)
    return [{ what: 'scans', method: 'GET', url: '/app/scan?limit=500', expect: 200, check: seesList(w, who, 'scan', all) }]
  },
  getScan: async (w, who) => {
    const cases: Case[] = [{
      what: 'a scan held to the scope whose summary names an outside address',
      method: 'GET',
      url: `/app/scan/${(await scan(w, 'admin', [IN], 'completed', { keyScope: [SCOPE], summary: summaryExcluding(OUT) })).id}`,
      expect: 200,
      check: onlySeen(who, 'scan')
    }]
    for (const s of await everyScan(w)) {
      cases.push({ what: `scan ${s.id} by ${s.createdBy}`, method: 'GET', url: `/app/scan/${s.id}`, expect: model.sees(w, who, s as never) ? 200 : 404, check: onlySeen(who, 'scan') })
    }
    return cases
  },
  cancelScan: async (w, who) => {
    const cases: Case[] = []
    for (const by of ['admin', 'scoped', 'open'] as const) {
      for (const target of [IN, OUT]) {
        if (by === 'scoped' && target === OUT) continue
        const s = await scan(w, by, [target], 'queued')
        const expect = !model.sees(w, who, s) ? 404 : !model.owns(w, who, s) ? 403 : 200
        cases.push({ what: `a queued scan of ${target} by ${by}`, method: 'DELETE', url: `/app/scan/${s.id}`, expect })
      }
    }
    return cases
  },
  streamScanEvents: async (w, who) => [
    { what: 'a scan inside the scope', method: 'GET', url: `/app/scan/${(await scan(w, 'admin', [IN])).id}/events`, expect: 200, check: onlySeen(who, 'event stream') },
    { what: 'a scan outside the scope', method: 'GET', url: `/app/scan/${(await scan(w, 'admin', [OUT])).id}/events`, expect: model.seesAddress(who, OUT) ? 200 : 404 },
    // Another key's scan held to the scope, whose summary names an address its host names resolved to outside it:
    // the key's own copy of the shared stream leaves that out.
    {
      what: 'a scan held to the scope whose summary names an outside address',
      method: 'GET',
      url: `/app/scan/${(await scan(w, 'admin', [IN], 'completed', { keyScope: [SCOPE], summary: summaryExcluding(OUT) })).id}/events`,
      expect: 200,
      check: onlySeen(who, 'event stream')
    }
  ],
  diffScan: async (w, who) => {
    const [inA, inB, outA, outB] = [await scan(w, 'admin', [IN]), await scan(w, 'admin', [IN]), await scan(w, 'admin', [OUT]), await scan(w, 'admin', [OUT])]
    const outside = model.seesAddress(who, OUT)
    // Its own two scans of hosts on both sides, made before its scope was set: the diff shows only what it reads now.
    const own = [await scan(w, who, [IN, OUT], 'completed', { keyScope: [] }), await scan(w, who, [IN, OUT], 'completed', { keyScope: [] })]
    for (const [i, s] of own.entries()) {
      await w.app.results.recordHosts([IN, OUT].map((address) => write({ address, at: T0 + 2000 + i, scanId: s.id, services: i === 0 ? [SSH] : [SSH, { port: 80, service: 'http' }], findings: [finding(address, 22, CVE, 'OpenSSH', '9.2p1')] })))
    }
    return [
      { what: 'its own scans of hosts on both sides', method: 'GET', url: `/app/scan/${own[1].id}/diff?against=${own[0].id}`, expect: 200, check: onlySeen(who, 'own diff') },
      { what: 'two scans inside the scope', method: 'GET', url: `/app/scan/${inB.id}/diff?against=${inA.id}`, expect: 200, check: onlySeen(who, 'diff') },
      { what: 'two scans outside the scope', method: 'GET', url: `/app/scan/${outB.id}/diff?against=${outA.id}`, expect: outside ? 200 : 404 },
      { what: 'a scan inside against one outside', method: 'GET', url: `/app/scan/${inA.id}/diff?against=${outA.id}`, expect: outside ? 200 : 404 },
      { what: 'the seeded scans, with hosts on both sides', method: 'GET', url: '/app/scan/seed-mixed/diff?against=seed-mixed-before', expect: outside ? 200 : 404, check: onlySeen(who, 'diff') }
    ]
  },
  getScanReport: async (w, who) => {
    const cases: Case[] = []
    for (const format of ['json', 'csv', 'sarif', 'html']) {
      cases.push({ what: `a ${format} report inside the scope`, method: 'GET', url: `/app/scan/seed-in/report?format=${format}`, expect: 200, check: onlySeen(who, `${format} report`) })
      cases.push({ what: `a ${format} report outside the scope`, method: 'GET', url: `/app/scan/seed-out/report?format=${format}`, expect: model.seesAddress(who, OUT) ? 200 : 404 })
    }
    // Its own scan over the tag both hosts carry, made before the key's scope was set: only what it may read now.
    const own = await scan(w, who, [], 'completed', { targetTags: ['shared'], keyScope: [] })
    await w.app.results.recordHosts([IN, OUT].map((address) => write({ address, at: T0 + 1000, scanId: own.id, services: [SSH], findings: [finding(address, 22, CVE, 'OpenSSH', '9.2p1')] })))
    cases.push({ what: 'its own report over hosts on both sides', method: 'GET', url: `/app/scan/${own.id}/report?format=json`, expect: 200, check: onlySeen(who, 'own report') })
    return cases
  },

  createScanReportLink: async (_w, who) => [
    { what: 'a link to a report inside the scope', method: 'POST', url: '/app/scan/seed-in/report/link', payload: {}, expect: 200 },
    { what: 'a link to a report outside the scope', method: 'POST', url: '/app/scan/seed-out/report/link', payload: {}, expect: model.seesAddress(who, OUT) ? 200 : 404 }
  ],
  // Public: the link decides, whoever sends it (a key header is ignored); a link made up is refused.
  getSharedScanReport: async (w) => {
    const made = await w.app.inject({ method: 'POST', url: '/app/scan/seed-in/report/link', headers: { 'x-api-key': SERVICE_KEY }, payload: { format: 'json' } })
    return [
      { what: 'a report through a link', method: 'GET', url: (made.json() as { url: string }).url, expect: 200 },
      { what: 'a link made up', method: 'GET', url: '/app/scan/seed-in/report/shared?token=bm90LWEtbGluaw.bm90LWEtbWFj', expect: 403 }
    ]
  },

  createSchedule: async (_w, who) => [
    { what: 'a schedule inside the scope', method: 'POST', url: '/app/schedule', payload: { cron: '0 3 * * *', scan: { targets: [{ value: IN, type: 'single_ip' }] } }, expect: 201 },
    { what: 'a schedule outside the scope', method: 'POST', url: '/app/schedule', payload: { cron: '0 3 * * *', scan: { targets: [{ value: OUT, type: 'single_ip' }] } }, expect: model.seesAddress(who, OUT) ? 201 : 403 }
  ],
  listSchedules: async (w, who) => {
    const all = await everySchedule(w)
    return [{ what: 'schedules', method: 'GET', url: '/app/schedule?limit=500', expect: 200, check: seesList(w, who, 'schedule', all) }]
  },
  getSchedule: async (w, who) => (await everySchedule(w)).map((s) => ({
    what: `schedule ${s.name} by ${s.createdBy}`, method: 'GET', url: `/app/schedule/${s.id}`, expect: model.sees(w, who, scheduleReach(s)) ? 200 : 404, check: onlySeen(who, 'schedule')
  })),
  updateSchedule: async (w, who) => await scheduleChanges(w, who, (s) => ({ method: 'PATCH', url: `/app/schedule/${s.id}`, payload: { enabled: true }, ok: 200 })),
  deleteSchedule: async (w, who) => await scheduleChanges(w, who, (s) => ({ method: 'DELETE', url: `/app/schedule/${s.id}`, ok: 204 })),

  listHosts: async (w, who) => {
    const outside = model.seesAddress(who, OUT)
    return [
      { what: 'hosts', method: 'GET', url: '/host?limit=500', expect: 200, check: (t, res) => { onlySeen(who, 'hosts')(t, res); t.ok(res.json().items.some((h: Json) => h.address === IN), 'the host inside is listed') } },
      { what: 'hosts with the tag only outside hosts carry', method: 'GET', url: '/host?tag=outside', expect: 200, check: (t, res) => t.equal(res.json().total, outside ? 1 : 0, 'the count reveals no host outside the scope') },
      { what: 'hosts on port 22, counted', method: 'GET', url: '/host?port=22&limit=1', expect: 200, check: async (t, res) => t.equal(res.json().total, await hostCount(w, who), 'the count is of hosts the key sees') },
      { what: 'hosts of a scan outside the scope', method: 'GET', url: '/host?scanId=seed-out', expect: outside ? 200 : 404 },
      { what: 'hosts by cursor', method: 'GET', url: '/host?limit=1&sort=address', expect: 200, check: async (t, res) => await walkCursor(t, w, who, '/host?limit=1&sort=address', res) }
    ]
  },
  getHost: async (_w, who) => [
    { what: 'the host inside', method: 'GET', url: `/host/${IN}`, expect: 200 },
    { what: 'the host outside', method: 'GET', url: `/host/${OUT}`, expect: model.seesAddress(who, OUT) ? 200 : 403 },
    { what: 'an unknown host outside (403 before any lookup: existence is not told)', method: 'GET', url: '/host/10.62.9.9', expect: model.seesAddress(who, OUT) ? 404 : 403 }
  ],
  deleteHost: async (w, who) => [
    { what: 'a host inside', method: 'DELETE', url: `/host/${await host(w, true)}`, expect: 204 },
    { what: 'a host outside', method: 'DELETE', url: `/host/${await host(w, false)}`, expect: model.seesAddress(who, OUT) ? 204 : 403 }
  ],
  setHostTags: async (w, who) => [
    { what: 'a host inside', method: 'PUT', url: `/host/${await host(w, true)}/tags`, payload: { tags: ['walk'] }, expect: 200 },
    { what: 'a host outside', method: 'PUT', url: `/host/${await host(w, false)}/tags`, payload: { tags: ['walk'] }, expect: model.seesAddress(who, OUT) ? 200 : 403 }
  ],
  changeHostTags: async (w, who) => [
    { what: 'a host inside', method: 'PATCH', url: `/host/${await host(w, true)}/tags`, payload: { add: ['walk'] }, expect: 200 },
    { what: 'a host outside', method: 'PATCH', url: `/host/${await host(w, false)}/tags`, payload: { add: ['walk'] }, expect: model.seesAddress(who, OUT) ? 200 : 403 }
  ],
  listHostFindings: async (_w, who) => [
    { what: 'the host inside', method: 'GET', url: `/host/${IN}/vulnerability`, expect: 200 },
    { what: 'the host outside', method: 'GET', url: `/host/${OUT}/vulnerability`, expect: model.seesAddress(who, OUT) ? 200 : 403 }
  ],
  getHostReport: async (_w, who) => [
    { what: 'the CycloneDX document of the host inside', method: 'GET', url: `/host/${IN}/report?format=cyclonedx`, expect: 200, check: onlySeen(who, 'host CycloneDX') },
    { what: 'the OpenVEX document of the host outside', method: 'GET', url: `/host/${OUT}/report?format=openvex`, expect: model.seesAddress(who, OUT) ? 200 : 403 }
  ],
  getFindingsReport: async (_w, who) => {
    const outside = model.seesAddress(who, OUT)
    return [
      { what: 'findings as CycloneDX', method: 'GET', url: '/vulnerability/report?format=cyclonedx', expect: 200, check: onlySeen(who, 'findings CycloneDX') },
      { what: 'findings as OpenVEX', method: 'GET', url: '/vulnerability/report?format=openvex', expect: 200, check: onlySeen(who, 'findings OpenVEX') },
      { what: 'findings of the host outside as OpenVEX', method: 'GET', url: `/vulnerability/report?format=openvex&host=${OUT}`, expect: outside ? 200 : 403 },
      { what: 'findings of a scan outside the scope as CycloneDX', method: 'GET', url: '/vulnerability/report?scanId=seed-out', expect: outside ? 200 : 404 }
    ]
  },
  listFindings: async (w, who) => {
    const outside = model.seesAddress(who, OUT)
    return [
      { what: 'findings', method: 'GET', url: '/vulnerability?limit=500', expect: 200, check: async (t, res) => { onlySeen(who, 'findings')(t, res); t.equal(res.json().total, await findingCount(w, who), 'the total counts only findings the key sees') } },
      { what: 'the CSV export', method: 'GET', url: '/vulnerability', headers: { accept: 'text/csv' }, expect: 200, check: onlySeen(who, 'CSV export') },
      { what: 'findings of the tag only outside hosts carry', method: 'GET', url: '/vulnerability?tag=outside', expect: 200, check: (t, res) => t.equal(res.json().total, outside ? 1 : 0) },
      { what: 'findings of the host outside', method: 'GET', url: `/vulnerability?host=${OUT}`, expect: outside ? 200 : 403 },
      { what: 'findings of a scan outside the scope', method: 'GET', url: '/vulnerability?scanId=seed-out', expect: outside ? 200 : 404 },
      { what: 'findings of the mixed scan, counted', method: 'GET', url: '/vulnerability?scanId=seed-mixed&limit=1', expect: outside ? 200 : 404 },
      { what: 'findings by cursor', method: 'GET', url: '/vulnerability?limit=1', expect: 200, check: async (t, res) => await walkCursor(t, w, who, '/vulnerability?limit=1', res) }
    ]
  },
  getCve: async (_w, who) => [
    { what: 'a CVE on hosts on both sides', method: 'GET', url: `/vulnerability/${CVE}`, expect: 200, check: (t, res) => { onlySeen(who, 'affected hosts')(t, res); t.ok(res.json().affectedHosts.includes(IN)) } }
  ],
  decideFinding: async (w, who) => {
    const inside = await host(w, true)
    const outside = await host(w, false)
    const id = async (a: string): Promise<string> => (await w.app.results.listFindings({ host: a, limit: 1, offset: 0 })).items[0].id
    return [
      { what: 'a finding inside', method: 'PATCH', url: `/vulnerability/finding/${await id(inside)}`, payload: { status: 'accepted' }, expect: 200 },
      { what: 'a finding outside', method: 'PATCH', url: `/vulnerability/finding/${await id(outside)}`, payload: { status: 'accepted' }, expect: model.seesAddress(who, OUT) ? 200 : 404 }
    ]
  }
}

async function credential (w: World): Promise<string> {
  const res = await w.app.inject({ method: 'POST', url: '/admin/credentials', headers: { 'x-api-key': SERVICE_KEY }, payload: { name: fresh('walk-cred'), type: 'ssh', username: 'scan', password: 'walk-secret' } })
  return res.json().id
}

const INTEGRATION = { name: 'walk', kind: 'github', url: 'https://api.github.example', project: 'walk/repo', token: 'walk-token' }

async function integration (w: World): Promise<string> {
  const res = await w.app.inject({ method: 'POST', url: '/admin/integrations', headers: { 'x-api-key': SERVICE_KEY }, payload: INTEGRATION })
  return res.json().id
}

async function webhook (w: World): Promise<string> {
  const res = await w.app.inject({ method: 'POST', url: '/admin/webhook', headers: { 'x-api-key': SERVICE_KEY }, payload: { url: 'https://hooks.example.com/walk', events: ['scan.failed'] } })
  return res.json().id
}

function summaryExcluding (address: string): ScanRecord['summary'] {
  return { hostsUp: 1, hostsDown: 0, openPorts: 1, findings: { critical: 0, high: 0, medium: 0, low: 0, none: 0, unknown: 0 }, uncheckedProducts: [], excluded: [{ address, reason: `${address} is outside this key's scope` }] }
}

async function everyScan (w: World): Promise<ScanRecord[]> {
  return (await w.app.store.listScans({ limit: 10_000, offset: 0 })).items
}

function scheduleReach (s: Json): { createdBy: string, keyScope?: string[], targets?: { value: string, type: string }[], targetTags?: string[] } {
  return { createdBy: s.createdBy, keyScope: s.keyScope, targets: s.scan.targets, targetTags: s.scan.targetTags }
}

async function everySchedule (w: World): Promise<Json[]> {
  return (await w.app.store.listSchedules({ limit: 10_000, offset: 0 })).items.map((s) => ({ ...s, ...scheduleReach(s) }))
}

/** A change to fresh schedules of each maker: 404 for what the key may not see, 403 for what it sees but did not make. */
async function scheduleChanges (w: World, who: Who, request: (s: Json) => { method: string, url: string, payload?: unknown, ok: number }): Promise<Case[]> {
  const cases: Case[] = []
  const made: [Who | 'admin', Json][] = [
    ['admin', { scan: { targets: [{ value: IN, type: 'single_ip' }] }, enabled: false }],
    ['admin', { scan: { targets: [{ value: OUT, type: 'single_ip' }] }, enabled: false }],
    ['admin', { scan: { targetTags: ['outside'] }, enabled: false }],
    ['scoped', { scan: { targets: [{ value: IN, type: 'single_ip' }] }, enabled: false }],
    ['open', { scan: { targets: [{ value: OUT, type: 'single_ip' }] }, enabled: false }]
  ]
  for (const [by, body] of made) {
    const s = await schedule(w, by, body)
    const r = request(s)
    const reach = scheduleReach(s)
    const expect = !model.sees(w, who, reach) ? 404 : !model.owns(w, who, reach) ? 403 : r.ok
    cases.push({ what: `a schedule of ${JSON.stringify(body.scan)} by ${by}`, method: r.method, url: r.url, payload: r.payload, expect })
  }
  return cases
}

/** How many hosts on port 22, and findings, the model says the key sees now (read unfiltered, as the infrastructure key). */
async function hostCount (w: World, who: Who): Promise<number> {
  return (await w.app.results.listHosts({ port: 22, limit: 500, offset: 0 })).items.filter((h) => model.seesAddress(who, h.address)).length
}
async function findingCount (w: World, who: Who): Promise<number> {
  return (await w.app.results.listFindings({ limit: 500, offset: 0 })).items.filter((f) => model.seesAddress(who, f.address)).length
}

/** Page the whole list by cursor: every page holds only what the key sees. */
async function walkCursor (t: Test, w: World, who: Who, path: string, first: LightMyRequestResponse): Promise<void> {
  let page = first.json()
  for (let i = 0; i < 200 && page.nextCursor !== undefined; i++) {
    const res = await w.app.inject({ url: `${path}&cursor=${page.nextCursor}`, headers: { 'x-api-key': w.key[who] } })
    if (res.statusCode !== 200) { t.equal(res.statusCode, 200, `${path}: page ${i + 2} by cursor`); return }
    onlySeen(who, `${path} page ${i + 2}`)(t, res)
    page = res.json()
  }
}

async function seed (app: FastifyInstance): Promise<World> {
  const admin = { 'x-api-key': SERVICE_KEY }
  const key = { admin: SERVICE_KEY } as World['key']
  const id = { admin: 'service' } as World['id']
  for (const who of WHO) {
    const res = await app.inject({ method: 'POST', url: '/admin/keys', headers: admin, payload: { label: who, ...KEYS[who] } })
    if (res.statusCode !== 201) throw new Error(`seeding key ${who}: ${res.body}`)
    key[who] = res.json().key
    id[who] = res.json().id
  }
  const w: World = { app, key, id, findingOn: {}, n: 0 }
  await app.nvd.index.upsertRaw([rawFixture(CVE)])
  const hosts = (scanId: string, addresses: string[], at: number) => addresses.map((address) => write({ address, at, scanId, services: [SSH], findings: [finding(address, 22, CVE, 'OpenSSH', '9.2p1')] }))
  for (const [sid, targets] of [['seed-in', [IN]], ['seed-out', [OUT]], ['seed-mixed-before', [IN, OUT]], ['seed-mixed', [IN, OUT]]] as const) {
    await app.store.createScan(newScanRecord({ id: sid, targets: targets.map((value) => ({ value, type: 'single_ip' as const })) }, 'service'))
    await app.results.recordHosts(hosts(sid, [...targets], T0 + (sid === 'seed-mixed' ? 5000 : 0)))
    await app.store.updateScan(sid, { status: 'completed', finishedAt: new Date().toISOString() })
  }
  await app.results.setHostTags(IN, ['shared'])
  await app.results.setHostTags(OUT, ['shared', 'outside'])
  await schedule(w, 'admin', { name: 'admin-in', scan: { targets: [{ value: IN, type: 'single_ip' }] } })
  await schedule(w, 'admin', { name: 'admin-out', scan: { targets: [{ value: OUT, type: 'single_ip' }] } })
  await schedule(w, 'admin', { name: 'admin-tag', scan: { targetTags: ['outside'] } })
  await schedule(w, 'scoped', { name: 'scoped-in', scan: { targets: [{ value: IN, type: 'single_ip' }] } })
  await schedule(w, 'open', { name: 'open-out', scan: { targets: [{ value: OUT, type: 'single_ip' }] } })
  return w
}

const doc = loadDocument()
const ops = operations(doc)

test('every operation has a rule of the ownership model', async (t) => {
  for (const op of ops) t.ok(RULES[op.id] !== undefined, `${op.id} (${op.method} ${op.path}) has a rule in test/routes/ownership-walk.full.test.ts: add one`)
  const documented = new Set(ops.map((o) => o.id))
  for (const id of Object.keys(RULES)) t.ok(documented.has(id), `the rule for ${id} names an operation of openapi.yaml`)
})

/** The role an operation needs, as the document states it (public operations need none). */
function roleOf (op: Operation): Role | null {
  if (op.public) return null
  const role = doc.paths[op.path][op.method.toLowerCase()]['x-required-role'] as Role | undefined
  if (role === undefined) throw new Error(`${op.id} states no x-required-role`)
  return role
}

test('the per-role walk: each answer as the ownership model says', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const w = await seed(app)
      // Destructive key operations last, so that the keys walk every other operation first.
      const order = (id: string): number => ['updateApiKey', 'revokeApiKey'].indexOf(id)
      for (const op of [...ops].sort((a, b) => order(a.id) - order(b.id))) {
        const rule = RULES[op.id]
        if (rule === undefined) continue
        const needed = roleOf(op)
        for (const who of WHO) {
          for (const c of await rule(w, who)) {
            const res = await app.inject({ method: c.method as 'GET', url: c.url, payload: c.payload as Json, headers: { ...(c.headers ?? {}), 'x-api-key': w.key[who] } })
            const roleOk = needed === null || roleAllows(KEYS[who].role, needed)
            const expected = roleOk ? c.expect : 403
            const name = `${op.id} as the ${who} key: ${c.what}`
            t.equal(res.statusCode, expected, `${name}: ${expected}${res.statusCode !== expected ? ` (got ${res.body.slice(0, 200)})` : ''}`)
            if (res.statusCode >= 400) {
              t.match(res.json(), { error: String }, `${name}: an error body`)
              if (!roleOk) t.equal(res.json().code, 'VULNSCAN_AUTH_FORBIDDEN', `${name}: refused for its role`)
            } else if (c.check !== undefined) await c.check(t, res)
          }
        }
      }
    })
  }
})
