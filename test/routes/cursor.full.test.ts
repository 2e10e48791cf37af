// Keyset paging over HTTP: GET /host and GET /vulnerability hand out `nextCursor` while a page follows, `cursor`
// takes it back, and a cursor that is not one, belongs to another query or comes with an offset is a 400 naming why.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import { finding, write } from '../support/results'
import { createHash } from 'node:crypto'

const auth = { 'x-api-key': SERVICE_KEY }
const T0 = Date.parse('2026-04-01T00:00:00.000Z')
const H = 3600_000
const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const REDIS = { port: 6379, service: 'redis', product: 'Redis', version: '6.0.5' }

interface Page { items: { address?: string, id?: string }[], total: number, limit: number, offset: number, nextCursor?: string }

test('cursor paging', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const writes = []
      for (let i = 0; i < 11; i++) {
        const address = `10.8.0.${i + 1}`
        writes.push(write({
          address,
          at: T0 + Math.floor(i / 2) * H,
          services: [SSH, REDIS],
          findings: [finding(address, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1'), finding(address, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')]
        }))
      }
      await app.results.recordHosts(writes)
      const get = async (url: string): Promise<Page> => {
        const res = await app.inject({ url, headers: auth })
        t.equal(res.statusCode, 200, url)
        return res.json()
      }
      const walk = async (path: string, key: 'address' | 'id'): Promise<{ items: string[], pages: number }> => {
        const items: string[] = []
        let page = await get(path)
        let pages = 1
        items.push(...page.items.map((x) => x[key] as string))
        while (page.nextCursor !== undefined && pages < 50) {
          page = await get(`${path}&cursor=${page.nextCursor}`)
          t.equal(page.offset, 0, 'a cursor page has offset 0')
          items.push(...page.items.map((x) => x[key] as string))
          pages++
        }
        return { items, pages }
      }

      for (const qs of ['sort=lastSeen', 'sort=address&order=desc', 'sort=findings', 'sort=severity&order=asc', 'port=22&sort=address']) {
        const whole = (await get(`/host?${qs}&limit=500`)).items.map((h) => h.address)
        const paged = await walk(`/host?${qs}&limit=3`, 'address')
        t.same(paged.items, whole, `/host?${qs}: the pages of 3 by cursor are the whole list`)
        t.equal(paged.pages, Math.ceil(whole.length / 3), 'and the last page has no nextCursor')
      }
      for (const qs of ['sort=cvss', 'sort=risk', 'sort=firstSeen&order=asc', 'sort=lastSeen', 'cveId=CVE-2024-6387&sort=cvss', 'minCvss=9']) {
        const whole = (await get(`/vulnerability?${qs}&limit=500`)).items.map((f) => f.id)
        const paged = await walk(`/vulnerability?${qs}&limit=4`, 'id')
        t.same(paged.items, whole, `/vulnerability?${qs}: the pages of 4 by cursor are the whole list`)
        t.equal(paged.pages, Math.ceil(whole.length / 4))
      }

      const offsetPage = await get('/host?sort=address&limit=4&offset=4')
      t.type(offsetPage.nextCursor, 'string', 'an offset page also gives nextCursor')
      t.same((await get(`/host?sort=address&limit=4&cursor=${offsetPage.nextCursor}`)).items.map((h) => h.address),
        (await get('/host?sort=address&limit=4&offset=8')).items.map((h) => h.address), 'which continues where the offset page ends')
      t.equal((await get('/host?sort=address&limit=4&offset=8')).nextCursor, undefined, 'the last page has none')

      const first = await get('/host?sort=address&limit=2')
      const refused = async (url: string, why: RegExp): Promise<void> => {
        const res = await app.inject({ url, headers: auth })
        t.equal(res.statusCode, 400, url)
        t.match(res.json().error, why, url)
      }
      await refused(`/host?sort=address&limit=2&cursor=${first.nextCursor}&offset=2`, /^cursor and offset cannot be combined/)
      await refused(`/host?sort=findings&limit=2&cursor=${first.nextCursor}`, /^cursor belongs to another query/)
      await refused(`/host?sort=address&port=22&limit=2&cursor=${first.nextCursor}`, /^cursor belongs to another query/)
      await refused(`/vulnerability?limit=2&cursor=${first.nextCursor}`, /^cursor belongs to another query/)
      await refused('/host?cursor=bm90LWEtY3Vyc29y', /^cursor is not a cursor this service made/)
      await refused('/host?cursor=WzEsImFiYyIsMSwieCJd', /^cursor is not a cursor this service made/)
      await refused('/host?cursor=not%20base64', /cursor/)
      const csv = await app.inject({ url: `/vulnerability?cursor=${(await get('/vulnerability?limit=1')).nextCursor}`, headers: { ...auth, accept: 'text/csv' } })
      t.equal(csv.statusCode, 400, 'the CSV export takes no cursor')
      t.match(csv.json().error, /^cursor pages the JSON list/)
    })
  }
})

// The abuse pass minted cursors: the digest was an unkeyed hash of the query, so anyone could make one, and one whose
// sort value was a string where the order sorts numbers (or a key that is no address) reached PostgreSQL: a 500.
test('forged cursors are a 400, never a 500: cursors are signed, and every field of a signed one is checked', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      await app.results.recordHosts([write({ address: '10.8.1.1', at: T0, services: [SSH], findings: [finding('10.8.1.1', 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] })])
      // Exactly as the old code made them: base64url of [1, digest of the query, value, key].
      const minted = (scope: Record<string, unknown>, value: unknown, key: unknown): string => {
        const fields = Object.keys(scope).filter((k) => scope[k] !== undefined).sort()
        const digest = createHash('sha256').update(JSON.stringify(fields.map((k) => [k, scope[k]]))).digest('base64url').slice(0, 16)
        return Buffer.from(JSON.stringify([1, digest, value, key])).toString('base64url')
      }
      const cases: [string, string][] = [
        ['/vulnerability?sort=cvss', minted({ list: 'findings', sort: 'cvss', order: 'desc' }, 'abc', 'x')],
        ['/vulnerability?sort=risk', minted({ list: 'findings', sort: 'risk', order: 'desc' }, 1e308, "x' OR 1=1")],
        ['/host?sort=lastSeen', minted({ list: 'hosts', sort: 'lastSeen', order: 'desc' }, 'abc', '10.8.1.1')],
        ['/host?sort=address', minted({ list: 'hosts', sort: 'address', order: 'asc' }, 5, 'not-an-address')],
        // Signed by this server, but holding what the order cannot: made through the server's own codec.
        ['/vulnerability?sort=cvss', app.cursors.make({ list: 'findings', sort: 'cvss', order: 'desc' }, { value: 'abc', key: 'x' })],
        ['/vulnerability?sort=cvss', app.cursors.make({ list: 'findings', sort: 'cvss', order: 'desc' }, { value: 5, key: 'zz' })],
        ['/host?sort=lastSeen', app.cursors.make({ list: 'hosts', sort: 'lastSeen', order: 'desc' }, { value: 'abc', key: '10.8.1.1' })],
        ['/host?sort=address', app.cursors.make({ list: 'hosts', sort: 'address', order: 'asc' }, { value: '410080101', key: '10.8.1.1\u0000' })]
      ]
      for (const [path, cursor] of cases) {
        const res = await app.inject({ url: `${path}&cursor=${cursor}`, headers: auth })
        t.equal(res.statusCode, 400, `${path} with a forged cursor ${JSON.stringify(cursor.slice(0, 24))}…`)
        t.match(res.json(), { error: /^cursor is not a cursor this service made/, code: 'VULNSCAN_BAD_REQUEST' })
      }
      const good = (await app.inject({ url: '/vulnerability?limit=1', headers: auth })).json()
      t.equal(good.nextCursor, undefined, 'one finding: no next page')
    })
  }
})

test('a NUL character in a text parameter is a 400 naming it, never a 500', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      await app.results.recordHosts([write({ address: '10.8.1.2', at: T0, services: [SSH], findings: [finding('10.8.1.2', 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')] })])
      for (const url of ['/host?q=a%00b', '/host?service=ssh%00', '/host?product=%00', '/vulnerability?host=10.8.1.2%00', '/app/scan/x/report?tag=a%00']) {
        const res = await app.inject({ url, headers: auth })
        t.equal(res.statusCode, 400, url)
        t.match(res.json(), { error: /must not contain a NUL character|must be|has an invalid format/, code: /^VULNSCAN_/ }, url)
      }
      t.match((await app.inject({ url: '/host?q=a%00b', headers: auth })).json().error, /^querystring\.q must not contain a NUL character/)
    })
  }
})
