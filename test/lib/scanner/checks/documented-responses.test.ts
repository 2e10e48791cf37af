// Checks of products Debian does not package, against a server that replays their responses as the product's own
// documentation prints them (test/fixtures/banners/*, each with its source beside it). Nothing here is
// invented: a request for which no documented response is stored gets the connection closed.
// CouchDB: `GET /` and `GET /_all_dbs` from its API reference. Elasticsearch: `GET /` open and secured as a
// 7.9.3 node sent them (status line, headers and body), and the 8.12.1 root document of its reference.
// OpenSearch: the root document of its quickstart. Grafana: `/api/health` from its HTTP API reference, and `/`
// (a 302 to /login) reconstructed from Grafana's and Go's source, as its source note says (no capture was found).
// Consul: `/` with its UI off (the text its agent writes) and `/v1/agent/self` from its API reference.
// Documents printed without a status line (*.json, *.txt) are sent as `200 OK` with a Content-Type and
// Content-Length and nothing else. MongoDB: `listDatabases` answered as its command reference prints it, and
// refused as mongod's code builds the refusal, sent as BSON in OP_MSG replies. Kubernetes: the API server's 403
// Status object (from its own tests) and its `/version` document (from "Kubernetes The Hard Way"). The Docker
// Engine is tested on Debian's dockerd (docker-daemon.test.ts). Traefik: `/` on its API entry point (a 302 to
// /dashboard/, reconstructed from Traefik's and Go's source) and `/api/version` as its dashboard's mock prints it.

import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { parseListDatabases } from '../../../../lib/scanner/checks/access'
import { decodeBson } from '../../../../lib/scanner/probes/mongodb'
import { replayServer, type Answer } from '../../../support/replay-server'
import { freePort, loopbackAddress } from '../../../support/loopback'

const FIXTURES = path.join(__dirname, '../../../fixtures/banners')

/**
 * A documented response: header lines sent with CRLF, the body as printed, Content-Length set to its length (added
 * when the documentation leaves it out, so the reply's end is known without waiting for the close).
 */
function documentedResponse (name: string): Buffer {
  const text = fs.readFileSync(path.join(FIXTURES, name), 'utf8')
  const split = text.indexOf('\n\n')
  const body = Buffer.from(text.slice(split + 2), 'utf8')
  const head = text.slice(0, split).split('\n').map((l) => /^Content-Length:/i.test(l) ? `Content-Length: ${body.length}` : l)
  if (!head.some((l) => /^Content-Length:/i.test(l))) head.push(`Content-Length: ${body.length}`)
  return Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n\r\n', 'latin1'), body])
}

/** A documented body printed without its status line and headers: sent as `200 OK` of the given type. */
function documentedBody (name: string, contentType: string): Buffer {
  const body = fs.readFileSync(path.join(FIXTURES, name))
  return Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`, 'latin1'), body])
}

async function replay (routes: Record<string, Buffer>): Promise<{ host: string, port: number, seen: string[], close: () => Promise<void> }> {
  const host = loopbackAddress()
  const port = await freePort(host)
  const seen: string[] = []
  const server = net.createServer((sock) => {
    sock.on('error', () => {})
    let buf = ''
    sock.on('data', (d) => {
      buf += d.toString('latin1')
      if (!buf.includes('\r\n\r\n')) return
      const [method, target] = buf.split(' ')
      seen.push(`${method} ${target}`)
      const reply = method === 'GET' ? routes[target] : undefined
      if (reply !== undefined) sock.end(reply)
      else sock.destroy()
    })
  })
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(port, host, resolve) })
  return { host, port, seen, close: async () => await new Promise<void>((resolve) => server.close(() => resolve())) }
}

test('CouchDB as documented: detected from its Server header, and /_all_dbs read without credentials', async (t) => {
  const s = await replay({ '/': documentedResponse('couchdb-root.http'), '/_all_dbs': documentedResponse('couchdb-all-dbs.http') })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.equal(service.product, 'CouchDB')
  t.equal(service.version, '1.3.1', 'the version from the welcome document (the Server header shows none)')
  t.same(s.seen, ['GET /'], 'one request to detect it')
  const r = await runChecks({ host: s.host, port: s.port, service, hostnames: [] })
  t.ok(r.concluded)
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-COUCHDB-NOAUTH'])
  t.equal(r.exposures[0].evidence, 'GET /_all_dbs answered 200 without credentials: 5 database(s) (_users, contacts, docs, invoices, locations)')
  t.ok(s.seen.includes('GET /_all_dbs'), 'the check asked for the database list')
})

test('CouchDB whose /_all_dbs gives no answer: no finding, and no conclusion either', async (t) => {
  // Only the documented root: the check's request is refused by a closed connection, which proves nothing.
  const s = await replay({ '/': documentedResponse('couchdb-root.http') })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.equal(service.product, 'CouchDB')
  const r = await runChecks({ host: s.host, port: s.port, service, hostnames: [] })
  t.same(r.exposures, [])
  t.notOk(r.concluded)
})

test('Elasticsearch open to anyone: detected with its version, and the check reports it', async (t) => {
  const s = await replay({ '/': documentedResponse('elasticsearch-7.9.3-root.http') })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.match(service, { service: 'http', product: 'Elasticsearch', version: '7.9.3' })
  t.match(service.extraInfo, /cluster es-cluster/)
  t.same(s.seen, ['GET /'], 'one request to detect it')
  const r = await runChecks({ host: s.host, port: s.port, service, hostnames: [] })
  t.ok(r.concluded)
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-ELASTICSEARCH-NOAUTH'])
  t.equal(r.exposures[0].evidence, 'GET / answered 200 without credentials: cluster es-cluster, version 7.9.3')
})

test('Elasticsearch 8.12.1 root document as its reference prints it: detected with its version and reported', async (t) => {
  const s = await replay({ '/': documentedBody('elasticsearch-8.12.1-root.json', 'application/json') })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.match(service, { product: 'Elasticsearch', version: '8.12.1' })
  const r = await runChecks({ host: s.host, port: s.port, service, hostnames: [] })
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-ELASTICSEARCH-NOAUTH'])
})

test('Elasticsearch with security on: the product without a version, and no finding', async (t) => {
  const s = await replay({ '/': documentedResponse('elasticsearch-7.9.3-unauthorized.http') })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.equal(service.product, 'Elasticsearch')
  t.equal(service.version, undefined, 'the 401 shows no version')
  t.match(service.extraInfo, /authentication required/)
  const r = await runChecks({ host: s.host, port: s.port, service, hostnames: [] })
  t.ok(r.concluded, 'a 401 is an answer')
  t.same(r.exposures, [])
})

test('OpenSearch root document as its quickstart prints it: OpenSearch and its version, and the check applies', async (t) => {
  const s = await replay({ '/': documentedBody('opensearch-2.6.0-root.json', 'application/json; charset=UTF-8') })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.match(service, { product: 'OpenSearch', version: '2.6.0' })
  const r = await runChecks({ host: s.host, port: s.port, service, hostnames: [] })
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-ELASTICSEARCH-NOAUTH'])
  t.equal(r.exposures[0].evidence, 'GET / answered 200 without credentials: cluster opensearch-cluster, version 2.6.0')
})

test('Consul with its UI off: named by its index page, its version read from /v1/agent/self', async (t) => {
  const s = await replay({
    '/': documentedBody('consul-root-ui-disabled.txt', 'text/plain; charset=utf-8'),
    '/v1/agent/self': documentedBody('consul-agent-self.json', 'application/json')
  })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.match(service, { service: 'http', product: 'Consul', version: '1.0.0' })
  t.match(service.extraInfo, /datacenter dc1/)
  t.same(s.seen, ['GET /', 'GET /v1/agent/self'], 'one follow-up request')
})

test('Consul whose agent endpoint gives nothing: still Consul, without a version', async (t) => {
  const s = await replay({ '/': documentedBody('consul-root-ui-disabled.txt', 'text/plain; charset=utf-8') })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.equal(service.product, 'Consul')
  t.equal(service.version, undefined)
})

test('Grafana redirecting / to its login page: followed to /api/health, product and version from there', async (t) => {
  const s = await replay({ '/': documentedResponse('grafana-root-redirect.http'), '/api/health': documentedResponse('grafana-api-health.http') })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.match(service, { service: 'http', product: 'Grafana', version: '5.1.3', extraInfo: 'commit 087143285; database ok' })
  t.same(service.cpe, ['cpe:2.3:a:grafana:grafana:5.1.3:*:*:*:*:*:*:*'])
  t.same(s.seen, ['GET /', 'GET /api/health'], 'one follow-up request')
})

test('a 302 to /login from a server that names itself (nginx in front): not called Grafana, no follow-up', async (t) => {
  // The same redirect as passed on by a proxy that adds its own Server header (Debian 12's nginx sends this one).
  const redirect = documentedResponse('grafana-root-redirect.http').toString('latin1').replace('\r\n', '\r\nServer: nginx/1.22.1\r\n')
  const s = await replay({ '/': Buffer.from(redirect, 'latin1'), '/api/health': documentedResponse('grafana-api-health.http') })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.match(service, { service: 'http', product: 'nginx', version: '1.22.1' })
  t.not(service.product, 'Grafana')
  t.same(s.seen, ['GET /'], '/api/health was not asked for')
})

test('Traefik\'s API entry point redirecting / to its dashboard: followed to /api/version, product and version from there', async (t) => {
  const s = await replay({
    '/': documentedResponse('traefik-root-redirect.http'),
    '/api/version': documentedBody('traefik-api-version.json', 'application/json; charset=UTF-8')
  })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.match(service, { service: 'http', product: 'Traefik', version: '3.4.0', extraInfo: 'codename montdor' })
  t.same(service.cpe, ['cpe:2.3:a:traefik:traefik:3.4.0:*:*:*:*:*:*:*'])
  t.same(s.seen, ['GET /', 'GET /api/version'], 'one follow-up request')
})

test('Traefik\'s redirect whose /api/version gives nothing: no product is guessed', async (t) => {
  const s = await replay({ '/': documentedResponse('traefik-root-redirect.http') })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.equal(service.product, undefined, 'a redirect to /dashboard/ alone does not name Traefik')
  t.same(s.seen, ['GET /', 'GET /api/version'])
})

test('a 302 to /dashboard/ from a server that names itself (nginx in front): not called Traefik, no follow-up', async (t) => {
  const redirect = documentedResponse('traefik-root-redirect.http').toString('latin1').replace('\r\n', '\r\nServer: nginx/1.22.1\r\n')
  const s = await replay({
    '/': Buffer.from(redirect, 'latin1'),
    '/api/version': documentedBody('traefik-api-version.json', 'application/json; charset=UTF-8')
  })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.match(service, { service: 'http', product: 'nginx', version: '1.22.1' })
  t.same(s.seen, ['GET /'], '/api/version was not asked for')
})

test('Go\'s bare 404 (what a Traefik entry point answers an unknown route with) still leads to /version only', async (t) => {
  // The bytes net/http's NotFound writes (http.Error: text/plain, nosniff, the text and a newline). The Traefik
  // document is on offer at /api/version, but a 404 is no lead to it.
  const notFound = Buffer.from('HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n' +
    'Content-Length: 19\r\nConnection: close\r\n\r\n404 page not found\n', 'latin1')
  const s = await replay({ '/': notFound, '/api/version': documentedBody('traefik-api-version.json', 'application/json; charset=UTF-8') })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.not(service.product, 'Traefik')
  t.same(s.seen, ['GET /', 'GET /version'], 'the follow-up is /version, as for any Go API server')
})

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }

/** BSON as mongod writes these replies: `ok` a double, other whole numbers int32, arrays as indexed documents. */
function bson (doc: { [k: string]: Json }): Buffer {
  const parts: Buffer[] = []
  for (const [k, v] of Object.entries(doc)) {
    const key = Buffer.from(k + '\0')
    if (typeof v === 'number' && (k === 'ok' || !Number.isInteger(v))) {
      const b = Buffer.alloc(8); b.writeDoubleLE(v); parts.push(Buffer.from([0x01]), key, b)
    } else if (typeof v === 'number') {
      const b = Buffer.alloc(4); b.writeInt32LE(v); parts.push(Buffer.from([0x10]), key, b)
    } else if (typeof v === 'string') {
      const str = Buffer.from(v + '\0'); const l = Buffer.alloc(4); l.writeInt32LE(str.length); parts.push(Buffer.from([0x02]), key, l, str)
    } else if (typeof v === 'boolean') {
      parts.push(Buffer.from([0x08]), key, Buffer.from([v ? 1 : 0]))
    } else if (v === null) {
      parts.push(Buffer.from([0x0a]), key)
    } else if (Array.isArray(v)) {
      parts.push(Buffer.from([0x04]), key, bson(Object.fromEntries(v.map((x, i) => [String(i), x]))))
    } else {
      parts.push(Buffer.from([0x03]), key, bson(v))
    }
  }
  const body = Buffer.concat(parts)
  const out = Buffer.alloc(body.length + 5)
  out.writeInt32LE(out.length)
  body.copy(out, 4)
  return out
}

const documented = (name: string): { [k: string]: Json } => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'))

/** An OP_MSG reply to `requestId`: header, flags 0, one kind-0 section with the document. */
function opMsgReply (doc: Buffer, requestId: number): Buffer {
  const h = Buffer.alloc(21)
  h.writeInt32LE(21 + doc.length, 0); h.writeInt32LE(9, 4); h.writeInt32LE(requestId, 8); h.writeInt32LE(2013, 12)
  return Buffer.concat([h, doc])
}

/** mongod's side of the check: an OP_MSG `listDatabases` on `admin` gets `reply`; any other message closes. */
function mongod (reply: { [k: string]: Json }) {
  return (bytes: Buffer): Answer => {
    if (bytes.length < 16) return undefined
    const len = bytes.readInt32LE(0)
    if (len < 21 || len > 1024 * 1024) return 'close'
    if (bytes.length < len) return undefined
    if (bytes.readInt32LE(12) !== 2013 || bytes[20] !== 0) return 'close'
    const cmd = decodeBson(bytes.subarray(21, len))
    if (cmd.listDatabases !== 1 || cmd.$db !== 'admin') return 'close'
    return { send: opMsgReply(bson(reply), bytes.readInt32LE(4)), rest: bytes.subarray(len) }
  }
}

const mongoService = { service: 'mongodb', product: 'MongoDB', cpe: [] }

test('MongoDB answering listDatabases as documented: the exposure, with the database names as evidence', async (t) => {
  const s = await replayServer(mongod(documented('mongodb-listdatabases-nameonly.json')))
  t.teardown(s.close)
  const r = await runChecks({ host: s.host, port: s.port, service: mongoService, hostnames: [] })
  t.ok(r.concluded)
  t.same(r.exposures.map((e) => e.check), ['VULNSCAN-MONGODB-NOAUTH'])
  t.equal(r.exposures[0].evidence, 'listDatabases answered without credentials: admin, local, test')
  t.same(decodeBson(s.seen[0].subarray(21)), { listDatabases: 1, nameOnly: true, $db: 'admin' }, 'names only were asked for')
})

test('MongoDB refusing listDatabases with code 13 Unauthorized: no finding, and a conclusion', async (t) => {
  const s = await replayServer(mongod(documented('mongodb-listdatabases-unauthorized.json')))
  t.teardown(s.close)
  const r = await runChecks({ host: s.host, port: s.port, service: mongoService, hostnames: [] })
  t.same(r.exposures, [])
  t.ok(r.concluded, 'a refusal proves the database names are not open')
  t.equal(s.seen.length, 1)
})

test('listDatabases replies read from the documents themselves', async (t) => {
  const reply = (name: string): Buffer => opMsgReply(bson(documented(name)), 1)
  t.same(parseListDatabases(reply('mongodb-listdatabases-nameonly.json')), ['admin', 'local', 'test'])
  t.equal(parseListDatabases(reply('mongodb-listdatabases-unauthorized.json')), null)
  t.equal(parseListDatabases(reply('mongodb-listdatabases-nameonly.json').subarray(0, 40)), null, 'truncated')
})

test('a MongoDB port that closes on listDatabases: no finding, no conclusion', async (t) => {
  const s = await replayServer(() => 'close')
  t.teardown(s.close)
  const r = await runChecks({ host: s.host, port: s.port, service: mongoService, hostnames: [] })
  t.same(r.exposures, [])
  t.notOk(r.concluded)
})

test('Kubernetes API server refusing / to anonymous clients: followed to /version, product and version from there', async (t) => {
  const s = await replay({ '/': documentedResponse('kubernetes-forbidden.http'), '/version': documentedResponse('kubernetes-version.http') })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.match(service, { service: 'http', product: 'Kubernetes', version: '1.32.3', extraInfo: 'linux/arm64' })
  t.same(service.cpe, ['cpe:2.3:a:kubernetes:kubernetes:1.32.3:*:*:*:*:*:*:*'])
  t.same(s.seen, ['GET /', 'GET /version'])
})

test('Kubernetes API server refusing /version too: the product alone, no version guessed', async (t) => {
  const s = await replay({ '/': documentedResponse('kubernetes-forbidden.http'), '/version': documentedResponse('kubernetes-forbidden.http') })
  t.teardown(s.close)
  const service = await detectService({ host: s.host, port: s.port, level: 'light' })
  t.match(service, { service: 'http', product: 'Kubernetes', extraInfo: 'Forbidden; status 403' })
  t.equal(service.version, undefined)
  t.same(service.cpe, ['cpe:2.3:a:kubernetes:kubernetes:*:*:*:*:*:*:*:*'], 'the product\'s CPE, any version')
  t.same(s.seen, ['GET /', 'GET /version'], 'it asked where a version would be')
})
