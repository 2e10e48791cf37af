// Keyset paging for the host and finding lists. A cursor names the last item a page handed out by its place in
// the list's order (its sort value and its address or id), so the next page starts right after it: as quick
// deep in a list of millions as on its first page, and neither skipping nor repeating items when others are
// written meanwhile. The cursor also carries a digest of the query it belongs to (list, sort, order and
// filters); one brought to another query is refused rather than read as a place in an order it was not made in.
// Cursors are signed (HMAC-SHA256 under a key of the deployment): a client cannot mint one, and every field of one
// that passes is still checked (a number where the order sorts numbers, an address or a finding id as the key).
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'
import { BadRequestError } from './errors'

/** Where a page ends in its list's order: the item's sort value and its tie-breaker (address or finding id). */
export interface ListPosition {
  value: number | string
  key: string
}

/** What a list's positions hold: the sort value's type, and a test of the tie-breaker. */
export interface PositionShape {
  value: 'number' | 'string'
  key: (key: string) => boolean
}

const VERSION = 2
const MAX_LENGTH = 512
const MAC_LENGTH = 16

const NOT_OURS = 'cursor is not a cursor this service made: pass nextCursor from a page as it came'

/**
 * The key cursors are signed with: derived from CREDENTIALS_KEY (which every process of the scaled deployment shares),
 * else from SERVICE_API_KEY, else random (one embedded process: its cursors are its own).
 */
export function cursorKey (config: { CREDENTIALS_KEY?: string, SERVICE_API_KEY?: string }): Buffer {
  return deploymentKey(config, 'vulnscan list cursor v2')
}

/**
 * A key every process of the deployment derives alike, one per purpose (`info`): from CREDENTIALS_KEY, else
 * SERVICE_API_KEY, else random (one embedded process: what it signs is its own).
 */
export function deploymentKey (config: { CREDENTIALS_KEY?: string, SERVICE_API_KEY?: string }, info: string): Buffer {
  const secret = config.CREDENTIALS_KEY !== undefined ? Buffer.from(config.CREDENTIALS_KEY, 'hex')
    : config.SERVICE_API_KEY !== undefined ? Buffer.from(config.SERVICE_API_KEY, 'utf8') : randomBytes(32)
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), info, 32))
}

/** Signs, reads and checks cursors under one key. */
export class CursorCodec {
  constructor (private readonly key: Buffer) {}

  private mac (text: string): Buffer {
    return createHmac('sha256', this.key).update(text).digest().subarray(0, MAC_LENGTH)
  }

  /** The query a cursor belongs to: everything but the paging values, whatever order its fields come in. */
  private digest (scope: Record<string, unknown>): string {
    const fields = Object.keys(scope).filter((k) => scope[k] !== undefined).sort()
    return createHmac('sha256', this.key).update(JSON.stringify(fields.map((k) => [k, scope[k]]))).digest('base64url').slice(0, 16)
  }

  /** An opaque cursor: base64url of its MAC, then the JSON text of the version, the query's digest and the position. */
  make (scope: Record<string, unknown>, at: ListPosition): string {
    const text = JSON.stringify([VERSION, this.digest(scope), at.value, at.key])
    return Buffer.concat([this.mac(text), Buffer.from(text)]).toString('base64url')
  }

  /** The position a cursor names, for the query `scope`; a 400 naming the problem for anything else. */
  read (cursor: string, scope: Record<string, unknown>, shape: PositionShape): ListPosition {
    if (cursor.length > MAX_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new BadRequestError(NOT_OURS)
    const bytes = Buffer.from(cursor, 'base64url')
    if (bytes.length <= MAC_LENGTH) throw new BadRequestError(NOT_OURS)
    const text = bytes.subarray(MAC_LENGTH).toString('utf8')
    if (!timingSafeEqual(bytes.subarray(0, MAC_LENGTH), this.mac(text))) throw new BadRequestError(NOT_OURS)
    let parts: unknown
    try {
      parts = JSON.parse(text)
    } catch {
      throw new BadRequestError(NOT_OURS)
    }
    if (!Array.isArray(parts) || parts.length !== 4 || parts[0] !== VERSION || typeof parts[1] !== 'string') throw new BadRequestError(NOT_OURS)
    if (parts[1] !== this.digest(scope)) {
      throw new BadRequestError('cursor belongs to another query: page with the sort, order and filters it came with, or start again without cursor')
    }
    // Signed by us, for this query: still, nothing is handed to a store that its order could not hold.
    const [,, value, key] = parts as [number, string, unknown, unknown]
    const valueOk = shape.value === 'number' ? typeof value === 'number' && Number.isFinite(value) : typeof value === 'string' && value.length <= 128 && !value.includes('\u0000')
    if (!valueOk || typeof key !== 'string' || !shape.key(key)) throw new BadRequestError(NOT_OURS)
    return { value, key } as ListPosition
  }

  /**
   * What a list request asks its store for. With a cursor: the place after which the page starts, and one item
   * more than the page, so that the answer tells whether another page follows. A cursor with an offset is a 400.
   */
  request (cursor: string | undefined, offset: number, limit: number, scope: Record<string, unknown>, shape: PositionShape): { after?: ListPosition, limit: number } {
    if (cursor === undefined) return { limit }
    if (offset !== 0) throw new BadRequestError('cursor and offset cannot be combined: the cursor already says where the page starts')
    return { after: this.read(cursor, scope, shape), limit: limit + 1 }
  }

  /** The page to send: at most `limit` items, and `nextCursor` (after its last item) when another page follows. */
  next<T> (page: { items: T[], total: number }, limit: number, offset: number, after: ListPosition | undefined,
    scope: Record<string, unknown>, position: (item: T) => ListPosition): { items: T[], total: number, nextCursor?: string } {
    const items = page.items.length > limit ? page.items.slice(0, limit) : page.items
    const more = after === undefined ? offset + items.length < page.total : page.items.length > limit
    const last = items[items.length - 1]
    if (!more || last === undefined) return { items, total: page.total }
    return { items, total: page.total, nextCursor: this.make(scope, position(last)) }
  }
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
