// Outages of the scaled deployment's dependencies (Redis, PostgreSQL): telling a lost or stalled connection from any
// other error, naming the dependency without its address (clients, logs and scan reasons must never show where the
// database lives), and saying once per process when an outage starts and when it ends.

export type Dependency = 'Redis' | 'PostgreSQL'

/** What each dependency holds, for messages a client reads. */
export const DEPENDENCY_ROLE: Record<Dependency, string> = {
  Redis: 'Redis (scans, keys and the queue)',
  PostgreSQL: 'PostgreSQL (the results database)'
}

/** A dependency did not answer: the work is to be tried again later, not given up. */
export class DependencyUnavailableError extends Error {
  override readonly name = 'DependencyUnavailableError'
  /** The driver's error code (ECONNREFUSED, 57P01, …), never its message, which may hold an address. */
  readonly reason: string

  constructor (readonly dependency: Dependency, cause: unknown) {
    const reason = outageReason(cause)
    super(`${dependency} is unavailable (${reason})`)
    this.reason = reason
  }
}

// PostgreSQL's SQLSTATEs for a server that went away or is not there yet: connection exceptions (class 08),
// admin shutdown, crash shutdown, cannot connect now, and too many connections.
const PG_OUTAGE_CODE = /^(08|57P0[1-3]$|53300$)/
const NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED'])
const REDIS_MESSAGES = /Connection is closed|Stream isn't writeable|enableOfflineQueue|Command timed out|Reached the max retries per request limit|Redis is loading|LOADING |connect ETIMEDOUT/
const PG_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable|terminating connection due to|the database system is (starting up|shutting down|in recovery mode)|Query read timeout/

function codeOf (err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

function messageOf (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** Which dependency an error says is out of reach, or null when it is some other failure. */
export function outageOf (err: unknown): Dependency | null {
  if (err instanceof DependencyUnavailableError) return err.dependency
  if (err === null || typeof err !== 'object') return null
  const name = (err as Error).name
  if (name === 'MaxRetriesPerRequestError') return 'Redis'
  const code = codeOf(err)
  const message = messageOf(err)
  if (REDIS_MESSAGES.test(message)) return 'Redis'
  if ((code !== undefined && PG_OUTAGE_CODE.test(code)) || PG_MESSAGES.test(message)) return 'PostgreSQL'
  return null
}

/** Whether an error is a lost or refused connection, whatever it was to (the caller knows which dependency). */
export function isConnectionFailure (err: unknown): boolean {
  if (outageOf(err) !== null) return true
  const code = codeOf(err)
  if (code !== undefined && NET_CODES.has(code)) return true
  return /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH)\b/.test(messageOf(err))
}

/** A short reason with no address in it: the error's code, or the kind of failure. */
export function outageReason (err: unknown): string {
  if (err instanceof DependencyUnavailableError) return err.reason
  const code = codeOf(err)
  if (code === 'ECONNREFUSED') return 'connection refused'
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset'
  if (code === '57P01' || code === '57P02' || code === '57P03') return 'server shutting down or restarting'
  if (code === '53300') return 'too many connections'
  if (code !== undefined && /^08/.test(code)) return 'connection failure'
  const message = messageOf(err)
  if (/Command timed out|ETIMEDOUT|timeout exceeded/.test(message)) return 'no answer in time'
  if (/ECONNREFUSED/.test(message)) return 'connection refused'
  if (/Reached the max retries per request limit|Connection is closed|Stream isn't writeable|enableOfflineQueue/.test(message)) return 'not connected'
  if (/terminat|Connection terminated|not queryable/.test(message)) return 'connection lost'
  if (/loading/i.test(message)) return 'server loading its data'
  return 'connection failure'
}

/** A message with any IPv4 or bracketed IPv6 address and port taken out, for text that leaves the process. */
export function withoutAddresses (message: string): string {
  return message
    .replace(/\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b/g, '<address>')
    .replace(/\[[0-9a-fA-F:.]+\](:\d+)?/g, '<address>')
}

export interface OutageLogger {
  warn(obj: object, msg: string): void
  info?(obj: object, msg: string): void
}

/**
 * One line when a dependency becomes unreachable and one when it answers again, per process: an outage of
 * seconds used to log a line per connection and reconnect attempt (hundreds), which hid what mattered.
 *
 * A dependency that flaps (a database whose backends are terminated every few milliseconds answers one query and
 * fails the next) is told once per `quietMs`: an outage that starts within `quietMs` of the last one told is told
 * only if it lasts `quietMs`, and its end only if it was told. An outage ends at the first answer.
 */
export class OutageLog {
  private readonly open = new Map<Dependency, { since: number, told: boolean, timer?: NodeJS.Timeout }>()
  private readonly lastTold = new Map<Dependency, number>()

  constructor (private readonly log: OutageLogger, private readonly quietMs = 10_000) {}

  down (dependency: Dependency, err: unknown): void {
    if (this.open.has(dependency)) return
    const now = Date.now()
    const outage: { since: number, told: boolean, timer?: NodeJS.Timeout } = { since: now, told: false }
    this.open.set(dependency, outage)
    const reason = outageReason(err)
    if (now - (this.lastTold.get(dependency) ?? -Infinity) >= this.quietMs) {
      this.tell(dependency, outage, reason)
      return
    }
    // A flap right after an outage told: told only if it lasts.
    outage.timer = setTimeout(() => { if (this.open.get(dependency) === outage) this.tell(dependency, outage, reason) }, this.quietMs)
    outage.timer.unref()
  }

  private tell (dependency: Dependency, outage: { told: boolean }, reason: string): void {
    outage.told = true
    this.lastTold.set(dependency, Date.now())
    this.log.warn({ dependency, reason }, `${dependency} unavailable`)
  }

  up (dependency: Dependency): void {
    const outage = this.open.get(dependency)
    if (outage === undefined) return
    this.open.delete(dependency)
    if (outage.timer !== undefined) clearTimeout(outage.timer)
    if (!outage.told) return
    const entry = { dependency, downMs: Date.now() - outage.since }
    if (this.log.info !== undefined) this.log.info(entry, `${dependency} available again`)
    else this.log.warn(entry, `${dependency} available again`)
  }

  isDown (dependency: Dependency): boolean {
    return this.open.has(dependency)
  }
}

/**
 * `target` with every method's connection failures turned into DependencyUnavailableError(dependency) and told to
 * `outages`; a method that succeeds says the dependency answers. Async iterators (streamed exports) are covered
 * item by item. Other errors pass unchanged.
 */
export function guardDependency<T extends object> (target: T, dependency: Dependency, outages?: OutageLog): T {
  const failed = (err: unknown): never => {
    if (err instanceof DependencyUnavailableError) throw err
    if (isConnectionFailure(err)) {
      outages?.down(dependency, err)
      throw new DependencyUnavailableError(dependency, err)
    }
    throw err
  }
  const answered = <V>(v: V): V => {
    outages?.up(dependency)
    return v
  }
  const iterate = (it: AsyncIterator<unknown> & Partial<AsyncIterable<unknown>>): AsyncIterableIterator<unknown> => {
    const wrapped: AsyncIterableIterator<unknown> = {
      next: async (...args: [] | [unknown]) => { try { return answered(await it.next(...args)) } catch (err) { return failed(err) } },
      return: async (value?: unknown) => { try { return await (it.return?.(value) ?? { done: true as const, value }) } catch (err) { return failed(err) } },
      [Symbol.asyncIterator] () { return wrapped }
    }
    return wrapped
  }
  return new Proxy(target, {
    get (obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver) as unknown
      if (typeof value !== 'function' || prop === 'constructor') return value
      return function guarded (...args: unknown[]) {
        let out: unknown
        try {
          out = (value as (...a: unknown[]) => unknown).apply(obj, args)
        } catch (err) {
          return failed(err)
        }
        if (out instanceof Promise) return out.then(answered, failed)
        if (out !== null && typeof out === 'object' && typeof (out as AsyncIterator<unknown>).next === 'function' && Symbol.asyncIterator in out) {
          return iterate(out as unknown as AsyncIterator<unknown>)
        }
        return out
      }
    }
  })
}

/** One line for a log about any error: an outage's dependency and reason, or the message without addresses. */
export function describeError (err: unknown): string {
  if (isConnectionFailure(err)) return `${outageOf(err) ?? 'a dependency'} unavailable (${outageReason(err)})`
  return withoutAddresses(err instanceof Error ? err.message : String(err))
}
