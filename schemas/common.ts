import { Type, type Static, type TSchema, type TObject, type TUnsafe } from '@sinclair/typebox'

/** Reference a shared schema by its $id while keeping its static type. */
export function ref<T extends TSchema> (schema: T): TUnsafe<Static<T>> {
  if (schema.$id === undefined) throw new Error('ref() needs a schema with an $id')
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id))
}

export const ErrorSchema = Type.Object({
  error: Type.String({ description: 'What went wrong, for a person to read' }),
  code: Type.Optional(Type.String({ description: 'Stable machine-readable code, VULNSCAN_<AREA>_<WHAT>' }))
}, { $id: 'Error', description: 'Every error response has this shape' })

/** The largest `offset` a list takes: far past any real list, and an exact integer on every backend. */
export const OFFSET_MAX = 10_000_000

/** The paging parameters every list takes: `?limit=&offset=`. */
export const ListQueryProperties = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'Page size' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: OFFSET_MAX, default: 0, description: 'Items to skip' }))
}
export const ListQuerySchema = Type.Object(ListQueryProperties, { additionalProperties: false })

/** Paging values after defaults (Ajv fills them; the fallbacks keep the types honest). */
export function paging (q: { limit?: number, offset?: number }): { limit: number, offset: number } {
  return { limit: q.limit ?? 50, offset: q.offset ?? 0 }
}

/** Keyset paging on the long lists: `?cursor=` takes the `nextCursor` of the page before. */
export const CursorProperty = Type.Optional(Type.String({
  minLength: 1,
  maxLength: 512,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'Start after the last item of the page that gave this `nextCursor` (keyset paging: as quick deep in the list ' +
    'as on its first page, nothing skipped or repeated while results are written). Use with the same sort, order and ' +
    'filters, and no offset'
}))

/** A list page `{ items, total, limit, offset }` of the given shared schema; with `cursor`, also `nextCursor`. */
export function pageOf<T extends TSchema> (item: T, $id: string, opts: { cursor?: boolean } = {}): TObject {
  return Type.Object({
    items: Type.Array(ref(item)),
    total: Type.Integer({ minimum: 0 }),
    limit: Type.Integer({ minimum: 1 }),
    offset: Type.Integer({ minimum: 0 }),
    ...(opts.cursor === true
      ? { nextCursor: Type.Optional(Type.String({ description: 'On the lists that take `cursor`: pass it as `cursor` for the page after this one. Absent on the last page' })) }
      : {})
  }, { $id, additionalProperties: false })
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is invalid; `error` names the field',
  401: 'Missing, invalid, revoked or expired API key: exactly `{"error":"Invalid API key"}`',
  403: 'The key is valid but may not call this route (admin routes need the infrastructure key)',
  404: 'Not found',
  406: 'None of the accepted media types can be produced',
  409: 'Conflicts with an existing resource',
  413: 'Request body too large',
  415: 'Unsupported Content-Type (send application/json)',
  429: 'Rate limit exceeded; retry after the `retry-after` header',
  503: 'Storage or queue unavailable; retry shortly'
}

/** Error responses by status, for a route's `response` map. */
export function errors (...statuses: number[]): Record<number, TUnsafe<Static<typeof ErrorSchema>>> {
  const out: Record<number, TUnsafe<Static<typeof ErrorSchema>>> = {}
  for (const s of statuses) out[s] = Type.Unsafe<Static<typeof ErrorSchema>>({ $ref: 'Error', description: ERROR_DESCRIPTIONS[s] ?? 'Error' })
  return out
}

/** A shared schema as a response, with the description OpenAPI shows for that status. */
export function reply<T extends TSchema> (schema: T, description: string): TUnsafe<Static<T>> {
  if (schema.$id === undefined) throw new Error('reply() needs a schema with an $id')
  return Type.Unsafe<Static<T>>({ $ref: schema.$id, description })
}

/** A string enum rendered as `enum` (one clear validation error, listed values in OpenAPI). */
export function StringEnum<T extends string[]> (values: [...T], options: Record<string, unknown> = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: values, ...options })
}
