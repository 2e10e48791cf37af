// Keyset paging for the host and finding lists. A cursor names the last item a page handed out by its place in
// the list's order (its sort value and its address or id), so the next page starts right after it: as quick
// deep in a list of millions as on its first page, and neither skipping nor repeating items when others are
// written meanwhile. The cursor also carries a digest of the query it belongs to (list, sort, order and
// filters); one brought to another query is refused rather than read as a place in an order it was not made in.
import { createHash } from 'node:crypto'
import { BadRequestError } from './errors'

/** Where a page ends in its list's order: the item's sort value and its tie-breaker (address or finding id). */
export interface ListPosition {
  value: number | string
  key: string
}

const VERSION = 1
const MAX_LENGTH = 512

/** The query a cursor belongs to: everything but the paging values, whatever order its fields come in. */
function digest (scope: Record<string, unknown>): string {
  const fields = Object.keys(scope).filter((k) => scope[k] !== undefined).sort()
  const text = JSON.stringify(fields.map((k) => [k, scope[k]]))
  return createHash('sha256').update(text).digest('base64url').slice(0, 16)
}

/** An opaque cursor: base64url text of the version, the query's digest and the position. */
export function makeCursor (scope: Record<string, unknown>, at: ListPosition): string {
  return Buffer.from(JSON.stringify([VERSION, digest(scope), at.value, at.key])).toString('base64url')
}

/** The position a cursor names, for the query `scope`; a 400 naming the problem for anything else. */
export function readCursor (cursor: string, scope: Record<string, unknown>): ListPosition {
  let parts: unknown
  try {
    if (cursor.length > MAX_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('not base64url')
    parts = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    throw new BadRequestError('cursor is not a cursor this service made: pass nextCursor from a page as it came')
  }
  if (!Array.isArray(parts) || parts.length !== 4 || parts[0] !== VERSION || typeof parts[1] !== 'string' ||
    !(typeof parts[2] === 'number' ? Number.isFinite(parts[2]) : typeof parts[2] === 'string') || typeof parts[3] !== 'string') {
    throw new BadRequestError('cursor is not a cursor this service made: pass nextCursor from a page as it came')
  }
  if (parts[1] !== digest(scope)) {
    throw new BadRequestError('cursor belongs to another query: page with the sort, order and filters it came with, or start again without cursor')
  }
  return { value: parts[2] as number | string, key: parts[3] as string }
}

/**
 * An item's place beside a position in ascending order (by value, then key as text compares in code units):
 * negative when the item comes first. The key is read only when the values tie.
 */
export function comparePosition (value: number | string, key: () => string, at: ListPosition): number {
  if (value !== at.value) return value < at.value ? -1 : 1
  const k = key()
  return k === at.key ? 0 : k < at.key ? -1 : 1
}

/**
 * What a list request asks its store for. With a cursor: the place after which the page starts, and one item
 * more than the page, so that the answer tells whether another page follows. A cursor with an offset is a 400.
 */
export function keysetRequest (cursor: string | undefined, offset: number, limit: number, scope: Record<string, unknown>): { after?: ListPosition, limit: number } {
  if (cursor === undefined) return { limit }
  if (offset !== 0) throw new BadRequestError('cursor and offset cannot be combined: the cursor already says where the page starts')
  return { after: readCursor(cursor, scope), limit: limit + 1 }
}

/** The page to send: at most `limit` items, and `nextCursor` (after its last item) when another page follows. */
export function withNextCursor<T> (page: { items: T[], total: number }, limit: number, offset: number, after: ListPosition | undefined,
  scope: Record<string, unknown>, position: (item: T) => ListPosition): { items: T[], total: number, nextCursor?: string } {
  const items = page.items.length > limit ? page.items.slice(0, limit) : page.items
  const more = after === undefined ? offset + items.length < page.total : page.items.length > limit
  const last = items[items.length - 1]
  if (!more || last === undefined) return { items, total: page.total }
  return { items, total: page.total, nextCursor: makeCursor(scope, position(last)) }
}
