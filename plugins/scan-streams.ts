// Decorates `fastify.scanStreams`: scans followed as Server-Sent Events (GET /app/scan/{id}/events). Limits per key
// (SSE_MAX_STREAMS_PER_KEY) and per instance (SSE_MAX_STREAMS), one store reader per followed scan shared by every
// stream on it, a heartbeat, and the end of every open stream when the server closes.
import fp from 'fastify-plugin'
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { describeError } from '../lib/outage'
import { TooManyStreamsError } from '../lib/errors'
import { isTerminal, type ScanRecord } from '../lib/store/types'
import { ScanSchema } from '../schemas/scan'

declare module 'fastify' {
  interface FastifyInstance {
    scanStreams: ScanStreams
  }
}

export interface ScanStreams {
  /** Throws TooManyStreamsError (429) when this instance or this key has as many streams open as it may. */
  admit(who: string): void
  /**
   * Takes the reply over and streams the scan from `first` on: a `progress` event per change, an `end` event, then
   * the close. `view` is what this client may see of a scan (the same for every event).
   */
  serve(request: FastifyRequest, reply: FastifyReply, first: ScanRecord, view: (scan: ScanRecord) => ScanRecord): void
}

// Followed scans are also re-read this often, in case a change notice was lost (a Redis reconnect).
const SSE_RESYNC_MS = 10_000

interface ScanEvent { id: string, json: string, terminal: boolean, scan: ScanRecord }

/** An event for one state of a scan; its id is derived from the state, so a reconnecting client is not sent the state it has. */
function scanEvent (json: string, scan: ScanRecord): ScanEvent {
  return { id: createHash('sha256').update(json).digest('base64url').slice(0, 22), json, terminal: isTerminal(scan.status), scan }
}

interface Follow {
  streams: Set<(event: ScanEvent) => void>
  unsubscribe: () => void
  reading: boolean
  again: boolean
  last: ScanEvent | null
  timer: NodeJS.Timeout
}

export default fp(async function scanStreamsPlugin (fastify) {
  // Open event streams end when the server closes, instead of holding the close up.
  const streams = new Set<() => void>()
  fastify.addHook('preClose', async () => { for (const end of streams) end() })
  // Streams per key and in all, in this process. One reader per followed scan: a change is read from the store
  // once and sent to every stream on that scan.
  const perKey = new Map<string, number>()
  let open = 0
  const followers = new Map<string, Follow>()
  const heartbeatMs = Math.min(15_000, Math.floor(fastify.config.HTTP_IDLE_TIMEOUT_MS / 2))
  // The hijacked stream bypasses the response serializer, so the Scan schema is applied here: it is the
  // allow-list that keeps internal fields (request hash, creator key id, batch count) off the wire. Compiled
  // by the first stream's reply (the route's serializer compiler), then shared.
  let serializeScan: ((scan: Record<string, unknown>) => string) | undefined

  const read = (id: string, f: Follow): void => {
    if (f.reading) { f.again = true; return }
    f.reading = true
    fastify.store.getScan(id).then((scan) => {
      if (scan === null) return
      const event = scanEvent(serialize(scan), scan)
      if (f.last !== null && f.last.id === event.id) return
      f.last = event
      for (const s of f.streams) s(event)
    }).catch((err) => fastify.log.debug({ error: describeError(err), scanId: id }, 'scan stream read failed')).finally(() => {
      f.reading = false
      if (f.again) { f.again = false; read(id, f) }
    })
  }

  const serialize = (scan: unknown): string => (serializeScan as (s: Record<string, unknown>) => string)(scan as Record<string, unknown>)

  const follow = (id: string, stream: (event: ScanEvent) => void): () => void => {
    let f = followers.get(id)
    if (f === undefined) {
      const created: Follow = { streams: new Set(), unsubscribe: () => {}, reading: false, again: false, last: null, timer: setInterval(() => read(id, created), SSE_RESYNC_MS) }
      created.unsubscribe = fastify.backends.scanEvents.subscribe(id, () => read(id, created))
      f = created
      followers.set(id, f)
    }
    f.streams.add(stream)
    const mine = f
    return () => {
      mine.streams.delete(stream)
      if (mine.streams.size === 0) {
        mine.unsubscribe()
        clearInterval(mine.timer)
        followers.delete(id)
      }
    }
  }

  const admit = (who: string): void => {
    if (open >= fastify.config.SSE_MAX_STREAMS) throw new TooManyStreamsError(`This instance already serves ${open} event streams, the most it allows`)
    if ((perKey.get(who) ?? 0) >= fastify.config.SSE_MAX_STREAMS_PER_KEY) {
      throw new TooManyStreamsError(`This key already has ${fastify.config.SSE_MAX_STREAMS_PER_KEY} event streams open, the most it may`)
    }
  }

  const serve = (request: FastifyRequest, reply: FastifyReply, first: ScanRecord, view: (scan: ScanRecord) => ScanRecord): void => {
    const who = request.principal?.id ?? 'unknown'
    serializeScan ??= reply.compileSerializationSchema(ScanSchema) as (scan: Record<string, unknown>) => string
    open++
    perKey.set(who, (perKey.get(who) ?? 0) + 1)
    reply.hijack()
    const res = reply.raw
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no'
    })
    let closed = false
    const resume = request.headers['last-event-id']
    let lastSent = typeof resume === 'string' ? resume : ''
    // Streams of several keys share one reader: what a scoped key may not read is taken out of its own copy.
    const own = (event: ScanEvent): ScanEvent => {
      const shown = view(event.scan)
      return shown === event.scan ? event : scanEvent(serialize(shown), shown)
    }
    const send = (shared: ScanEvent): void => {
      const event = own(shared)
      if (closed || event.id === lastSent) return
      lastSent = event.id
      res.write(`event: ${event.terminal ? 'end' : 'progress'}\nid: ${event.id}\ndata: ${event.json}\n\n`)
      if (event.terminal) finish()
    }
    const heartbeat = setInterval(() => { if (!closed) res.write(': keep-alive\n\n') }, heartbeatMs)
    const unfollow = follow(first.id, send)
    const finish = (): void => {
      if (closed) return
      closed = true
      clearInterval(heartbeat)
      unfollow()
      open--
      const left = (perKey.get(who) ?? 1) - 1
      if (left === 0) perKey.delete(who)
      else perKey.set(who, left)
      streams.delete(finish)
      res.end()
    }
    request.raw.on('close', finish)
    streams.add(finish)
    const event = own(scanEvent(serialize(first), first))
    // A terminal scan always ends the stream, even for a client that saw its end event before.
    if (event.terminal && event.id === lastSent) lastSent = ''
    send(event)
  }

  fastify.decorate('scanStreams', { admit, serve })
}, { name: 'scan-streams', dependencies: ['env', 'backends'] })
