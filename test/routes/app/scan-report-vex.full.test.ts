// CycloneDX 1.6 and OpenVEX 0.2 reports of a scan (issue 27 §1), validated against the official JSON schemas (the
// CycloneDX schemas as @cyclonedx/cyclonedx-library ships them; OpenVEX's from the openvex/spec repository, in
// test/fixtures/openvex/), on both backends; decisions show as analysis states and VEX statuses.
import { test } from 'tap'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import Ajv from 'ajv'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { backends, build, SERVICE_KEY } from '../../helper'
import { seedScan, threeHosts } from '../../support/report-scans'

const auth = { 'x-api-key': SERVICE_KEY }
const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const CDX = path.join(path.dirname(require.resolve('@cyclonedx/cyclonedx-library/package.json')), 'res', 'schema')

function cyclonedxValidator (): ReturnType<Ajv['compile']> {
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats(ajv)
  for (const f of ['spdx.SNAPSHOT.schema.json', 'jsf-0.82.SNAPSHOT.schema.json', 'cryptography-defs.SNAPSHOT.schema.json']) {
    // Registered under the name the BOM schema refers to them by, next to its own $id.
    const schema = JSON.parse(readFileSync(path.join(CDX, f), 'utf8')) as { $id?: string }
    ajv.addSchema({ ...schema, $id: `http://cyclonedx.org/schema/${f}` })
  }
  return ajv.compile(JSON.parse(readFileSync(path.join(CDX, 'bom-1.6.SNAPSHOT.schema.json'), 'utf8')))
}

function openvexValidator (): ReturnType<Ajv2020['compile']> {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  return ajv.compile(JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'openvex', 'openvex_json_schema_0.2.0.json'), 'utf8')))
}

test('CycloneDX and OpenVEX reports validate, with decisions as analysis states', async (t) => {
  const cdx = cyclonedxValidator()
  const vex = openvexValidator()
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      await seedScan(app, { id: 'vex-1', at: T0, hosts: threeHosts() })
      const findings = (await app.inject({ url: '/vulnerability?limit=500', headers: auth })).json<{ items: Array<{ id: string, cveId: string }> }>().items
      t.ok(findings.length >= 3, `${findings.length} findings to state`)
      const [accepted, falsePositive] = findings
      t.equal((await app.inject({ method: 'PATCH', url: `/vulnerability/finding/${accepted.id}`, headers: auth, payload: { status: 'accepted', comment: 'isolated lab host' } })).statusCode, 200)
      t.equal((await app.inject({ method: 'PATCH', url: `/vulnerability/finding/${falsePositive.id}`, headers: auth, payload: { status: 'false_positive', comment: 'module not loaded' } })).statusCode, 200)

      const bom = await app.inject({ url: '/app/scan/vex-1/report?format=cyclonedx', headers: auth })
      t.equal(bom.statusCode, 200)
      t.match(bom.headers['content-type'], /^application\/vnd\.cyclonedx\+json; version=1\.6/)
      t.match(bom.headers['content-disposition'], /filename="vulnscan-report-vex-1\.cdx\.json"/)
      const doc = bom.json()
      t.ok(cdx(doc), 'valid against the CycloneDX 1.6 schema', { errors: cdx.errors?.slice(0, 3) })
      t.notOk(cdx({ ...doc, vulnerabilities: [{ ...doc.vulnerabilities[0], analysis: { state: 'maybe' } }] }), 'the validator refuses an analysis state the schema does not have')
      t.match(doc, { bomFormat: 'CycloneDX', specVersion: '1.6' })
      const refs = new Set((doc.components as Array<{ 'bom-ref': string }>).map((c) => c['bom-ref']))
      t.ok([...refs].some((r) => r.startsWith('service:192.0.2.31:22/tcp')), 'services are components')
      const vulns = doc.vulnerabilities as Array<{ id: string, analysis: { state: string, response?: string[], detail?: string }, affects: Array<{ ref: string }>, properties: Array<{ name: string, value: string }> }>
      t.equal(vulns.length, findings.length, 'one vulnerability per finding')
      t.ok(vulns.every((v) => v.affects.every((a) => refs.has(a.ref))), 'every affects names a component of the BOM')
      const byFinding = (id: string): typeof vulns[number] | undefined => vulns.find((v) => v.properties.some((p) => p.name === 'vulnscan:finding-id' && p.value === id))
      t.match(byFinding(accepted.id)?.analysis, { state: 'exploitable', response: ['will_not_fix'], detail: 'isolated lab host' }, 'accepted: exploitable, will not fix')
      t.match(byFinding(falsePositive.id)?.analysis, { state: 'false_positive', detail: 'module not loaded' })
      t.match(byFinding(findings[2].id)?.analysis, { state: 'in_triage' }, 'open: in triage')

      const statements = await app.inject({ url: '/app/scan/vex-1/report?format=openvex', headers: auth })
      t.equal(statements.statusCode, 200)
      t.match(statements.headers['content-type'], /^application\/openvex\+json/)
      const vexDoc = statements.json()
      t.ok(vex(vexDoc), 'valid against the OpenVEX 0.2 schema', { errors: vex.errors?.slice(0, 3) })
      t.notOk(vex({ ...vexDoc, statements: [{ vulnerability: { name: 'CVE-2024-6387' }, status: 'affected' }] }), 'the validator refuses an affected statement without an action')
      const st = vexDoc.statements as Array<{ vulnerability: { name: string }, status: string, justification?: string, action_statement?: string, status_notes: string }>
      t.equal(st.length, findings.length)
      const of = (cve: string): typeof st => st.filter((s) => s.vulnerability.name === cve)
      t.ok(of(falsePositive.cveId).some((s) => s.status === 'not_affected' && s.justification === 'vulnerable_code_not_present'), 'a false positive is not_affected, with a justification')
      t.ok(of(accepted.cveId).some((s) => s.status === 'affected' && /^Risk accepted: isolated lab host/.test(s.action_statement ?? '')), 'an accepted risk is affected, saying so')

      // Filters that keep nothing: CycloneDX is an empty list, OpenVEX has no statement to make.
      const none = await app.inject({ url: '/app/scan/vex-1/report?format=openvex&minConfidence=100&minSeverity=critical&tag=nothing', headers: auth })
      t.equal(none.statusCode, 409, 'no statements: 409')
      const empty = await app.inject({ url: '/app/scan/vex-1/report?format=cyclonedx&tag=nothing', headers: auth })
      t.ok(cdx(empty.json()), 'an empty BOM still validates')
    })
  }
})

test('a host\'s and a filtered finding list\'s CycloneDX and OpenVEX documents validate, in scope and with their filters', async (t) => {
  const cdx = cyclonedxValidator()
  const vex = openvexValidator()
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      await seedScan(app, { id: 'vex-2', at: T0, hosts: threeHosts() })
      const all = (await app.inject({ url: '/vulnerability?limit=500', headers: auth })).json<{ items: Array<{ id: string, address: string, cveId: string, severity: string }> }>().items
      const address = all[0].address
      const onHost = all.filter((f) => f.address === address)
      t.equal((await app.inject({ method: 'PATCH', url: `/vulnerability/finding/${onHost[0].id}`, headers: auth, payload: { status: 'false_positive', comment: 'not loaded' } })).statusCode, 200)

      const hostBom = await app.inject({ url: `/host/${address}/report?format=cyclonedx`, headers: auth })
      t.equal(hostBom.statusCode, 200)
      t.match(hostBom.headers['content-type'], /^application\/vnd\.cyclonedx\+json; version=1\.6/)
      t.match(hostBom.headers['content-disposition'], new RegExp(`filename="vulnscan-host-${address.replace(/\./g, '\\.')}\\.cdx\\.json"`))
      const bom = hostBom.json()
      t.ok(cdx(bom), 'the host BOM validates', { errors: cdx.errors?.slice(0, 3) })
      t.same(bom.metadata.properties, [{ name: 'vulnscan:host', value: address }])
      const refs = new Set((bom.components as Array<{ 'bom-ref': string }>).map((c) => c['bom-ref']))
      t.ok(refs.has(`host:${address}`) && [...refs].every((r) => r === `host:${address}` || r.includes(address)), 'its components are the host and its own services')
      const vulns = bom.vulnerabilities as Array<{ analysis: { state: string }, affects: Array<{ ref: string }>, properties: Array<{ name: string, value: string }> }>
      t.equal(vulns.length, onHost.length, 'one vulnerability per finding on the host')
      t.ok(vulns.every((v) => v.affects.every((a) => refs.has(a.ref))), 'every affects names a component')
      t.ok(vulns.some((v) => v.analysis.state === 'false_positive'), 'the decision shows as an analysis state')

      // The Accept header chooses when format is not given.
      const hostVex = await app.inject({ url: `/host/${address}/report`, headers: { ...auth, accept: 'application/openvex+json' } })
      t.equal(hostVex.statusCode, 200)
      t.ok(vex(hostVex.json()), 'the host OpenVEX document validates', { errors: vex.errors?.slice(0, 3) })
      t.match(hostVex.json().tooling, new RegExp(`\\(host ${address.replace(/\./g, '\\.')}\\)$`))
      t.ok((hostVex.json().statements as Array<{ status: string }>).some((s) => s.status === 'not_affected'))
      t.equal((await app.inject({ url: `/host/${address}/report`, headers: { ...auth, accept: 'text/html' } })).statusCode, 406, 'an Accept header that allows neither is a 406')
      t.equal((await app.inject({ url: '/host/192.0.2.254/report', headers: auth })).statusCode, 404, 'an unknown host is a 404')
      t.equal((await app.inject({ url: `/host/${address}/report?format=openvex&cveId=CVE-1999-0001`, headers: auth })).statusCode, 409, 'no statement to make: 409')
      t.equal((await app.inject({ url: `/host/${address}/report?format=pdf`, headers: auth })).statusCode, 400, 'an unknown format is a 400')

      // A filtered list: only what the filters keep, its components the hosts and services those findings are on.
      const high = all.filter((f) => f.severity === 'high' || f.severity === 'critical')
      const listBom = await app.inject({ url: '/vulnerability/report?format=cyclonedx&minCvss=7', headers: auth })
      t.equal(listBom.statusCode, 200)
      const lb = listBom.json()
      t.ok(cdx(lb), 'the list BOM validates', { errors: cdx.errors?.slice(0, 3) })
      const listRefs = new Set((lb.components as Array<{ 'bom-ref': string }>).map((c) => c['bom-ref']))
      t.ok((lb.vulnerabilities as typeof vulns).every((v) => v.affects.every((a) => listRefs.has(a.ref))), 'every affects names a component of the list BOM')
      const cvssAtLeast7 = (await app.inject({ url: '/vulnerability?limit=500&minCvss=7', headers: auth })).json<{ total: number }>().total
      t.equal(lb.vulnerabilities.length, cvssAtLeast7, `the list's filters apply (${cvssAtLeast7} findings of CVSS 7 or more; ${high.length} high or critical)`)
      const listVex = await app.inject({ url: `/vulnerability/report?format=openvex&host=${address}`, headers: auth })
      t.equal(listVex.statusCode, 200)
      t.ok(vex(listVex.json()), 'the list OpenVEX document validates', { errors: vex.errors?.slice(0, 3) })
      t.equal(listVex.json().statements.length, onHost.length)
      t.equal((await app.inject({ url: '/vulnerability/report?format=openvex&tag=nothing', headers: auth })).statusCode, 409)
      t.equal((await app.inject({ url: '/vulnerability/report?scanId=no-such-scan', headers: auth })).statusCode, 404)
    })
  }
})
