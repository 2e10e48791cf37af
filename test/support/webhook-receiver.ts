// A webhook receiver for tests: an HTTP server on a random 127.x address that keeps every request (headers and raw
// body) and answers with the statuses it is given, in turn (the last one repeats).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { loopbackAddress } from './loopback'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
  at: number
}

export interface Receiver {
  url: string
  host: string
  port: number
  received: Received[]
  /** Resolves once `n` requests arrived (rejects after `ms`). */
  waitFor(n: number, ms?: number): Promise<Received[]>
  close(): Promise<void>
}

export async function startReceiver (statuses: number[] = [204]): Promise<Receiver> {
  const host = loopbackAddress()
  const received: Received[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() })
      res.statusCode = statuses[Math.min(received.length - 1, statuses.length - 1)]
      res.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, host, () => resolve())
  })
  const { port } = server.address() as { port: number }
  return {
    url: `http://${host}:${port}/hook`,
    host,
    port,
    received,
    async waitFor (n, ms = 20_000) {
      const deadline = Date.now() + ms
      while (received.length < n) {
        if (Date.now() > deadline) throw new Error(`only ${received.length} of ${n} webhook requests arrived in ${ms} ms`)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      return received.slice(0, n)
    },
    async close () {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
