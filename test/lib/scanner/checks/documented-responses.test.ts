// Checks of products Debian does not package, against a server that replays their responses as the product's own
// documentation prints them (test/fixtures/banners/*.http, each with its source beside it). Nothing here is
// invented: a request for which no documented response is stored gets the connection closed.
// CouchDB: `GET /` and `GET /_all_dbs` from its API reference. MongoDB, Elasticsearch and the Docker Engine API
// have no such fixture yet (see the README's "Exposure checks").

import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { test } from 'tap'
import { detectService } from '../../../../lib/scanner/detect'
import { runChecks } from '../../../../lib/scanner/checks/index'
import { freePort, loopbackAddress } from '../../../support/loopback'

const FIXTURES = path.join(__dirname, '../../../fixtures/banners')

/** A documented response: header lines sent with CRLF, the body as printed, Content-Length set to its length. */
function documentedResponse (name: string): Buffer {
  const text = fs.readFileSync(path.join(FIXTURES, name), 'utf8')
  const split = text.indexOf('\n\n')
  const body = Buffer.from(text.slice(split + 2), 'utf8')
  const head = text.slice(0, split).split('\n').map((l) => /^Content-Length:/i.test(l) ? `Content-Length: ${body.length}` : l)
  return Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n\r\n', 'latin1'), body])
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
