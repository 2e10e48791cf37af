// What every command shares: the exit statuses, the error that ends a run, the streams, the typed client
// built from the global options, and the one function that turns an API answer into data or a CliError.
import type { Command } from 'commander'
import { createVulnscanClient, type VulnscanClient } from '../sdk'

export const EXIT = { OK: 0, FINDINGS: 1, USAGE: 2, API: 3, INTERRUPTED: 130 } as const

/** An error that ends the CLI with a message on stderr and a given exit status. */
export class CliError extends Error {
  constructor (message: string, readonly exitCode: number) {
    super(message)
  }
}

export const usage = (message: string): CliError => new CliError(`${message}\nRun 'vulnscan --help' for usage.`, EXIT.USAGE)

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean, columns?: number }
  stderr: NodeJS.WritableStream & { isTTY?: boolean, columns?: number }
  env: Record<string, string | undefined>
  /** Calls `handler` on Ctrl-C (SIGINT) until the returned function is called; absent where nothing can interrupt. */
  onInterrupt?: (handler: () => void) => () => void
}

/** The options every command takes (declared once on the program; accepted before or after the command). */
export interface GlobalOptions {
  url?: string
  key?: string
  json?: boolean
  wide?: boolean
  requestTimeout?: string
}

export interface Context {
  io: Io
  client: VulnscanClient
  baseUrl: string
  json: boolean
  /** Columns the tables must fit (a terminal's width); null prints every column (`--wide`, or not a terminal). */
  width: number | null
  /** How to repeat the connection part of a command for the user (`--url` when it was given as a flag; never the key). */
  connectionHint: string
}

export function print (io: Io, text: string): void {
  io.stdout.write(text.endsWith('\n') ? text : text + '\n')
}

export function printJson (io: Io, value: unknown): void {
  print(io, JSON.stringify(value, null, 2))
}

export function integer (name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw usage(`--${name} must be an integer from ${min} to ${max}, not '${value}'`)
  return Number(value)
}

export function oneOf<T extends string> (name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined
  if (!allowed.includes(value as T)) throw usage(`--${name} must be one of: ${allowed.join(', ')} (got '${value}')`)
  return value as T
}

/** A probability from the command line (an EPSS threshold): a number from 0 to 1. */
export function probability (name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(value) || !Number.isFinite(n)) throw usage(`--${name} must be a number from 0 to 1, not '${value}'`)
  return n
}

/** `--limit` and `--offset` of a list command. */
export function paging (opts: { limit?: string, offset?: string }): { limit?: number, offset?: number } {
  const limit = integer('limit', opts.limit, 1, 500)
  const offset = integer('offset', opts.offset, 0, 10_000_000)
  return { ...(limit !== undefined ? { limit } : {}), ...(offset !== undefined ? { offset } : {}) }
}

/**
 * A fetch that gives up when the answer's headers take longer than `ms` (a server that accepts and never answers
 * must not hang a CI job); a caller's own signal (Ctrl-C, --timeout) still aborts it. The request's signal is
 * followed through a listener that holds this call's controller strongly: a composite `AbortSignal.any(...)` is
 * held only weakly by its sources and, once collected, never passes an abort on (the command then hung for ever).
 */
function withDeadline (ms: number): typeof globalThis.fetch {
  return async (input, init) => {
    const request = input instanceof Request && init === undefined ? input : new Request(input as Request, init)
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')), ms)
    const follow = (): void => { controller.abort(request.signal.reason) }
    if (request.signal.aborted) follow()
    else request.signal.addEventListener('abort', follow, { once: true })
    try {
      return await globalThis.fetch(new Request(request, { signal: controller.signal }))
    } finally {
      clearTimeout(timer)
    }
  }
}

/**
 * Settles with `promise`, or rejects with the signal's reason as soon as `signal` aborts, whether or not the
 * operation behind `promise` noticed: the command's own wait never depends on an abort reaching a socket.
 */
export function unlessAborted<T> (promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => { reject(signal.reason) }
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => { signal.removeEventListener('abort', onAbort) })
  })
}

/** The client and settings a command runs with, from the global options and the environment. */
export function createContext (command: Command, io: Io, { needsKey = true } = {}): Context {
  const opts = command.optsWithGlobals<GlobalOptions>()
  const baseUrl = (opts.url ?? io.env.VULNSCAN_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '')
  if (!/^https?:\/\/[^/]+/.test(baseUrl)) throw usage(`--url must be an http:// or https:// URL, not '${baseUrl}'`)
  const apiKey = opts.key ?? io.env.VULNSCAN_API_KEY
  if (needsKey && (apiKey === undefined || apiKey === '')) throw usage('No API key: pass --key <key> or set VULNSCAN_API_KEY.')
  const requestTimeout = integer('request-timeout', opts.requestTimeout, 1, 3600) ?? 60
  const client = createVulnscanClient({ baseUrl, apiKey, fetch: withDeadline(requestTimeout * 1000) })
  const connectionHint = [opts.url !== undefined ? ` --url ${baseUrl}` : '', opts.key !== undefined ? ' --key <your key>' : ''].join('')
  return { io, client, baseUrl, json: opts.json === true, width: tableWidth(io, opts.wide === true), connectionHint }
}

/**
 * The width tables fit: the terminal's columns (COLUMNS when the stream does not say), none with `--wide` or when
 * the output is not a terminal and COLUMNS is unset (a file or a pipe takes every column).
 */
export function tableWidth (io: Io, wide: boolean): number | null {
  if (wide) return null
  if (typeof io.stdout.columns === 'number' && io.stdout.columns > 0) return io.stdout.columns
  const env = Number(io.env.COLUMNS)
  if (Number.isInteger(env) && env > 0) return env
  return io.stdout.isTTY === true ? 80 : null
}

/** A failure to get any answer: unreachable, or silent past the request timeout. */
export function networkError (err: unknown, baseUrl: string): CliError {
  if ((err as Error).name === 'TimeoutError') return new CliError(`vulnscan at ${baseUrl} did not answer within the request timeout`, EXIT.API)
  const cause = (err as { cause?: { code?: string, message?: string } }).cause
  const why = cause?.code ?? cause?.message ?? (err as Error).message
  return new CliError(`Cannot reach vulnscan at ${baseUrl}: ${why}`, EXIT.API)
}

interface ApiResult<T> { data?: T, error?: unknown, response: Response }

/** The CliError for an answer that is not a 2xx, in words a person can act on. */
export function answerError (response: Response, body: unknown): CliError {
  const error = (body as { error?: unknown } | undefined)?.error
  const text = typeof error === 'string' ? error : `${response.status} ${response.statusText}`
  if (response.status === 401) {
    return new CliError(`The API key was refused (401 ${text}). Pass a valid key with --key or VULNSCAN_API_KEY.`, EXIT.API)
  }
  // The server says what is wrong with what was typed: a usage error, with the server's own words.
  if (response.status === 400) return new CliError(`Rejected: ${text}`, EXIT.USAGE)
  return new CliError(`vulnscan answered ${response.status}: ${text}`, EXIT.API)
}

/** Awaits an SDK call and turns every failure into a CliError. */
export async function api<T> (call: Promise<ApiResult<T>>, baseUrl: string): Promise<{ data: T, response: Response }> {
  let result: ApiResult<T>
  try {
    result = await call
  } catch (err) {
    throw networkError(err, baseUrl)
  }
  if (result.response.ok) return { data: result.data as T, response: result.response }
  throw answerError(result.response, result.error)
}

/** GET /vulnerability answers JSON or CSV by Accept; asked without text/csv it must be JSON. */
export function jsonPage<T extends object> ({ data }: { data: T | string }): T {
  if (typeof data === 'string') throw new CliError('vulnscan answered CSV where JSON was asked for', EXIT.API)
  return data
}

/** What an action hands back to `run`: the exit status. */
export type Action = (ctx: Context) => Promise<number>
