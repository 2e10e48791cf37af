import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../../helper'

const SERVICE = { 'x-api-key': SERVICE_KEY }

test('every state-changing request is in the audit log, with filters and paging; keys never are', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app, redis, config } = await build(t, backend)
      const created = await app.inject({ method: 'POST', url: '/admin/keys', headers: SERVICE, payload: { label: 'ops', role: 'operator' } })
      const k = created.json()
      const h = { 'x-api-key': k.key }
      // Entries carry millisecond times: keep the key's creation strictly before `before`, the rest after it.
      await new Promise((resolve) => setTimeout(resolve, 5))
      const before = new Date().toISOString()
      await new Promise((resolve) => setTimeout(resolve, 5))
      t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: h, payload: { id: 'a1', targets: [{ value: '127.24.0.1', type: 'single_ip' }] } })).statusCode, 200)
      t.equal((await app.inject({ method: 'DELETE', url: '/app/scan/a1', headers: h })).statusCode, 200)
      t.equal((await app.inject({ method: 'DELETE', url: '/host/127.24.0.9', headers: h })).statusCode, 404)
      t.equal((await app.inject({ method: 'DELETE', url: '/app/scan/zz', headers: { 'x-api-key': 'wrong' } })).statusCode, 401)
      await app.inject({ url: '/host', headers: h })

      const all = await app.inject({ url: '/admin/audit', headers: SERVICE })
      t.equal(all.statusCode, 200)
      const page = all.json()
      t.match(page, { total: 4, limit: 50, offset: 0 }, 'three requests with a key and the key creation; the GET and the refused DELETE are not logged')
      t.match(page.items[0], { keyId: k.id, keyLabel: 'ops', method: 'DELETE', route: '/host/:address', targetId: '127.24.0.9', status: 404 }, 'newest first')
      t.match(page.items[1], { keyId: k.id, method: 'DELETE', route: '/app/scan/:id', targetId: 'a1', status: 200 })
      t.match(page.items[2], { keyId: k.id, method: 'POST', route: '/app/scan', targetId: 'a1', status: 200, ip: '127.0.0.1' })
      t.match(page.items[3], { keyId: 'service', keyLabel: null, method: 'POST', route: '/admin/keys', targetId: k.id, status: 201 })
      t.match((await app.inject({ url: '/admin/audit/refused', headers: SERVICE })).json(), { total: 1, items: [{ ip: '127.0.0.1', count: 1 }] }, 'the refused one is counted')
      for (const e of page.items) t.ok(Date.parse(e.at) > 0 && typeof e.id === 'string')

      const q = async (qs: string): Promise<{ total: number, items: { method: string, status: number, keyId: string | null }[] }> => {
        const res = await app.inject({ url: `/admin/audit?${qs}`, headers: SERVICE })
        t.equal(res.statusCode, 200, qs)
        return res.json()
      }
      t.equal((await q(`keyId=${k.id}`)).total, 3)
      t.equal((await q('keyId=service')).total, 1)
      t.same((await q('method=DELETE')).items.map((e) => e.status), [404, 200])
      t.same((await q('method=DELETE&limit=1&offset=1')).items.map((e) => e.status), [200], 'a filtered list pages too')
      t.equal((await q('status=404')).total, 1)
      t.equal((await q(`since=${encodeURIComponent(before)}`)).total, 3)
      t.equal((await q(`until=${encodeURIComponent(before)}`)).total, 1)
      const paged = await q('limit=2&offset=1')
      t.equal(paged.total, 4)
      t.same(paged.items.map((e) => e.status), [200, 200])
      t.same((await q(`since=${encodeURIComponent(before)}&limit=1&offset=2`)).items.map((e) => e.method), ['POST'], 'a time window pages by place')
      t.equal((await app.inject({ url: '/admin/audit?method=GET', headers: SERVICE })).statusCode, 400)
      t.equal((await app.inject({ url: '/admin/audit?since=yesterday', headers: SERVICE })).statusCode, 400)

      const everything = JSON.stringify((await app.inject({ url: '/admin/audit?limit=500', headers: SERVICE })).json())
      t.notOk(everything.includes(k.key), 'no dynamic key in the log')
      t.notOk(everything.includes(SERVICE_KEY), 'no infrastructure key in the log')
      if (redis) {
        const raw = await redis.zrange(`${config.REDIS_PREFIX}:audit`, '0', '-1')
        t.equal(raw.length, 4, 'kept in a sorted set in the store')
        t.notOk(raw.join('').includes(k.key))
      }
    })
  }
})

test('entries older than AUDIT_RETENTION_DAYS are dropped', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend, { AUDIT_RETENTION_DAYS: 1 })
      const old = { id: 'old', at: new Date(Date.now() - 2 * 86_400_000).toISOString(), keyId: 'service', keyLabel: null, method: 'POST', route: '/app/scan', targetId: null, ip: '127.0.0.1', status: 200 }
      await app.store.appendAudit(old, { retentionMs: 10 * 86_400_000, maxEntries: 1000 })
      t.equal((await app.store.listAudit({ limit: 10, offset: 0 })).total, 1)
      t.equal((await app.inject({ method: 'DELETE', url: '/app/scan/none', headers: SERVICE })).statusCode, 404)
      const page = (await app.inject({ url: '/admin/audit', headers: SERVICE })).json()
      t.equal(page.total, 1, 'the two-day-old entry is gone')
      t.equal(page.items[0].targetId, 'none')
      const posted = await app.inject({ method: 'POST', url: '/app/scan', headers: SERVICE, payload: { targets: [{ value: '127.24.0.2', type: 'single_ip' }] } })
      t.equal(posted.statusCode, 200)
      const latest = (await app.inject({ url: '/admin/audit?limit=1', headers: SERVICE })).json().items[0]
      t.equal(latest.targetId, posted.json().id, 'a scan posted without an id is logged with the id it was given')
    })
  }
})

test('requests without a valid key are counted per address and window, never logged one by one', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const refused = async (ip: string, n: number): Promise<void> => {
        for (let i = 0; i < n; i++) {
          const r = await app.inject({ method: 'POST', url: '/app/scan', remoteAddress: ip, headers: i % 2 === 0 ? {} : { 'x-api-key': `wrong-${i}` }, payload: { targets: [{ value: '127.24.0.1', type: 'single_ip' }] } })
          if (r.statusCode !== 401) t.fail(`refused request ${i} answered ${r.statusCode}`)
        }
      }
      await refused('127.24.1.1', 300)
      await refused('127.24.1.2', 7)
      const log = (await app.inject({ url: '/admin/audit', headers: SERVICE })).json()
      t.equal(log.total, 0, '307 keyless state changes leave no entry in the audit log')
      const counts = (await app.inject({ url: '/admin/audit/refused', headers: SERVICE })).json()
      t.equal(counts.total, 2, 'one counter per address in the window')
      t.match(counts.items, [{ ip: '127.24.1.2', count: 7 }, { ip: '127.24.1.1', count: 300 }])
      for (const c of counts.items) t.ok(Date.parse(c.windowEnd) - Date.parse(c.windowStart) === 300_000, 'windows of AUTH_FAILURE_WINDOW')
      t.equal((await app.inject({ url: '/admin/audit/refused', headers: { 'x-api-key': 'wrong' } })).statusCode, 401)
    })
  }
})

test('the log keeps at most AUDIT_MAX_ENTRIES entries, the newest, and refused counters likewise', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend, { AUDIT_MAX_ENTRIES: 100 })
      for (let i = 0; i < 130; i++) await app.inject({ method: 'DELETE', url: `/app/scan/gone-${i}`, headers: SERVICE })
      const page = (await app.inject({ url: '/admin/audit?limit=500', headers: SERVICE })).json()
      t.equal(page.total, 100, 'bounded')
      t.equal(page.items[0].targetId, 'gone-129', 'the newest stays')
      t.equal(page.items[99].targetId, 'gone-30', 'the oldest went first')
      t.equal((await app.inject({ url: '/admin/audit?offset=95&limit=10', headers: SERVICE })).json().items.length, 5, 'paged by place to the end')
      for (let i = 0; i < 120; i++) await app.inject({ method: 'DELETE', url: '/app/scan/x', remoteAddress: `127.24.2.${i + 1}` })
      t.equal((await app.inject({ url: '/admin/audit/refused', headers: SERVICE })).json().total, 100, 'counters are bounded too')
    })
  }
})
