// A loopback server that replays a product's recorded or documented answers (test/fixtures/banners) for
// protocols Debian does not package: each connection's bytes so far go to `answer`, which says what to
// send, whether to close, or to wait for more. Every request it saw is kept for the test to look at.
import { createServer, type Socket } from 'node:net'
import { freePort, loopbackAddress } from './loopback'

export type Answer =
  /** Not enough bytes yet: keep reading. */
  | undefined
  /** Not this protocol: close the connection, as the product does with bytes it cannot frame. */
  | 'close'
  /** Send these bytes; `rest` is how many of the bytes seen the answer consumed (all by default). */
  | { send: Buffer, rest?: Buffer, end?: boolean }

export interface Replay {
  host: string
  port: number
  /** Every buffer handed to `answer` that it answered (the requests, as framed). */
  seen: Buffer[]
  close: () => Promise<void>
}

export async function replayServer (answer: (bytes: Buffer) => Answer, greeting?: Buffer): Promise<Replay> {
  const host = loopbackAddress()
  const port = await freePort(host)
  const seen: Buffer[] = []
  const sockets = new Set<Socket>()
  const server = createServer((sock) => {
    sockets.add(sock)
    sock.on('close', () => sockets.delete(sock))
    sock.on('error', () => {})
    if (greeting) sock.write(greeting)
    let buf: Buffer = Buffer.alloc(0)
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d])
      for (;;) {
        const a = answer(buf)
        if (a === undefined) return
        if (a === 'close') {
          sock.destroy()
          return
        }
        seen.push(buf)
        buf = a.rest ?? Buffer.alloc(0)
        if (a.end === true) {
          sock.end(a.send)
          return
        }
        sock.write(a.send)
        if (!buf.length) return
      }
    })
  })
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(port, host, resolve) })
  return {
    host,
    port,
    seen,
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
