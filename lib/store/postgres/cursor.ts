// Reading a long result through a cursor on a connection held for as long as the reader takes (the exports: reports,
// CSV and the other formats), and the semaphore that keeps those readers to part of the pool. Each read is bounded;
// the export as a whole is not.
import type { PoolClient } from 'pg'
import Cursor from 'pg-cursor'
import { withinMs } from '../../time-limit'

/** A client of the pool held until `release`, and the connection error it saw while held, if any. */
export interface CheckedOut {
  client: PoolClient
  release: (err?: Error) => void
  lost: () => Error | undefined
}

/** The most a cursor's read or close may take when the pool sets no per-query limit. */
export const READ_LIMIT_MS = 15_000

/** `fn`, or a rejection once `ms` have passed without its answer ('Query read timeout': an outage of PostgreSQL). */
async function bounded<T> (fn: () => Promise<T>, ms: number): Promise<T> {
  return await withinMs(fn, ms, `Query read timeout: no answer in ${ms} ms`)
}

/**
 * pg times a query from its start to its callback (`query_timeout`), and a cursor never calls back: its timer fired
 * DATABASE_QUERY_TIMEOUT_MS into every export, and pg-cursor then ended the stream as if it were complete, so a
 * report or CSV export that took longer lost its remaining rows, silently. A cursor gets a timer that never fires
 * while it runs (each read is bounded on its own instead), cleared when the export ends.
 */
const CURSOR_TIMER_MS = 2 ** 31 - 1
interface TimedCursor { query_timeout?: number, callback?: () => void }

/**
 * The rows of `text`, `opts.rows` a read, in a read-only REPEATABLE READ transaction on the checked-out client,
 * which is released when the reader ends, stops early or fails (with the error, so that the pool drops a broken
 * connection).
 */
export async function * readCursor<R, T> (held: CheckedOut, text: string, values: unknown[], opts: { rows: number, limitMs: number, pick: (row: R) => T }): AsyncGenerator<T> {
  const { client, release, lost } = held
  let broken: Error | undefined
  let cursor: Cursor<R> | undefined
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    const submitted = new Cursor<R>(text, values)
    ;(submitted as unknown as TimedCursor).query_timeout = CURSOR_TIMER_MS
    cursor = client.query(submitted)
    for (;;) {
      const open = cursor
      const rows = await bounded(async () => await open.read(opts.rows), opts.limitMs)
      if (rows.length === 0) break
      for (const r of rows) yield opts.pick(r)
    }
  } catch (err) {
    broken = err as Error
    throw err
  } finally {
    // A reader that stops early (its client went away) closes the cursor here. On a connection lost while the
    // reader held a row, pg-cursor's close() waits for a 'readyForQuery' that never comes: the export's slot and
    // connection were kept for ever, and after a few such reports every export (and then the pool) waited.
    broken ??= lost()
    if (broken === undefined) {
      try {
        await bounded(async () => { await cursor?.close(); await client.query('COMMIT') }, opts.limitMs)
      } catch (err) {
        broken = err as Error
      }
    }
    // pg's wrapped callback clears the cursor's timer (CURSOR_TIMER_MS).
    ;(cursor as unknown as TimedCursor | undefined)?.callback?.()
    release(broken)
  }
}

/** A counting semaphore: at most `size` holders, the others wait in arrival order. */
export class Slots {
  private used = 0
  private readonly waiting: (() => void)[] = []
  constructor (private readonly size: number) {}

  async acquire (): Promise<void> {
    if (this.used < this.size) { this.used++; return }
    await new Promise<void>((resolve) => this.waiting.push(resolve))
  }

  /** Hands the slot to the next waiter, or frees it. */
  release (): void {
    const next = this.waiting.shift()
    if (next !== undefined) next()
    else this.used--
  }
}
