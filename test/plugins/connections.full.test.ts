// One client address may hold only HTTP_MAX_CONNECTIONS_PER_ADDRESS connections: the abuse pass held all 1,024 from
// one address and shut every other client out. A proxy named in TRUST_PROXY is not limited (it carries many clients).
// Real sockets from chosen loopback source addresses to a server on a random loopback address.
import { test } from 'tap'
import { connect, type Socket } from 'node:net'
import { build } from '../helper'
import { listenOnLoopback } from '../support/raw-http'
import { loopbackAddress } from '../support/loopback'

interface Held { socket: Socket, closed: Promise<boolean> }

/** A connection from `from`; `closed` resolves true when the server closes it within `ms`, false when it stays open. */
async function hold (where: { host: string, port: number }, from: string, ms = 1500): Promise<Held> {
  const socket = connect({ host: where.host, port: where.port, localAddress: from })
  await new Promise<void>((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject) })
  socket.on('error', () => {})
  const closed = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    socket.once('close', () => { clearTimeout(timer); resolve(true) })
  })
  return { socket, closed }
}

async function health (where: { host: string, port: number }, from: string): Promise<number> {
  const socket = connect({ host: where.host, port: where.port, localAddress: from })
  socket.on('error', () => {})
  let answer = ''
  socket.on('data', (d) => { answer += d.toString('latin1') })
  await new Promise<void>((resolve) => socket.once('connect', resolve))
  socket.write(`GET /health HTTP/1.1\r\nHost: ${where.host}\r\nConnection: close\r\n\r\n`)
  await new Promise<void>((resolve) => socket.once('close', resolve))
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)
}

test('connections are limited per client address, not only in total', async (t) => {
  const { app } = await build(t, 'memory', { HTTP_MAX_CONNECTIONS_PER_ADDRESS: 5, HTTP_MAX_CONNECTIONS: 100 })
  const where = await listenOnLoopback(app)
  const greedy = loopbackAddress()
  const held: Held[] = []
  t.teardown(() => { for (const h of held) h.socket.destroy() })
  for (let i = 0; i < 5; i++) held.push(await hold(where, greedy))
  const sixth = await hold(where, greedy)
  held.push(sixth)
  t.equal(await sixth.closed, true, 'a sixth idle connection from the same address is closed at once')
  for (const h of held.slice(0, 5)) t.equal(await h.closed, false, 'the first five stay open')
  t.equal(await health(where, loopbackAddress()), 200, 'another address is served meanwhile')
  held[0].socket.destroy()
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(await health(where, greedy), 200, 'one closed, the address may open another')
})

test('a proxy named in TRUST_PROXY is not limited per address', async (t) => {
  const proxy = loopbackAddress()
  const { app } = await build(t, 'memory', { HTTP_MAX_CONNECTIONS_PER_ADDRESS: 3, TRUST_PROXY: proxy })
  const where = await listenOnLoopback(app)
  const held: Held[] = []
  t.teardown(() => { for (const h of held) h.socket.destroy() })
  for (let i = 0; i < 8; i++) held.push(await hold(where, proxy, 800))
  for (const h of held) t.equal(await h.closed, false, 'the proxy keeps all eight')
  t.equal(await health(where, proxy), 200)
})
