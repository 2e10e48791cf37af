// The CPE dictionary import from the API: a fake CPE API 2.0 server on a loopback address pages through real-format
// entries (the real page of test/fixtures/nvd/cpes, and the nginx rename of test/accuracy/fixtures/derived).
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { test } from 'tap'
import { collectFromApi, readAliases, writeAliases } from '../../../lib/cpe/dictionary'
import { createMemorySourceStore } from '../../../lib/sources/memory'
import { loopbackAddress } from '../../support/loopback'

const REAL = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'fixtures', 'nvd', 'cpes', 'cpes-microsoft-cpeMatchString-page1of10433.json'), 'utf8')) as { products: unknown[] }
const RENAMED = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'accuracy', 'fixtures', 'derived', 'cpes-nginx-renamed.json'), 'utf8')) as { products: unknown[] }
const PRODUCTS = [...REAL.products, ...RENAMED.products]

async function fakeCpeApi (t: { teardown (fn: () => unknown): void }, fail?: number): Promise<{ base: string, requests: Array<{ url: string, apiKey: string | undefined }> }> {
  const requests: Array<{ url: string, apiKey: string | undefined }> = []
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    requests.push({ url: req.url ?? '', apiKey: req.headers.apikey as string | undefined })
    if (url.pathname !== '/rest/json/cpes/2.0') { res.writeHead(404).end(); return }
    if (fail !== undefined) { res.writeHead(fail).end(); return }
    const start = Number(url.searchParams.get('startIndex') ?? 0)
    const size = Number(url.searchParams.get('resultsPerPage') ?? 10000)
    const products = PRODUCTS.slice(start, start + size)
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
      resultsPerPage: products.length, startIndex: start, totalResults: PRODUCTS.length, format: 'NVD_CPE', version: '2.0', timestamp: '2026-11-28T00:00:00.000', products
    }))
  })
  const host = loopbackAddress()
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  return { base: `http://${host}:${(server.address() as AddressInfo).port}/rest/json`, requests }
}

test('the API is paged through to its total, with the key, and the renames land in the alias table', async (t) => {
  const api = await fakeCpeApi(t)
  const seen: number[] = []
  const c = await collectFromApi({ baseUrl: api.base, apiKey: 'k-123', pageSize: 1, pauseMs: 0, progress: (n) => seen.push(n) })
  t.equal(api.requests.length, 3, 'three pages of one')
  t.same(api.requests.map((r) => new URL(r.url, 'http://x').searchParams.get('startIndex')), ['0', '1', '2'])
  t.ok(api.requests.every((r) => r.apiKey === 'k-123'), 'the API key header on every request')
  t.same(seen, [1, 2, 3])
  t.match(c, { entries: 3, deprecated: 1, count: 1 })
  const store = await createMemorySourceStore()
  t.match(await writeAliases(store, c, api.base), { renames: 1, products: 2 })
  const [nginx, other] = await readAliases(store, ['f5:nginx', 'microsoft:access'])
  t.match(nginx, [{ vendor: 'f5', product: 'nginx_open_source', relation: 'renamed-to' }])
  t.same(other, [])
  t.match(JSON.parse(await store.getMeta('cpe-alias:import') ?? '{}'), { from: api.base, renames: 1 })
})

test('an API that refuses says so', async (t) => {
  const api = await fakeCpeApi(t, 503)
  await t.rejects(collectFromApi({ baseUrl: api.base, pauseMs: 0 }), /CPE API answered 503 at startIndex 0/)
})
