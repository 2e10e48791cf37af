// Decorates `fastify.owned`: the routes' one way to load an owned resource (scan, schedule, webhook…) for the
// request's key, filter a list to what the key sees, and check an address against its scope (lib/ownership.ts).
import fp from 'fastify-plugin'
import type { FastifyRequest } from 'fastify'
import { addressFilter, OWNED, owns, sees, seesAddress, type Actor, type OwnedKind, type OwnedKindName, type RecordOf } from '../lib/ownership'
import { NotFoundError, NotOwnerError, OutsideKeyScopeError } from '../lib/errors'

export interface Ownership {
  /** The request's key as the model sees it. */
  actor(request: FastifyRequest): Actor
  /** The record, when the key may read it; a 404 naming the id otherwise (whether it exists is not said). */
  read<K extends OwnedKindName>(request: FastifyRequest, kind: K, id: string): Promise<RecordOf<K>>
  /** The record, when the key may change it: 404 when it may not see it, 403 when it sees it but another key owns it. */
  change<K extends OwnedKindName>(request: FastifyRequest, kind: K, id: string): Promise<RecordOf<K>>
  /** Whether the key sees a record of a list; null when it sees them all (no per-item test needed). */
  filter<K extends OwnedKindName>(request: FastifyRequest, kind: K): ((record: RecordOf<K>) => boolean) | null
  /** A 403 when the address lies outside the key's scope, said before anything is looked up. */
  address(request: FastifyRequest, address: string, field?: string): void
  /** The key's scope for a results query: undefined when it has none (the unfiltered, fast paths). */
  scope(request: FastifyRequest): readonly string[] | undefined
  /** A test for addresses, or null when the key sees every address. */
  addresses(request: FastifyRequest): ((address: string) => boolean) | null
}

declare module 'fastify' {
  interface FastifyInstance {
    owned: Ownership
  }
}

const NOBODY: Actor = Object.freeze({ id: '', admin: false, scope: Object.freeze(['255.255.255.255/32']) })

export default fp(async function ownershipPlugin (fastify) {
  // Routes without a key (health, docs) never ask; a request that somehow does sees nothing.
  const actor = (request: FastifyRequest): Actor => request.principal ?? NOBODY
  const load = async <K extends OwnedKindName>(request: FastifyRequest, kind: K, id: string): Promise<{ record: RecordOf<K>, who: Actor }> => {
    const k = OWNED[kind] as unknown as OwnedKind<RecordOf<K>>
    const record = await k.load(fastify.store, id)
    const who = actor(request)
    if (record === null || !sees(who, k, record)) throw new NotFoundError(`No ${k.noun} with id '${id}'`)
    return { record, who }
  }
  const ownership: Ownership = {
    actor,
    read: async (request, kind, id) => (await load(request, kind, id)).record,
    async change (request, kind, id) {
      const { record, who } = await load(request, kind, id)
      if (!owns(who, record)) {
        throw new NotOwnerError(`This ${OWNED[kind].noun} belongs to another key; only the key that made it, or an admin, may change it`)
      }
      return record
    },
    filter (request, kind) {
      const who = actor(request)
      const k = OWNED[kind] as unknown as OwnedKind<RecordOf<typeof kind>>
      if (who.scope.length === 0 && (k.ownerOnly !== true || who.admin)) return null
      return (record) => sees(who, k, record)
    },
    address (request, address, field = 'address') {
      if (!seesAddress(actor(request), address)) throw new OutsideKeyScopeError(`${field} ${address} is outside this key's scope`)
    },
    scope (request) {
      const s = actor(request).scope
      return s.length === 0 ? undefined : s
    },
    addresses: (request) => addressFilter(actor(request))
  }
  fastify.decorate('owned', ownership)
}, { name: 'ownership', dependencies: ['backends', 'auth'] })
