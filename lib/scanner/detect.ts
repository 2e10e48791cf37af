// Service and version detection on one open TCP port: the engine that runs the probe registry
// (./probes/index.ts). It knows no protocol; each probe's descriptor says where it applies and
// how it talks.
//
// Order of work, chosen so the common cases cost one connection and no idle waiting:
// 1. Ports whose protocol speaks first and ports that no probe claims: connect and wait for a
//    banner. Ports whose protocol waits for the client skip the wait and get their probe at once.
// 2. The port's own probe (TLS first on TLS ports, then the protocol inside).
// 3. Fallback probes, each on its own connection and run side by side, so a port that answers
//    nothing costs one probe timeout rather than one per probe. Results are taken in registry
//    order; a lower-priority reply only wins when it says more (a version beats a bare name).
//    Once a probe's own parser has named the port's protocol and every probe before the best
//    reply has finished, the probes still out get a short grace to say more, not their full wait:
//    a port that spoke one protocol seldom answers another's request (ClickHouse's native port
//    answers HTTP too, at once), and a silent one only costs time.
// Every reply, whichever probe provoked it, is also checked against all registered signatures: a
// NATS server answers an HTTP probe with its INFO line, RabbitMQ answers it with an AMQP header.
// 'light' waits less and falls back only to the probes marked for it; 'full' tries every probe
// and upgrades text protocols that declare a STARTTLS dialogue to report the certificate.

import { setMaxListeners } from 'node:events'
import { cpesFor } from '../cpe/aliases'
import { Conn } from './conn'
import { openTls } from './tls'
import type { ServiceInfo, TlsInfo } from '../domain/services'
import { joinInfo, printable, type ProbeMatch } from './probes/common'
import type { ProbeDescriptor, ProbeOutcome, ProbeSession } from './probes/descriptor'
import { REGISTRY, type Registry } from './probes/index'

export interface DetectOptions {
  host: string
  port: number
  level: 'light' | 'full'
  signal?: AbortSignal
  /** Budget for the whole detection; defaults to 8 s (light) or 20 s (full). */
  timeoutMs?: number
  /** The probes to run (tests); the full registry by default. */
  registry?: Registry
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
  /** Once the port's protocol is named, how long fallbacks that could only win by saying more still get. */
  grace: number
}

const TIMING: Record<DetectOptions['level'], Timing> = {
  light: { total: 8000, connect: 2000, banner: 1500, probe: 2000, idle: 300, grace: 500 },
  full: { total: 20000, connect: 3000, banner: 4000, probe: 3000, idle: 500, grace: 1000 }
}

interface Found {
  match: ProbeMatch
  reply: Buffer
  tls?: TlsInfo
  /** A plain-text probe saw a TLS record or an HTTPS server's complaint: worth a TLS handshake. */
  tlsHint?: boolean
  /** The probe's own parser named its own protocol in the reply to its own request. */
  own?: boolean
}

interface Ctx {
  host: string
  port: number
  timing: Timing
  registry: Registry
  signal: AbortSignal
  conns: Set<{ close: () => void }>
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

/** Whether a banner is complete: by the framing of a protocol that claims it, else at a line end. */
function bannerComplete (registry: Registry, reply: Buffer): boolean {
  for (const p of registry.probes) if (p.banner?.claims(reply)) return p.banner.complete(reply)
  return reply.includes(0x0a)
}

function recognise (ctx: Ctx, reply: Buffer): ProbeMatch | null {
  return ctx.registry.recognise(reply, ctx.port)?.match ?? null
}

function found (match: ProbeMatch | null, reply: Buffer, ctx: Ctx): Found | null {
  if (!match) {
    noteUnknown(ctx, reply)
    return null
  }
  const handshake = ctx.registry.handshake
  const hint = (handshake !== undefined && match.service === handshake.name) ||
    ctx.registry.probes.some((p) => p.hintsTls?.(reply) === true)
  return { match: { ...match }, reply, tlsHint: hint }
}

/** The descriptor behind a match (its service is the probe's name, or that name inside TLS). */
function probeOf (ctx: Ctx, service: string): ProbeDescriptor | undefined {
  return ctx.registry.byName.get(service) ?? ctx.registry.probes.find((p) => p.tlsService === service)
}

/** Politeness for text protocols: say goodbye so the server logs a normal session end. */
function farewell (c: Conn, ctx: Ctx, service: string): void {
  const bye = probeOf(ctx, service)?.farewell
  if (bye) c.write(bye)
}

/** A second TLS connection, for a conversation that needs one inside TLS. */
async function openSecure (ctx: Ctx): Promise<Conn | null> {
  const wrapped = await openTls({ host: ctx.host, port: ctx.port, timeoutMs: remaining(ctx, ctx.timing.probe), signal: ctx.signal })
  if (!wrapped) return null
  const c = new Conn(wrapped.socket, ctx.signal)
  ctx.conns.add(c)
  return c
}

function session (ctx: Ctx, secure = false): ProbeSession {
  return {
    host: ctx.host,
    port: ctx.port,
    signal: ctx.signal,
    idleMs: ctx.timing.idle,
    secure,
    wait: (capMs) => remaining(ctx, Math.min(capMs ?? ctx.timing.probe, ctx.timing.probe)),
    open: async () => secure ? await openSecure(ctx) : await open(ctx),
    recognise: (reply) => recognise(ctx, reply)
  }
}

/** Run a probe's exchange on `c`: its conversation, or its one request and reply. */
async function exchange (p: ProbeDescriptor, c: Conn, ctx: Ctx, secure = false): Promise<ProbeOutcome | null> {
  if (p.converse) return await p.converse(c, session(ctx, secure))
  if (!p.request) return null
  c.write(p.request({ host: ctx.host, port: ctx.port }))
  const reply = await c.read(p.complete ?? ((r) => r.includes(0x0a)), remaining(ctx, ctx.timing.probe), ctx.timing.idle)
  return { match: p.parse?.(reply, ctx.port) ?? null, reply }
}

async function runOn (p: ProbeDescriptor, c: Conn, ctx: Ctx, secure = false): Promise<Found | null> {
  const out = await exchange(p, c, ctx, secure)
  if (!out) return null
  const f = found(out.match ?? recognise(ctx, out.reply), out.reply, ctx)
  if (f && out.match?.service === p.name) f.own = true
  return f
}

/**
 * Read and identify a banner on `c`. A banner no signature claims may get one clarifying
 * question (FTP or SMTP?); a recognised banner without a version may lead into its protocol's
 * conversation on the same connection.
 */
async function readBanner (c: Conn, ctx: Ctx, waitMs: number, secure = false): Promise<{ reply: Buffer, found: Found | null }> {
  const reply = await c.read((r) => bannerComplete(ctx.registry, r), remaining(ctx, waitMs), ctx.timing.idle)
  if (!reply.length) return { reply, found: null }
  const hit = ctx.registry.recognise(reply, ctx.port)
  let match = hit?.match ?? null
  if (!match && !c.closed) {
    const q = ctx.registry.probes.find((p) => p.clarify?.applies(reply))?.clarify
    if (q) {
      c.write(q.send)
      const answer = await c.read(q.done, remaining(ctx, ctx.timing.probe))
      match = q.decide(reply, answer)
    }
  }
  if (hit && !hit.match.version && hit.probe.continueAfterBanner && hit.probe.converse && !c.closed) {
    const more = await hit.probe.converse(c, session(ctx, secure))
    if (more.match && (more.match.product || more.match.version)) {
      return { reply, found: found(more.match, Buffer.concat([reply, more.reply]), ctx) }
    }
  }
  return { reply, found: found(match, reply, ctx) }
}

/** Upgrade an identified text-protocol connection with STARTTLS; the certificate when it works. */
async function startTls (c: Conn, p: ProbeDescriptor, ctx: Ctx): Promise<TlsInfo | undefined> {
  const d = p.starttls
  if (!d) return undefined
  if (d.ask) {
    c.write(d.ask.send)
    const caps = await c.read(d.ask.done, remaining(ctx, ctx.timing.probe))
    if (!d.ask.offered.test(caps.toString('latin1'))) return undefined
  }
  c.write(d.command)
  const answer = await c.read(d.done, remaining(ctx, ctx.timing.probe))
  if (!d.ok.test(answer.toString('latin1')) || c.closed) return undefined
  const wrapped = await openTls({ host: ctx.host, port: ctx.port, socket: c.release(), timeoutMs: remaining(ctx, ctx.timing.probe), signal: ctx.signal })
  if (!wrapped) return undefined
  wrapped.socket.destroy()
  return wrapped.info
}

/** Inside TLS: the protocol the port names, else a banner where one comes, else the TLS default (HTTP). */
async function insideTls (c: Conn, ctx: Ctx, alpn?: string): Promise<Found | null> {
  const inner = ctx.registry.insideTls.get(ctx.port)
  if (inner && !inner.serverFirst && (inner.request || inner.converse)) return await runOn(inner, c, ctx, true)
  const byAlpn = alpn !== undefined ? ctx.registry.probes.find((p) => p.alpn?.includes(alpn)) : undefined
  if (byAlpn) return await runOn(byAlpn, c, ctx, true)
  const { reply, found: f } = await readBanner(c, ctx, Math.min(ctx.timing.banner, 2000), true)
  if (f) {
    farewell(c, ctx, f.match.service)
    return f
  }
  if (reply.length || c.closed) return null
  // Silence: the port's own protocol when it can start the talk (IRC registers), else the default.
  const fallback = inner?.converse ?? inner?.request ? inner : ctx.registry.probes.find((p) => p.tlsDefault)
  return fallback ? await runOn(fallback, c, ctx, true) : null
}

async function tlsRun (ctx: Ctx): Promise<Found | null> {
  const wrapped = await openTls({ host: ctx.host, port: ctx.port, timeoutMs: remaining(ctx, ctx.timing.probe), signal: ctx.signal })
  if (!wrapped) return null
  const c = new Conn(wrapped.socket, ctx.signal)
  ctx.conns.add(c)
  let inner: Found | null
  try {
    inner = await insideTls(c, ctx, wrapped.alpn)
  } finally {
    c.close()
  }
  const name = (ctx.registry.handshake as ProbeDescriptor).name
  if (!inner) return { match: { service: name }, reply: Buffer.alloc(0), tls: wrapped.info }
  const service = ctx.registry.byName.get(inner.match.service)?.tlsService ?? inner.match.service
  return { match: { ...inner.match, service }, reply: inner.reply, tls: wrapped.info }
}

function score (f: Found | null): number {
  if (!f) return -1
  if (f.tlsHint && !f.tls) return 0
  return 1 + (f.match.product ? 1 : 0) + (f.match.version ? 1 : 0)
}

/** Run one probe on a fresh connection (or its own TLS one); never rejects. */
async function attempt (p: ProbeDescriptor, ctx: Ctx, reuse?: Conn | null): Promise<Found | null> {
  try {
    if (p.handshake) return await tlsRun(ctx)
    const c = reuse ?? await open(ctx)
    if (!c) return null
    try {
      return await runOn(p, c, ctx)
    } finally {
      c.close()
    }
  } catch {
    return null
  }
}

/**
 * Run probes side by side (at most `limit` at once) and take the best result: higher score wins,
 * ties go to the earlier probe; stop early once an earlier-settled prefix holds a versioned result,
 * or once every probe before the best has finished, some probe's own parser has named the port's
 * protocol, and the probes still out (which could only win by saying more) have had their grace.
 */
async function race (probes: ProbeDescriptor[], ctx: Ctx, limit: number): Promise<Found | null> {
  const results: Array<Found | null | undefined> = probes.map(() => undefined)
  let next = 0
  let best: Found | null = null
  return await new Promise((resolve) => {
    let running = 0
    let finished = false
    let grace: NodeJS.Timeout | undefined
    let graceOver = false
    const settle = (): void => {
      if (finished) return
      let prefixDone = true
      // Every probe up to the best has finished: none still out can take it on a tie.
      let bestSettled = false
      best = null
      for (let i = 0; i < probes.length; i++) {
        if (results[i] === undefined) { prefixDone = false; continue }
        if (score(results[i]!) > score(best)) {
          best = results[i]!
          bestSettled = prefixDone
        }
        if (prefixDone && score(best) >= 3) break
      }
      const named = bestSettled && score(best) >= 1 && results.some((r) => r?.own === true && score(r) >= 1)
      if (named && !grace) grace = setTimeout(() => { graceOver = true; settle() }, ctx.timing.grace)
      const allDone = results.every((r) => r !== undefined)
      if (allDone || (prefixDone && score(best) >= 3) || (named && graceOver) || ctx.signal.aborted) {
        finished = true
        clearTimeout(grace)
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

/**
 * The port's own probes: the TLS handshake on TLS-first ports, then the probes that list the port
 * and can start the talk (a server-first protocol with a conversation runs it after a silent banner).
 */
function ownProbes (registry: Registry, port: number): ProbeDescriptor[] {
  const plain = registry.clientFirst.filter((p) => !p.handshake && p.ports.includes(port))
  return registry.tlsFirstPorts.has(port) && registry.handshake ? [registry.handshake, ...plain] : plain
}

async function run (opts: DetectOptions, ctx: Ctx): Promise<ServiceInfo> {
  const { registry } = ctx
  const own = ownProbes(registry, opts.port)
  const tlsFirst = own.some((p) => p.handshake)
  const waitBanner = registry.serverFirstPorts.has(opts.port) || own.length === 0
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
        const p = probeOf(ctx, f.match.service)
        if (opts.level === 'full' && p?.starttls) {
          const info = await startTls(first, p, ctx)
          if (info) {
            f.tls = info
            f.match.extraInfo = joinInfo(f.match.extraInfo, 'STARTTLS')
          } else {
            farewell(first, ctx, f.match.service)
          }
        } else {
          farewell(first, ctx, f.match.service)
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
    const f = await attempt(p, ctx, p.handshake ? null : first)
    first = null
    if (score(f) > score(best)) best = f
    if (score(best) >= 1) return toService(best, ctx)
  }
  first?.close()

  // Phase 2: fallbacks side by side; a TLS hint from phase 1 puts the handshake first anyway.
  const fallbacks = registry.clientFirst.filter((p) =>
    !tried.has(p.name) && (opts.level === 'full' ? p.fallback !== undefined : p.fallback === 'light'))
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
  // Every probe run side by side listens for the end of the detection, several times over.
  setMaxListeners(128, ac.signal)
  const onAbort = (): void => ac.abort()
  if (opts.signal?.aborted) return { service: 'unknown', cpe: [] }
  opts.signal?.addEventListener('abort', onAbort, { once: true })
  const deadline = setTimeout(onAbort, total)
  const ctx: Ctx = {
    host: opts.host,
    port: opts.port,
    timing,
    registry: opts.registry ?? REGISTRY,
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
