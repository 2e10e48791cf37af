// Follows a scan to its end through its event stream (GET /app/scan/{id}/events): a progress line on a terminal,
// a line per state change otherwise. Ctrl-C leaves the scan running and says how to follow or cancel it.
import { SingleBar } from 'cli-progress'
import { EventSourceParserStream } from 'eventsource-parser/stream'
import { answerError, CliError, EXIT, networkError, unlessAborted, type Context } from './context'
import type { Scan } from './output'
import { progressLine, terminalColumns, type ProgressState } from './progress'

const TERMINAL = new Set(['completed', 'failed', 'cancelled'])
/** Reconnections in a row that may fail (the API restarting, a proxy dropping the stream) before giving up. */
const RECONNECTS = 5

export interface FollowOptions {
  timeoutSeconds?: number
  /** No progress output at all (--json). */
  quiet: boolean
}

function stateOf (scan: Scan): ProgressState {
  const p = scan.progress
  return { status: scan.status, percent: p.percent, hostsDone: p.hostsDone, hostsTotal: p.hostsTotal, portsDone: p.portsDone, portsTotal: p.portsTotal }
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> => new Promise((resolve) => {
  const timer = setTimeout(done, ms)
  function done (): void {
    clearTimeout(timer)
    signal.removeEventListener('abort', done)
    resolve()
  }
  signal.addEventListener('abort', done, { once: true })
})

/** Reads one connection of the stream; resolves with the final scan, or null when the stream closed before its end. */
async function readStream (ctx: Context, id: string, lastEventId: string | undefined, signal: AbortSignal, onScan: (scan: Scan, eventId: string | undefined) => void): Promise<Scan | null> {
  let result
  try {
    result = await unlessAborted(ctx.client.GET('/app/scan/{id}/events', {
      params: { path: { id }, ...(lastEventId !== undefined ? { header: { 'last-event-id': lastEventId } } : {}) },
      headers: { accept: 'text/event-stream' },
      parseAs: 'stream',
      signal
    }), signal)
  } catch (err) {
    if (signal.aborted) throw err
    throw networkError(err, ctx.baseUrl)
  }
  if (!result.response.ok || result.data === undefined || result.data === null) throw answerError(result.response, result.error)
  const reader = result.data.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader()
  // Cancelling the reader closes the response body, and with it the connection: held here, not through a signal.
  const cancel = (): void => { reader.cancel(signal.reason).catch(() => {}) }
  signal.addEventListener('abort', cancel, { once: true })
  try {
    for (;;) {
      const { done, value: event } = await unlessAborted(reader.read(), signal)
      if (done) return null
      if (event.event !== 'progress' && event.event !== 'end') continue
      const scan = JSON.parse(event.data) as Scan
      onScan(scan, event.id)
      if (event.event === 'end' || TERMINAL.has(scan.status)) return scan
    }
  } finally {
    signal.removeEventListener('abort', cancel)
    if (!signal.aborted) reader.cancel().catch(() => {})
  }
}

/** Polls the scan once a second: only where the server refuses another stream (429, too many open). */
async function poll (ctx: Context, id: string, signal: AbortSignal, onScan: (scan: Scan) => void): Promise<Scan> {
  for (;;) {
    let result
    try {
      result = await unlessAborted(ctx.client.GET('/app/scan/{id}', { params: { path: { id } }, signal }), signal)
    } catch (err) {
      if (signal.aborted) throw err
      throw networkError(err, ctx.baseUrl)
    }
    if (!result.response.ok || result.data === undefined) throw answerError(result.response, result.error)
    onScan(result.data)
    if (TERMINAL.has(result.data.status)) return result.data
    await sleep(1000, signal)
    if (signal.aborted) throw signal.reason
  }
}

export async function followScan (ctx: Context, id: string, { timeoutSeconds, quiet }: FollowOptions): Promise<Scan> {
  const { io } = ctx
  const bar = !quiet && io.stderr.isTTY === true
    ? new SingleBar({
      stream: io.stderr,
      hideCursor: true,
      clearOnComplete: false,
      format: (_options, _params, payload: ProgressState) => progressLine(id, payload, terminalColumns(io.stderr, io.env))
    })
    : null
  let latest: Scan | null = null
  let lastStatus = ''
  const show = (scan: Scan): void => {
    latest = scan
    bar?.update(Math.floor(scan.progress.percent), stateOf(scan))
    if (bar === null && !quiet && scan.status !== lastStatus) io.stderr.write(`scan ${id}: ${scan.status}\n`)
    lastStatus = scan.status
  }

  const controller = new AbortController()
  let why: 'timeout' | 'interrupt' | null = null
  const timer = timeoutSeconds === undefined ? null : setTimeout(() => { why = 'timeout'; controller.abort() }, timeoutSeconds * 1000)
  const offInterrupt = io.onInterrupt?.(() => { why = 'interrupt'; controller.abort() })
  const stopped = (): CliError => {
    const state = latest === null ? 'queued' : `${(latest as Scan).status}, ${Math.floor((latest as Scan).progress.percent)}%`
    if (why === 'timeout') {
      return new CliError(`Scan ${id} did not finish within ${timeoutSeconds} s (it is still ${latest === null ? 'queued' : (latest as Scan).status}; follow it with 'vulnscan status ${id} --wait')`, EXIT.API)
    }
    return new CliError(`Interrupted. Scan ${id} goes on on the server (${state}).\n` +
      `  follow it again: vulnscan status ${id} --wait${ctx.connectionHint}\n` +
      `  cancel it:       vulnscan cancel ${id}${ctx.connectionHint}`, EXIT.INTERRUPTED)
  }

  try {
    bar?.start(100, 0, { status: 'queued', percent: 0, hostsDone: 0, hostsTotal: '?', portsDone: 0, portsTotal: '?' })
    let lastEventId: string | undefined
    let failures = 0
    for (;;) {
      try {
        const end = await readStream(ctx, id, lastEventId, controller.signal, (scan, eventId) => {
          lastEventId = eventId ?? lastEventId
          failures = 0
          show(scan)
        })
        if (end !== null) return end
      } catch (err) {
        if (controller.signal.aborted) throw stopped()
        const tooMany = err instanceof CliError && /answered 429/.test(err.message)
        if (tooMany) return await poll(ctx, id, controller.signal, show)
        // A refusal (401, 404) ends the wait; a dropped or refused connection is retried.
        if (!(err instanceof CliError) || !/^Cannot reach|did not answer/.test(err.message) || ++failures > RECONNECTS) throw err
      }
      // The stream closed before the scan's end (an API instance restarting): pick it up where it stopped.
      await sleep(Math.min(5000, 500 * 2 ** failures), controller.signal)
      if (controller.signal.aborted) throw stopped()
    }
  } catch (err) {
    if (controller.signal.aborted && !(err instanceof CliError)) throw stopped()
    throw err
  } finally {
    if (timer !== null) clearTimeout(timer)
    offInterrupt?.()
    bar?.stop()
  }
}
