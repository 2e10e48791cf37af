// Scan event streams: capped per key and in all, pushed by the store rather than polled per stream, and
// resumable with Last-Event-ID. Real HTTP connections on a loopback address, on every backend.
import { test } from 'tap'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { backends, build, SERVICE_KEY } from '../../helper'
import { listenOnLoopback } from '../../support/raw-http'

interface Stream { res: IncomingMessage, events: { id: string, event: string, data: string }[], close: () => void, status: number, body: string }

async function openStream (where: { host: string, port: number }, path: string, headers: Record<string, string>): Promise<Stream> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: where.host, port: where.port, path, headers }, (res) => {
      const s: Stream = { res, events: [], close: () => req.destroy(), status: res.statusCode ?? 0, body: '' }
      let buf = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        s.body += chunk
        buf += chunk
        let at
        while ((at = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, at)
          buf = buf.slice(at + 2)
          const field = (name: string): string => block.split('\n').find((l) => l.startsWith(name + ': '))?.slice(name.length + 2) ?? ''
          if (field('event') !== '') s.events.push({ id: field('id'), event: field('event'), data: field('data') })
        }
      })
      res.on('error', () => {})
      resolve(s)
    })
    req.on('error', reject)
    req.end()
  })
}

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function until (cond: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms
  while (!cond() && Date.now() < end) await wait(20)
  return cond()
}

test('streams are capped per key and in all, with 429 in the error shape', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend, { SSE_MAX_STREAMS: 3, SSE_MAX_STREAMS_PER_KEY: 2 })
      const created = await app.inject({ method: 'POST', url: '/admin/keys', headers: { 'x-api-key': SERVICE_KEY }, payload: { label: 'sse' } })
      const other = created.json().key as string
      await app.inject({ method: 'POST', url: '/app/scan', headers: { 'x-api-key': SERVICE_KEY }, payload: { id: 's1', targets: [{ value: '127.4.0.1', type: 'single_ip' }] } })
      const where = await listenOnLoopback(app)
      const path = '/app/scan/s1/events'
      const a = await openStream(where, path, { 'x-api-key': SERVICE_KEY })
      const b = await openStream(where, path, { 'x-api-key': SERVICE_KEY })
      t.teardown(() => { a.close(); b.close() })
      t.equal(a.status, 200)
      t.equal(b.status, 200)
      const c = await openStream(where, path, { 'x-api-key': SERVICE_KEY })
      await until(() => c.res.complete)
      t.equal(c.status, 429, 'a third stream on one key is refused')
      t.match(JSON.parse(c.body), { error: /2 event streams/, code: 'VULNSCAN_SSE_TOO_MANY_STREAMS' })
      const d = await openStream(where, path, { 'x-api-key': other })
      t.teardown(() => d.close())
      t.equal(d.status, 200, 'another key still gets one')
      const e = await openStream(where, path, { 'x-api-key': other })
      await until(() => e.res.complete)
      t.equal(e.status, 429, 'the total cap holds')
      t.match(JSON.parse(e.body), { code: 'VULNSCAN_SSE_TOO_MANY_STREAMS' })
      a.close()
      await wait(200)
      const f = await openStream(where, path, { 'x-api-key': SERVICE_KEY })
      t.teardown(() => f.close())
      t.equal(f.status, 200, 'a closed stream frees its place')
    })
  }
})

test('updates are pushed: one store read per change, however many streams; Last-Event-ID resumes', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend, { SSE_MAX_STREAMS_PER_KEY: 50 })
      await app.inject({ method: 'POST', url: '/app/scan', headers: { 'x-api-key': SERVICE_KEY }, payload: { id: 's2', targets: [{ value: '127.4.0.2', type: 'single_ip' }] } })
      const where = await listenOnLoopback(app)
      let reads = 0
      const getScan = app.store.getScan.bind(app.store)
      app.store.getScan = async (id: string) => { reads++; return await getScan(id) }
      const streams: Stream[] = []
      for (let i = 0; i < 20; i++) streams.push(await openStream(where, '/app/scan/s2/events', { 'x-api-key': SERVICE_KEY }))
      t.teardown(() => { for (const s of streams) s.close() })
      t.ok(await until(() => streams.every((s) => s.events.length === 1)), 'each stream has the current state')
      const firstId = streams[0].events[0].id
      t.ok(firstId.length > 0, 'events carry an id')
      await wait(300)
      reads = 0
      await wait(1200)
      t.equal(reads, 0, 'no store reads while nothing changes (no polling)')

      await app.store.updateScan('s2', { status: 'running', startedAt: new Date().toISOString(), hostsTotal: 1, portsTotal: 100 })
      t.ok(await until(() => streams.every((s) => s.events.length === 2)), 'the change reaches every stream')
      t.equal(streams[0].events[1].event, 'progress')
      t.match(JSON.parse(streams[0].events[1].data), { id: 's2', status: 'running' })
      t.notOk('requestHash' in JSON.parse(streams[0].events[1].data), 'the Scan schema still filters the events')
      t.ok(reads <= 3, `one read serves all 20 streams (${reads} reads)`)

      const resumed = await openStream(where, '/app/scan/s2/events', { 'x-api-key': SERVICE_KEY, 'last-event-id': streams[0].events[1].id })
      t.teardown(() => resumed.close())
      await wait(300)
      t.equal(resumed.events.length, 0, 'a client that has the current state is not sent it again')
      await app.store.updateScan('s2', { status: 'completed', finishedAt: new Date().toISOString() })
      t.ok(await until(() => resumed.events.length === 1 && resumed.res.complete), 'then gets the end and the stream closes')
      t.equal(resumed.events[0].event, 'end')
      t.ok(await until(() => streams.every((s) => s.res.complete)), 'every stream ends with the scan')
    })
  }
})
