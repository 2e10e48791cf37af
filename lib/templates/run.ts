// Running templates on one port: each request of a template on a fresh connection (TLS when the template says
// `tls://` or the service runs inside TLS), its inputs sent in turn and read as they ask, then its matchers and
// extractors. Every template on the port shares one budget and a small number of them run at once; a template that
// could not reach the port (refused, timed out) is no verdict, so an earlier finding of it stands.

import { Conn } from '../scanner/conn'
import { openTls } from '../scanner/tls'
import { interpolate, str, type Vars } from './dsl'
import { runExtractor, runMatchers, varsOf, type Parts } from './match'
import { bindsTo } from './binding'
import { sslExchange } from './ssl'
import { dnsExchange, isDnsRequest } from './dns'
import type { LoadedTemplate, NetRequest } from './types'
import type { TemplateHit } from '../domain/services'

export interface TemplateTarget {
  host: string
  port: number
  /** The service detection named (unknown: only templates declaring the port run). */
  service: string | undefined
  /** The service runs inside TLS from its first byte. */
  secure: boolean
  /** A UDP port: only dns templates run there, over UDP. */
  udp?: boolean
  signal?: AbortSignal
  /** Budget of every template on the port together (default 8 s). */
  timeoutMs?: number
  /** Run intrusive templates too. */
  intrusive: boolean
  /** Templates at once on the port (default 4). */
  concurrency?: number
}

export interface TemplateRun {
  hits: TemplateHit[]
  /** Every template that applied reached a verdict. */
  concluded: boolean
  /** How many templates applied. */
  ran: number
}

const DEFAULT_BUDGET_MS = 8000
const CONNECT_MS = 2000
const READ_MS = 3000
const IDLE_MS = 400

/** The templates that run on a port. */
export function templatesFor (all: readonly LoadedTemplate[], port: number, service: string | undefined, intrusive: boolean, secure = false): LoadedTemplate[] {
  return all.filter((t) => (intrusive || !t.intrusive) && bindsTo(t, port, service, secure))
}

interface Ctx {
  host: string
  port: number
  secure: boolean
  udp: boolean
  signal: AbortSignal
  remaining: (cap: number) => number
}

async function open (ctx: Ctx, tls: boolean): Promise<Conn | null> {
  if (tls) {
    const wrapped = await openTls({ host: ctx.host, port: ctx.port, timeoutMs: ctx.remaining(CONNECT_MS + READ_MS), signal: ctx.signal })
    return wrapped === null ? null : new Conn(wrapped.socket, ctx.signal)
  }
  return await Conn.open(ctx.host, ctx.port, ctx.remaining(CONNECT_MS), ctx.signal)
}

function bytesOf (input: { data: string, hex: boolean }, vars: Vars): Buffer {
  const text = interpolate(input.data, vars)
  return input.hex ? Buffer.from(text.replace(/\s+/g, ''), 'hex') : Buffer.from(text, 'latin1')
}

/** One request's exchange: its parts, or null when the port could not be reached or said nothing at all. */
async function exchange (ctx: Ctx, req: NetRequest, vars: Vars): Promise<Parts | null> {
  const c = await open(ctx, req.tls || ctx.secure)
  if (c === null) return null
  try {
    const parts: Parts = { data: '', request: '' }
    const reads: string[] = []
    const take = async (n: number): Promise<string> => {
      const got = await c.read((r) => r.length >= n, ctx.remaining(READ_MS), IDLE_MS)
      return got.subarray(0, n).toString('latin1')
    }
    for (const input of req.inputs) {
      const out = bytesOf(input, vars)
      if (out.length > 0) {
        c.write(out)
        parts.request += out.toString('latin1')
      }
      if (input.read > 0) {
        const got = await take(input.read)
        reads.push(got)
        if (input.name !== undefined) {
          parts[input.name] = got
          vars[input.name] = got
        }
      }
    }
    // The final read (read-size bytes, or everything until the server stops with read-all), unless the last input
    // read for itself: then its read is the end of the exchange.
    const lastRead = req.inputs.length > 0 && req.inputs[req.inputs.length - 1].read > 0
    if (!lastRead || req.readAll) {
      reads.push(req.readAll ? (await c.read(() => false, ctx.remaining(READ_MS), IDLE_MS)).toString('latin1') : await take(req.readSize))
    }
    parts.data = reads.join('')
    if (ctx.signal.aborted) return null
    return parts
  } finally {
    c.close()
  }
}

function evidenceOf (t: LoadedTemplate, matched: string[], extracted: string[], parts: Parts): string {
  const reply = parts.data.replace(/[^\x20-\x7e]+/g, '.').slice(0, 200)
  const bits = [`template ${t.id}`]
  if (matched.length > 0) bits.push(`matched: ${matched.slice(0, 10).join(', ')}`)
  if (extracted.length > 0) bits.push(`extracted: ${extracted.slice(0, 10).join(', ')}`)
  bits.push(`reply: ${reply}`)
  return bits.join('; ').slice(0, 600)
}

/** One template on the port: its hit, [] when it did not match, null when it could not tell. */
export async function runTemplate (t: LoadedTemplate, ctx: Ctx): Promise<TemplateHit | null | 'miss'> {
  const base: Vars = { Hostname: `${ctx.host.includes(':') ? `[${ctx.host}]` : ctx.host}:${ctx.port}`, Host: ctx.host, Port: String(ctx.port), RDN: ctx.host, FQDN: ctx.host }
  for (const [k, v] of Object.entries(t.variables)) {
    try {
      base[k] = interpolate(v, base)
    } catch {
      return null
    }
  }
  for (const req of [...t.requests, ...(t.ssl ?? []), ...(t.dns ?? [])]) {
    const vars: Vars = { ...base }
    let parts: Parts | null | 'miss' | 'silent'
    try {
      parts = isDnsRequest(req) ? await dnsExchange(ctx, req, vars) : 'address' in req ? await sslExchange(ctx, req, vars) : await exchange(ctx, req, vars)
    } catch {
      return null
    }
    if (parts === null) return null
    // The server refused the handshake the ssl request asked for: its answer is no.
    if (parts === 'miss') continue
    // A DNS server that gave no reply answered nothing this request could match.
    if (parts === 'silent') continue
    const all = varsOf(parts, vars)
    const extracted: string[] = []
    for (const e of req.extractors) {
      const got = runExtractor(e, parts, all)
      if (e.name !== undefined && got.length > 0) {
        all[e.name] = got[0]
        if (e.internal) base[e.name] = got[0]
      }
      if (!e.internal) extracted.push(...got)
    }
    const m = runMatchers(req.matchers, req.matchersCondition, parts, all)
    const hit = req.matchers.length > 0 ? m.ok : extracted.length > 0
    if (hit) {
      return {
        id: t.id,
        name: t.name,
        severity: t.severity,
        cveIds: t.cveIds,
        description: t.description,
        ...(t.remediation !== undefined ? { remediation: t.remediation } : {}),
        tags: t.tags,
        matched: m.matched.map(str),
        extracted,
        evidence: evidenceOf(t, m.matched, extracted, parts)
      }
    }
  }
  return 'miss'
}

/** Run every template that applies to the port, within the budget. Never throws. */
export async function runTemplates (target: TemplateTarget, all: readonly LoadedTemplate[]): Promise<TemplateRun> {
  const todo = templatesFor(all, target.port, target.service, target.intrusive, target.secure).filter((t) => target.udp !== true || t.dns !== undefined)
  if (todo.length === 0) return { hits: [], concluded: true, ran: 0 }
  if (target.signal?.aborted === true) return { hits: [], concluded: false, ran: 0 }
  const ac = new AbortController()
  const budget = target.timeoutMs ?? DEFAULT_BUDGET_MS
  const deadline = Date.now() + budget
  const onAbort = (): void => ac.abort()
  target.signal?.addEventListener('abort', onAbort, { once: true })
  const timer = setTimeout(onAbort, budget)
  const ctx: Ctx = { host: target.host, port: target.port, secure: target.secure, udp: target.udp === true, signal: ac.signal, remaining: (cap) => Math.max(0, Math.min(cap, deadline - Date.now())) }
  const results: (TemplateHit | null | 'miss')[] = new Array(todo.length)
  let next = 0
  const lane = async (): Promise<void> => {
    while (next < todo.length && !ac.signal.aborted) {
      const i = next++
      results[i] = await runTemplate(todo[i], ctx).catch(() => null)
    }
  }
  try {
    await Promise.all(Array.from({ length: Math.min(todo.length, Math.max(1, target.concurrency ?? 4)) }, lane))
    const hits = results.filter((r): r is TemplateHit => r !== null && r !== undefined && r !== 'miss')
    const concluded = results.length === todo.length && results.every((r) => r !== null && r !== undefined) && !ac.signal.aborted
    return { hits, concluded, ran: todo.length }
  } finally {
    clearTimeout(timer)
    target.signal?.removeEventListener('abort', onAbort)
    ac.abort()
  }
}
