// Slow and stalled clients are shed by the timeouts, the connection cap holds, and /health keeps answering.
// Real sockets on a random loopback address, with timeouts made small so the test takes seconds.
import { test } from 'tap'
import type { Socket } from 'node:net'
import { build } from './helper'
import { listenOnLoopback, openSocket } from './support/raw-http'

const SMALL = { HTTP_REQUEST_TIMEOUT_MS: 1200, HTTP_HEADERS_TIMEOUT_MS: 800, HTTP_IDLE_TIMEOUT_MS: 1500, HTTP_KEEP_ALIVE_TIMEOUT_MS: 500 }

/** Resolves with the milliseconds until the server closed the socket. */
function closedAfter (s: Socket): Promise<number> {
  const started = Date.now()
  return new Promise((resolve) => {
    s.on('error', () => {})
    // Read what the server answers (a 401 or a 408): an unread socket never sees the server's end.
    s.resume()
    s.on('close', () => resolve(Date.now() - started))
  })
}

async function health (where: { host: string, port: number }): Promise<number> {
  const started = Date.now()
  const res = await fetch(`http://${where.host}:${where.port}/health`)
  if (res.status !== 200) throw new Error(`health ${res.status}`)
  await res.arrayBuffer()
  return Date.now() - started
}

test('stalled bodies, dripping headers and silent connections are closed; /health answers meanwhile', async (t) => {
  const { app } = await build(t, 'memory', SMALL)
  const where = await listenOnLoopback(app)
  const closes: Promise<number>[] = []
  const timers: NodeJS.Timeout[] = []
  t.teardown(() => { for (const x of timers) clearInterval(x) })
  for (let i = 0; i < 10; i++) {
    // Headers and a Content-Length, then nothing.
    const s = await openSocket(where)
    closes.push(closedAfter(s))
    s.write('POST /app/scan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{')
  }
  for (let i = 0; i < 10; i++) {
    // A header byte every 100 ms: never idle, never done.
    const s = await openSocket(where)
    closes.push(closedAfter(s))
    s.write('GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ')
    timers.push(setInterval(() => { if (!s.destroyed) s.write('a') }, 100))
  }
  for (let i = 0; i < 10; i++) {
    // Connected, silent.
    const s = await openSocket(where)
    closes.push(closedAfter(s))
  }
  for (let i = 0; i < 5; i++) {
    t.ok(await health(where) < 500, '/health answers while slow clients hold connections')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const after = await Promise.all(closes)
  t.ok(Math.max(...after) < 4000, `every slow connection was closed (slowest after ${Math.max(...after)} ms)`)
  t.ok(await health(where) < 500, '/health still answers')
})

test('connections beyond HTTP_MAX_CONNECTIONS are closed at once', async (t) => {
  const { app } = await build(t, 'memory', { ...SMALL, HTTP_MAX_CONNECTIONS: 5 })
  const where = await listenOnLoopback(app)
  const held: Socket[] = []
  for (let i = 0; i < 5; i++) held.push(await openSocket(where))
  t.teardown(() => { for (const s of held) s.destroy() })
  await new Promise((resolve) => setTimeout(resolve, 100))
  const extra = await openSocket(where)
  const closedIn = await Promise.race([closedAfter(extra), new Promise<number>((resolve) => setTimeout(() => resolve(-1), 1000))])
  t.ok(closedIn >= 0 && closedIn < 1000, `the sixth connection was closed (${closedIn} ms)`)
  extra.destroy()
  // The held ones are idle and get shed, after which the server serves again.
  await Promise.all(held.map(closedAfter))
  t.ok(await health(where) < 500, '/health answers once the idle connections are gone')
})
