// Service and version detection on one open TCP port.
//
// Order of work, chosen so the common cases cost one connection and no idle waiting:
// 1. Ports whose protocol speaks first (SSH, FTP, SMTP, MySQL, NATS, …) and ports with no known
//    protocol: connect and wait for a banner. Ports whose protocol waits for the client (Redis,
//    PostgreSQL, AMQP, HTTP, …) skip the wait and get their own probe at once.
// 2. The port's own probe (TLS first on TLS ports, then the protocol inside).
// 3. Fallback probes, each on its own connection and run side by side, so a port that answers
//    nothing costs one probe timeout rather than one per probe. Results are taken in priority
//    order; a lower-priority reply only wins when it says more (a version beats a bare name).
// Every reply, whichever probe provoked it, is also checked against all banner signatures: a
// NATS server answers an HTTP probe with its INFO line, RabbitMQ answers it with an AMQP header.
// 'light' waits less and falls back only to TLS and HTTP; 'full' tries every probe and, on SMTP,
// IMAP, POP3 and FTP, upgrades with STARTTLS to report the certificate.

import net from 'node:net'
import { cpesFor } from '../cpe/aliases'
import { openTls } from './tls'
import type { ServiceInfo, TlsInfo } from './types'
import { joinInfo, MAX_REPLY_BYTES, printable, type ProbeIO, type ProbeMatch } from './probes/common'
import * as amqp from './probes/amqp'
import * as epmd from './probes/epmd'
import * as ftp from './probes/ftp'
import * as http from './probes/http'
import * as imap from './probes/imap'
import * as memcached from './probes/memcached'
import * as mongodb from './probes/mongodb'
import * as mqtt from './probes/mqtt'
import * as mysql from './probes/mysql'
import * as nats from './probes/nats'
import * as pop3 from './probes/pop3'
import * as postgresql from './probes/postgresql'
import * as redis from './probes/redis'
import * as smtp from './probes/smtp'
import * as ssh from './probes/ssh'
import * as tlsProbe from './probes/tls'

export interface DetectOptions {
  host: string
  port: number
  level: 'light' | 'full'
  signal?: AbortSignal
  /** Budget for the whole detection; defaults to 8 s (light) or 20 s (full). */
  timeoutMs?: number
}

interface Timing {
  total: number
  connect: number
  /** How long to wait for a banner where one may come. */
  banner: number
  /** How long to wait for the reply to one probe. */
  probe: number
  /** Quiet time after some bytes that ends a read with no framing to go by. */
  idle: number
}

const TIMING: Record<DetectOptions['level'], Timing> = {
  light: { total: 8000, connect: 2000, banner: 1500, probe: 2000, idle: 300 },
  full: { total: 20000, connect: 3000, banner: 4000, probe: 3000, idle: 500 }
}

/** Ports whose usual protocol speaks first: wait for the banner there before sending anything. */
const SERVER_FIRST_PORTS = new Set([
  ...ssh.ports, ...ftp.ports, ...smtp.ports.filter((p) => p !== 465), 110, 143, ...mysql.ports, ...nats.ports,
  23, 119, 194, 6667, 5900, 5901
])

/** TLS ports where the protocol inside is HTTP, so no banner wait after the handshake. */
const HTTPS_PORTS = new Set([443, 4443, 5986, 6443, 8443, 9443, 10250, 2376])

/** A connection with bounded buffering and one reader at a time. */
class Conn implements ProbeIO {
  private pending: Buffer[] = []
  private pendingLen = 0
  private received = 0
  closed = false
  private wake: (() => void) | null = null

  private readonly onData = (chunk: Buffer): void => {
    const room = MAX_REPLY_BYTES - this.received
    if (room <= 0) return
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk
    this.received += kept.length
    this.pending.push(kept)
    this.pendingLen += kept.length
    this.wake?.()
  }

  private readonly onEnd = (): void => { this.closed = true; this.wake?.() }

  constructor (readonly socket: net.Socket, private readonly signal: AbortSignal) {
    socket.on('data', this.onData)
    socket.on('end', this.onEnd)
    socket.on('close', this.onEnd)
    socket.on('error', this.onEnd)
  }

  static open (host: string, port: number, timeoutMs: number, signal: AbortSignal): Promise<Conn | null> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(null)
      const socket = net.connect({ host, port })
      socket.setNoDelay(true)
      let done = false
      const finish = (ok: boolean): void => {
        if (done) return
        done = true
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        socket.removeListener('error', onError)
        if (!ok) {
          socket.destroy()
          return resolve(null)
        }
        resolve(new Conn(socket, signal))
      }
      const onError = (): void => finish(false)
      const onAbort = (): void => finish(false)
      const timer = setTimeout(() => finish(false), timeoutMs)
      signal.addEventListener('abort', onAbort, { once: true })
      socket.on('error', onError)
      socket.once('connect', () => finish(true))
    })
  }

  write (data: Buffer): void {
    if (!this.closed && !this.socket.destroyed) this.socket.write(data)
  }

  get full (): boolean {
    return this.received >= MAX_REPLY_BYTES
  }

  read (done: (reply: Buffer) => boolean, timeoutMs: number, idleMs = 0): Promise<Buffer> {
    return new Promise((resolve) => {
      let idleTimer: NodeJS.Timeout | undefined
      const take = (): Buffer => {
        const out = Buffer.concat(this.pending, this.pendingLen)
        this.pending = []
        this.pendingLen = 0
        return out
      }
      const finish = (): void => {
        clearTimeout(timer)
        clearTimeout(idleTimer)
        this.wake = null
        this.signal.removeEventListener('abort', finish)
        resolve(take())
      }
      const check = (): void => {
        if (this.closed || this.full || this.signal.aborted) return finish()
        if (this.pendingLen > 0) {
          const buf = Buffer.concat(this.pending, this.pendingLen)
          this.pending = [buf]
          if (done(buf)) return finish()
          if (idleMs > 0) {
            clearTimeout(idleTimer)
            idleTimer = setTimeout(finish, idleMs)
          }
        }
      }
      const timer = setTimeout(finish, Math.max(0, timeoutMs))
      this.signal.addEventListener('abort', finish, { once: true })
      this.wake = check
      check()
    })
  }

  /** Hand the raw socket over (to a TLS wrapper); this Conn stops reading but still owns closing it. */
  release (): net.Socket {
    this.socket.removeListener('data', this.onData)
    this.socket.removeListener('end', this.onEnd)
    this.socket.removeListener('close', this.onEnd)
    this.socket.removeListener('error', this.onEnd)
    // The TLS layer reports errors on its own socket; the raw one must not crash the process.
    this.socket.on('error', () => {})
    this.closed = true
    return this.socket
  }

  close (): void {
    this.socket.destroy()
    this.closed = true
  }
}

interface Found {
  match: ProbeMatch
  reply: Buffer
  tls?: TlsInfo
  /** A plain-text probe saw a TLS record or an HTTPS server's complaint: worth a TLS handshake. */
  tlsHint?: boolean
}

interface Ctx {
  host: string
  port: number
  timing: Timing
  signal: AbortSignal
  conns: Set<Conn | { close: () => void }>
  /** Longest reply seen that nothing recognised, kept as the banner of an unknown service. */
  unknownReply: Buffer
  deadline: number
}

function remaining (ctx: Ctx, cap: number): number {
  return Math.max(0, Math.min(cap, ctx.deadline - Date.now()))
}

async function open (ctx: Ctx): Promise<Conn | null> {
  const c = await Conn.open(ctx.host, ctx.port, remaining(ctx, ctx.timing.connect), ctx.signal)
  if (c) ctx.conns.add(c)
  return c
}

function noteUnknown (ctx: Ctx, reply: Buffer): void {
  if (reply.length > ctx.unknownReply.length) ctx.unknownReply = reply
}

/**
 * Whether a banner is complete: MySQL's greeting by its packet length (its protocol-version byte
 * is a newline), multi-line `NNN-` greetings at their last line, anything else at a line end.
 */
function bannerComplete (reply: Buffer): boolean {
  if (reply.length >= 5 && reply[3] === 0 && (reply[4] === 0x0a || reply[4] === 0xff)) return mysql.complete(reply)
  if (/^\d{3}-/.test(reply.subarray(0, 4).toString('latin1'))) return ftp.complete(reply)
  return reply.includes(0x0a)
}

/** Signatures tried on every reply, whatever was sent, most specific first. */
function recognise (reply: Buffer, port: number): ProbeMatch | null {
  if (!reply.length) return null
  return ssh.parse(reply) ?? mysql.parse(reply) ?? nats.parse(reply) ?? imap.parse(reply) ??
    pop3.parse(reply) ?? smtp.parse(reply, port) ?? ftp.parse(reply, port) ?? amqp.parse(reply) ??
    http.parse(reply) ?? tlsProbe.parse(reply) ?? postgresql.parse(reply) ?? mongodb.parse(reply) ??
    mqtt.parseConnack(reply) ?? memcached.parse(reply) ?? redis.parse(reply)
}

function found (match: ProbeMatch | null, reply: Buffer, ctx: Ctx): Found | null {
  if (!match) {
    noteUnknown(ctx, reply)
    return null
  }
  const { accepted: _accepted, ...rest } = match as ProbeMatch & { accepted?: boolean }
  const body = reply.toString('latin1')
  const hint = rest.service === 'tls' ||
    /plain HTTP request was sent to HTTPS port|speaking plain HTTP to an SSL-enabled server/i.test(body)
  return { match: rest, reply, tlsHint: hint }
}

/** Politeness for text protocols: say goodbye so the server logs a normal session end. */
function farewell (c: Conn, service: string): void {
  if (service === 'ftp' || service === 'smtp' || service === 'pop3') c.write(Buffer.from('QUIT\r\n'))
  else if (service === 'imap') c.write(Buffer.from('a1 LOGOUT\r\n'))
}

/** Read and identify a banner on `c`; settles an FTP-or-SMTP `220` with EHLO. */
async function readBanner (c: Conn, ctx: Ctx, waitMs: number): Promise<{ reply: Buffer, found: Found | null }> {
  const reply = await c.read(bannerComplete, remaining(ctx, waitMs), ctx.timing.idle)
  if (!reply.length) return { reply, found: null }
  let match = recognise(reply, ctx.port)
  if (!match && /^220[ -]/.test(reply.toString('latin1')) && !c.closed) {
    c.write(smtp.ehlo)
    const answer = await c.read((r) => smtp.complete(r), remaining(ctx, ctx.timing.probe))
    match = smtp.parseEhlo(answer)
      ? smtp.parse(reply, smtp.ports[0])
      : /^5\d\d/.test(answer.toString('latin1')) ? ftp.parse(reply, ftp.ports[0]) : null
  }
  return { reply, found: found(match, reply, ctx) }
}

interface StartTlsDialogue {
  /** Capability request and the sign in its answer that STARTTLS is offered. */
  ask?: { send: Buffer, done: (r: Buffer) => boolean, offered: RegExp }
  command: Buffer
  done: (r: Buffer) => boolean
  ok: RegExp
}

const lastLine = (re: RegExp) => (r: Buffer): boolean => re.test(r.toString('latin1'))

/** How each text protocol asks to upgrade the connection (RFC 3207, 9051, 2595, 4217). */
const STARTTLS: Record<string, StartTlsDialogue> = {
  smtp: {
    ask: { send: smtp.ehlo, done: lastLine(/^\d{3} [^\n]*\n/m), offered: /^250[ -]STARTTLS\b/mi },
    command: Buffer.from('STARTTLS\r\n'),
    done: lastLine(/^\d{3} [^\n]*\n/m),
    ok: /^220 /
  },
  imap: {
    ask: { send: Buffer.from('a0 CAPABILITY\r\n'), done: lastLine(/^a0 (OK|NO|BAD)\b[^\n]*\n/mi), offered: /\bSTARTTLS\b/i },
    command: Buffer.from('a1 STARTTLS\r\n'),
    done: lastLine(/^a1 (OK|NO|BAD)\b[^\n]*\n/mi),
    ok: /^a1 OK\b/mi
  },
  pop3: {
    ask: { send: Buffer.from('CAPA\r\n'), done: lastLine(/^(\.|-ERR[^\n]*)\r?\n/m), offered: /^STLS\b/mi },
    command: Buffer.from('STLS\r\n'),
    done: lastLine(/^[+-][^\n]*\n/m),
    ok: /^\+OK/
  },
  ftp: { command: Buffer.from('AUTH TLS\r\n'), done: lastLine(/^\d{3} [^\n]*\n/m), ok: /^234 / }
}

/** Upgrade an identified text-protocol connection with STARTTLS; the certificate when it works. */
async function startTls (c: Conn, service: string, ctx: Ctx): Promise<TlsInfo | undefined> {
  const d = STARTTLS[service]
  if (d.ask) {
    c.write(d.ask.send)
    const caps = await c.read(d.ask.done, remaining(ctx, ctx.timing.probe))
    if (!d.ask.offered.test(caps.toString('latin1'))) return undefined
  }
  c.write(d.command)
  const answer = await c.read(d.done, remaining(ctx, ctx.timing.probe))
  if (!d.ok.test(answer.toString('latin1')) || c.closed) return undefined
  const session = await openTls({ host: ctx.host, port: ctx.port, socket: c.release(), timeoutMs: remaining(ctx, ctx.timing.probe), signal: ctx.signal })
  if (!session) return undefined
  session.socket.destroy()
  return session.info
}

type ProbeRun = (c: Conn, ctx: Ctx) => Promise<Found | null>

interface ClientProbe {
  name: string
  ports: number[]
  /** Runs on a fresh plain connection. */
  run?: ProbeRun
  /** Opens its own connection instead (the TLS handshake). */
  runAlone?: (ctx: Ctx) => Promise<Found | null>
}

/** Send one request and identify the reply. */
function simple (request: (ctx: Ctx) => Buffer, complete: (r: Buffer) => boolean, parse: (r: Buffer) => ProbeMatch | null): ProbeRun {
  return async (c, ctx) => {
    c.write(request(ctx))
    const reply = await c.read(complete, remaining(ctx, ctx.timing.probe), ctx.timing.idle)
    return found(parse(reply) ?? recognise(reply, ctx.port), reply, ctx)
  }
}

const redisProbe: ClientProbe = {
  name: 'redis', ports: redis.ports, run: simple(() => redis.request, redis.complete, redis.parse)
}

const postgresProbe: ClientProbe = {
  name: 'postgresql',
  ports: postgresql.ports,
  run: async (c, ctx) => {
    c.write(postgresql.request)
    const reply = await c.read(postgresql.complete, remaining(ctx, ctx.timing.probe))
    let m = postgresql.parse(reply)
    if (m && /no authentication required/.test(m.extraInfo ?? '')) c.write(postgresql.terminate)
    if (m && !m.version && !ctx.signal.aborted) {
      // No exact version: a refused protocol version on a second connection narrows the range.
      const c2 = await open(ctx)
      if (c2) {
        c2.write(postgresql.negotiationProbe)
        const neg = await c2.read(postgresql.complete, remaining(ctx, ctx.timing.probe))
        c2.close()
        m = postgresql.parse(reply, neg) ?? m
      }
    }
    return found(m ?? recognise(reply, ctx.port), reply, ctx)
  }
}

const amqpProbe: ClientProbe = {
  name: 'amqp', ports: amqp.ports.filter((p) => p !== 5671), run: simple(() => amqp.request, amqp.complete, amqp.parse)
}

const mqttProbe: ClientProbe = {
  name: 'mqtt',
  ports: mqtt.ports.filter((p) => p !== 8883),
  run: async (c, ctx) => {
    c.write(mqtt.request)
    const reply = await c.read(mqtt.completeConnack, remaining(ctx, ctx.timing.probe))
    const connack = mqtt.parseConnack(reply)
    if (!connack) return found(recognise(reply, ctx.port), reply, ctx)
    const { accepted, ...base } = connack
    if (!accepted) return found(base, reply, ctx)
    // Mosquitto publishes its version on a retained $SYS topic; other brokers stay silent.
    c.write(mqtt.subscribePacket())
    const more = await c.read(mqtt.completeVersion, remaining(ctx, Math.min(ctx.timing.probe, 1500)))
    c.write(mqtt.disconnect)
    const version = mqtt.parseVersion(more)
    const all = Buffer.concat([reply, more])
    return found(version ? { ...version, extraInfo: base.extraInfo } : base, all, ctx)
  }
}

const mongoProbe: ClientProbe = {
  name: 'mongodb',
  ports: mongodb.ports,
  run: async (c, ctx) => {
    c.write(mongodb.request)
    const reply = await c.read(mongodb.complete, remaining(ctx, ctx.timing.probe))
    const hello = mongodb.parse(reply)
    if (!hello) return found(recognise(reply, ctx.port), reply, ctx)
    if (hello.version || !mongodb.supportsOpMsg(reply)) return found(hello, reply, ctx)
    c.write(mongodb.buildInfoMsg())
    const more = await c.read(mongodb.complete, remaining(ctx, ctx.timing.probe))
    const build = mongodb.parseBuildInfo(more)
    return found(build ? { ...build, extraInfo: hello.extraInfo ?? build.extraInfo } : hello, reply, ctx)
  }
}

const memcachedProbe: ClientProbe = {
  name: 'memcached', ports: memcached.ports, run: simple(() => memcached.request, memcached.complete, memcached.parse)
}

const epmdProbe: ClientProbe = {
  name: 'epmd',
  ports: epmd.ports,
  run: simple(() => epmd.request, (r) => r.length > 4 && r[r.length - 1] === 0x0a, epmd.parse)
}

const httpRun: ProbeRun = simple((ctx) => http.request(ctx.host, ctx.port), http.complete, http.parse)

const httpProbe: ClientProbe = { name: 'http', ports: http.ports, run: httpRun }

/** Inside TLS: the banner where one comes, otherwise the probe the port suggests, else HTTP. */
async function insideTls (c: Conn, ctx: Ctx, alpn?: string): Promise<Found | null> {
  const inner = INNER_BY_PORT.get(ctx.port)
  if (inner?.run) return await inner.run(c, ctx)
  if (!HTTPS_PORTS.has(ctx.port) && alpn !== 'http/1.1') {
    const { reply, found: f } = await readBanner(c, ctx, Math.min(ctx.timing.banner, 2000))
    if (f) {
      farewell(c, f.match.service)
      return f
    }
    if (reply.length || c.closed) return null
  }
  return httpRun(c, ctx)
}

async function tlsRun (ctx: Ctx): Promise<Found | null> {
  const session = await openTls({ host: ctx.host, port: ctx.port, timeoutMs: remaining(ctx, ctx.timing.probe), signal: ctx.signal })
  if (!session) return null
  const c = new Conn(session.socket, ctx.signal)
  ctx.conns.add(c)
  let inner: Found | null
  try {
    inner = await insideTls(c, ctx, session.alpn)
  } finally {
    c.close()
  }
  if (!inner) return { match: { service: 'tls' }, reply: Buffer.alloc(0), tls: session.info }
  const service = inner.match.service === 'http' ? 'https' : inner.match.service
  return { match: { ...inner.match, service }, reply: inner.reply, tls: session.info }
}

const tlsClientProbe: ClientProbe = { name: 'tls', ports: tlsProbe.ports, runAlone: tlsRun }

const CLIENT_PROBES: ClientProbe[] = [tlsClientProbe, httpProbe, redisProbe, postgresProbe, amqpProbe,
  mqttProbe, mongoProbe, memcachedProbe, epmdProbe]

/** The plain protocol a TLS port wraps when it is not HTTP and does not speak first. */
const INNER_BY_PORT = new Map<number, ClientProbe>([[5671, amqpProbe], [8883, mqttProbe], [6380, redisProbe]])

const LIGHT_FALLBACKS = ['tls', 'http']

function score (f: Found | null): number {
  if (!f) return -1
  if (f.tlsHint && !f.tls) return 0
  return 1 + (f.match.product ? 1 : 0) + (f.match.version ? 1 : 0)
}

/** Run one probe on a fresh connection (or its own TLS one); never rejects. */
async function attempt (p: ClientProbe, ctx: Ctx, reuse?: Conn | null): Promise<Found | null> {
  try {
    if (p.runAlone) return await p.runAlone(ctx)
    if (!p.run) return null
    const c = reuse ?? await open(ctx)
    if (!c) return null
    try {
      return await p.run(c, ctx)
    } finally {
      c.close()
    }
  } catch {
    return null
  }
}

/**
 * Run probes side by side (at most `limit` at once) and take the best result: higher score wins,
 * ties go to the earlier probe; stop early once an earlier-settled prefix holds a versioned result.
 */
async function race (probes: ClientProbe[], ctx: Ctx, limit: number): Promise<Found | null> {
  const results: Array<Found | null | undefined> = probes.map(() => undefined)
  let next = 0
  let best: Found | null = null
  return await new Promise((resolve) => {
    let running = 0
    let finished = false
    const settle = (): void => {
      if (finished) return
      let prefixDone = true
      best = null
      for (let i = 0; i < probes.length; i++) {
        if (results[i] === undefined) { prefixDone = false; continue }
        if (score(results[i]!) > score(best)) best = results[i]!
        if (prefixDone && score(best) >= 3) break
      }
      const allDone = results.every((r) => r !== undefined)
      if (allDone || (prefixDone && score(best) >= 3) || ctx.signal.aborted) {
        finished = true
        resolve(best)
        return
      }
      launch()
    }
    const launch = (): void => {
      while (running < limit && next < probes.length && !ctx.signal.aborted) {
        const i = next++
        running++
        void attempt(probes[i], ctx).then((r) => {
          running--
          results[i] = r
          settle()
        })
      }
    }
    launch()
    if (!probes.length) resolve(null)
  })
}

function toService (f: Found | null, ctx: Ctx): ServiceInfo {
  if (!f || score(f) <= 0) {
    const info: ServiceInfo = { service: 'unknown', cpe: [] }
    if (ctx.unknownReply.length) info.banner = printable(ctx.unknownReply)
    return info
  }
  const info: ServiceInfo = { ...f.match, cpe: f.match.product ? cpesFor(f.match.product, f.match.version) : [] }
  const banner = f.reply.length ? f.reply : ctx.unknownReply
  if (banner.length) info.banner = printable(banner)
  if (f.tls) info.tls = f.tls
  return info
}

async function run (opts: DetectOptions, ctx: Ctx): Promise<ServiceInfo> {
  const own = CLIENT_PROBES.filter((p) => p.ports.includes(opts.port))
  const tlsFirst = own.some((p) => p.runAlone)
  const waitBanner = SERVER_FIRST_PORTS.has(opts.port) || own.length === 0
  const tried = new Set<string>()
  let best: Found | null = null

  // Phase 1: banner, then the port's own probe on the same connection when it is still fresh.
  let first: Conn | null = null
  if (!tlsFirst) {
    first = await open(ctx)
    if (!first) return toService(null, ctx)
    if (waitBanner) {
      const { reply, found: f } = await readBanner(first, ctx, ctx.timing.banner)
      if (f && !f.tlsHint) {
        if (opts.level === 'full' && STARTTLS[f.match.service]) {
          const info = await startTls(first, f.match.service, ctx)
          if (info) {
            f.tls = info
            f.match.extraInfo = joinInfo(f.match.extraInfo, 'STARTTLS')
          } else {
            farewell(first, f.match.service)
          }
        } else {
          farewell(first, f.match.service)
        }
        first.close()
        return toService(f, ctx)
      }
      if (reply.length || first.closed) {
        first.close()
        first = null
      }
    }
  }
  for (const p of own) {
    if (ctx.signal.aborted) break
    tried.add(p.name)
    const f = await attempt(p, ctx, p.runAlone ? null : first)
    first = null
    if (score(f) > score(best)) best = f
    if (score(best) >= 1) return toService(best, ctx)
  }
  first?.close()

  // Phase 2: fallbacks side by side; a TLS hint from phase 1 puts the handshake first anyway.
  const names = opts.level === 'light' ? LIGHT_FALLBACKS : CLIENT_PROBES.map((p) => p.name)
  const fallbacks = CLIENT_PROBES.filter((p) => names.includes(p.name) && !tried.has(p.name))
  if (!ctx.signal.aborted && fallbacks.length) {
    const f = await race(fallbacks, ctx, fallbacks.length)
    if (score(f) > score(best)) best = f
  }
  return toService(best, ctx)
}

/**
 * Identify the service on an open TCP port. Never throws for network trouble: an unreachable,
 * silent or unrecognised port gives service 'unknown' with whatever banner was seen.
 */
export async function detectService (opts: DetectOptions): Promise<ServiceInfo> {
  const timing = TIMING[opts.level] ?? TIMING.light
  const total = opts.timeoutMs ?? timing.total
  const ac = new AbortController()
  const onAbort = (): void => ac.abort()
  if (opts.signal?.aborted) return { service: 'unknown', cpe: [] }
  opts.signal?.addEventListener('abort', onAbort, { once: true })
  const deadline = setTimeout(onAbort, total)
  const ctx: Ctx = {
    host: opts.host,
    port: opts.port,
    timing,
    signal: ac.signal,
    conns: new Set(),
    unknownReply: Buffer.alloc(0),
    deadline: Date.now() + total
  }
  try {
    return await run(opts, ctx)
  } catch {
    return toService(null, ctx)
  } finally {
    clearTimeout(deadline)
    opts.signal?.removeEventListener('abort', onAbort)
    ac.abort()
    for (const c of ctx.conns) c.close()
  }
}
