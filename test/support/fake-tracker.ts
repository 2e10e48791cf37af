// A local stand-in for the Debian security tracker's JSON endpoint (and any static data file):
// serves given bytes with an ETag and Last-Modified, answers conditional requests with 304,
// byte ranges with 206 (honouring If-Range), and can drop the connection part-way through.

import { createHash } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { loopbackAddress } from './loopback'

export interface FakeTrackerRequest {
  path: string
  headers: http.IncomingHttpHeaders
  status: number
  /** Bytes of the body actually sent before the answer ended or was cut. */
  sent: number
}

export interface FakeTracker {
  /** URL of the tracker JSON, e.g. http://127.a.b.c:PORT/tracker/data/json */
  readonly url: string
  readonly requests: FakeTrackerRequest[]
  /** Serve new content (a new ETag and Last-Modified). */
  setBody: (body: Buffer) => void
  /** Cut the next `times` full or partial answers after `bytes` body bytes. */
  dropAfter: (bytes: number, times?: number) => void
  close: () => Promise<void>
}

export const TRACKER_PATH = '/tracker/data/json'

export async function startFakeTracker (initial: Buffer, opts: { path?: string, ranges?: boolean } = {}): Promise<FakeTracker> {
  const servedPath = opts.path ?? TRACKER_PATH
  let body = initial
  let etag = ''
  let lastModified = ''
  let generation = 0
  const stamp = (): void => {
    generation++
    etag = `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}-${generation}"`
    lastModified = new Date(Date.UTC(2026, 4, 1, 12, 0, generation)).toUTCString()
  }
  stamp()
  let drop: { bytes: number, times: number } | null = null
  const requests: FakeTrackerRequest[] = []

  const server = http.createServer((req, res) => {
    const rec: FakeTrackerRequest = { path: req.url ?? '', headers: req.headers, status: 0, sent: 0 }
    requests.push(rec)
    const send = (status: number, headers: Record<string, string | number>, data?: Buffer): void => {
      rec.status = status
      res.writeHead(status, { etag, 'last-modified': lastModified, 'accept-ranges': opts.ranges === false ? 'none' : 'bytes', ...headers })
      if (!data) { res.end(); return }
      if (drop && drop.times > 0) {
        drop.times--
        const cut = Math.min(drop.bytes, data.length)
        rec.sent = cut
        // Flush what was promised so far, then drop the connection as a failing network would.
        res.write(data.subarray(0, cut), () => setTimeout(() => res.socket?.destroy(), 20))
        return
      }
      rec.sent = data.length
      res.end(data)
    }
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== servedPath) return send(404, { 'content-type': 'text/plain' }, Buffer.from('not found'))
    const inm = req.headers['if-none-match']
    const ims = req.headers['if-modified-since']
    if ((inm !== undefined && inm === etag) || (inm === undefined && ims !== undefined && Date.parse(ims) >= Date.parse(lastModified))) {
      return send(304, {})
    }
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '')
    const ifRange = req.headers['if-range']
    const rangeOk = opts.ranges !== false && range !== null && (ifRange === undefined || ifRange === etag || ifRange === lastModified)
    if (rangeOk) {
      const start = Number(range[1])
      if (start >= body.length) return send(416, { 'content-range': `bytes */${body.length}` })
      const part = body.subarray(start)
      return send(206, { 'content-type': 'application/json', 'content-length': part.length, 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` }, part)
    }
    send(200, { 'content-type': 'application/json', 'content-length': body.length }, body)
  })
  const host = loopbackAddress()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, host, resolve)
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://${host}:${port}${servedPath}`,
    requests,
    setBody: (b) => { body = b; stamp() },
    dropAfter: (bytes, times = 1) => { drop = { bytes, times } },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
