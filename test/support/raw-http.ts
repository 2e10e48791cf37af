// Raw sockets against a test server on a random loopback address: for what an HTTP client library would
// refuse to send (malformed framing, slow or stalled requests).
import { connect, type Socket } from 'node:net'
import { loopbackAddress } from './loopback'
import type { FastifyInstance } from 'fastify'

/** Listen on a random loopback address and port 0; returns where. */
export async function listenOnLoopback (app: FastifyInstance): Promise<{ host: string, port: number }> {
  const host = loopbackAddress()
  await app.listen({ host, port: 0 })
  const addr = app.server.address()
  if (addr === null || typeof addr === 'string') throw new Error('no address')
  return { host, port: addr.port }
}

/** Send raw bytes and collect everything the server answers until it closes (or `ms` passes). */
export async function rawExchange (where: { host: string, port: number }, bytes: string, ms = 3000): Promise<string> {
  return await new Promise((resolve, reject) => {
    const s = connect(where.port, where.host)
    let out = ''
    const timer = setTimeout(() => { s.destroy(); resolve(out) }, ms)
    s.on('data', (d) => { out += d.toString('latin1') })
    s.on('error', (err) => { clearTimeout(timer); if (out !== '') resolve(out); else reject(err) })
    s.on('close', () => { clearTimeout(timer); resolve(out) })
    s.write(bytes)
  })
}

/** The JSON body of a raw HTTP/1.1 answer. */
export function rawBody (answer: string): unknown {
  const at = answer.indexOf('\r\n\r\n')
  return JSON.parse(answer.slice(at + 4))
}

/** Open a socket and resolve once it is connected. */
export async function openSocket (where: { host: string, port: number }): Promise<Socket> {
  return await new Promise((resolve, reject) => {
    const s = connect(where.port, where.host, () => resolve(s))
    s.once('error', reject)
  })
}
