// A local stand-in for a static data site (Alpine's secdb, Red Hat's OSV export): serves given files by
// path, each with an ETag and Last-Modified, answers conditional requests with 304, and can be told to fail
// a path for a number of requests (a server error, as a real mirror has now and then).

import { createHash } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { loopbackAddress } from './loopback'

export interface FakeStatic {
  /** Base URL, without a trailing slash. */
  readonly url: string
  /** Paths asked for, with the status each got. */
  readonly requests: Array<{ path: string, status: number }>
  /** Serve new content at a path (a new ETag and Last-Modified); null removes it. */
  set: (path: string, body: string | Buffer | null) => void
  /** Answer 500 to the next `times` requests of a path. */
  fail: (path: string, times?: number) => void
  close: () => Promise<void>
}

export async function startFakeStatic (files: Record<string, string | Buffer>): Promise<FakeStatic> {
  const served = new Map<string, { body: Buffer, etag: string, lastModified: string }>()
  const failing = new Map<string, number>()
  let generation = 0
  const set = (p: string, body: string | Buffer | null): void => {
    if (body === null) {
      served.delete(p)
      return
    }
    generation++
    const buf = Buffer.isBuffer(body) ? body : Buffer.from(body)
    served.set(p, {
      body: buf,
      etag: `"${createHash('sha1').update(buf).digest('hex').slice(0, 16)}"`,
      lastModified: new Date(Date.UTC(2026, 4, 1, 12, 0, generation)).toUTCString()
    })
  }
  for (const [p, b] of Object.entries(files)) set(p, b)
  const requests: Array<{ path: string, status: number }> = []
  const server = http.createServer((req, res) => {
    const p = decodeURIComponent((req.url ?? '').split('?')[0])
    const answer = (status: number, headers: Record<string, string | number> = {}, body?: Buffer): void => {
      requests.push({ path: p, status })
      res.writeHead(status, headers)
      res.end(body)
    }
    const left = failing.get(p) ?? 0
    if (left > 0) {
      failing.set(p, left - 1)
      return answer(500, { 'content-type': 'text/plain' }, Buffer.from('server error'))
    }
    const f = served.get(p)
    if (req.method !== 'GET' || f === undefined) return answer(404, { 'content-type': 'text/plain' }, Buffer.from('not found'))
    const inm = req.headers['if-none-match']
    const ims = req.headers['if-modified-since']
    if ((inm !== undefined && inm === f.etag) || (inm === undefined && ims !== undefined && Date.parse(ims) >= Date.parse(f.lastModified))) {
      return answer(304, { etag: f.etag, 'last-modified': f.lastModified })
    }
    const type = p.endsWith('.json') ? 'application/json' : 'text/html'
    answer(200, { 'content-type': type, 'content-length': f.body.length, etag: f.etag, 'last-modified': f.lastModified }, f.body)
  })
  const host = loopbackAddress()
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${host}:${port}`,
    requests,
    set,
    fail: (p, times = 1) => { failing.set(p, times) },
    close: async () => await new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}
