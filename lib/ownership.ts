// Who owns what, and what a key sees (docs/security-model.md). Every owned resource records the key that made it
// (`createdBy`: a key id, or 'service' for the infrastructure key). A key changes what it owns; an admin changes
// everything. A key's scope (its CIDRs; none: no limit) bounds what it reads as it bounds what it scans: a host
// outside it is out of sight, and so is a resource whose reach (the addresses it names or may touch) leaves it,
// unless the key made that resource. A new owned kind is one entry in OWNED.
import { intersectScopes, networksWithin, parseScope, type Scope, targetsWithin } from './scanner/targets'
import type { Target } from './scanner/types'
import type { ScanRecord, ScheduleRecord, Store, WebhookRecord } from './store/types'

/** What the model needs of a request's key (plugins/auth.ts's Principal is one). */
export interface Actor {
  id: string
  admin: boolean
  /** CIDRs or addresses; empty: no limit. */
  scope: readonly string[]
}

/** Every owned record names its maker. */
export interface Owned {
  createdBy: string
}

/** The addresses a resource names or may touch: its literal targets and tags, bounded by the scope it was given. */
export interface Reach {
  /** The scope it was made under: it never touches an address outside it. */
  keyScope?: readonly string[]
  targets?: readonly Target[]
  /** Tags reach whichever hosts carry them: unbounded unless `keyScope` bounds them. */
  targetTags?: readonly string[]
}

/** One kind of owned resource: how a route loads it by id, and its reach when addresses make it sensitive. */
export interface OwnedKind<T extends Owned> {
  /** The word error messages use, e.g. `schedule`. */
  noun: string
  load(store: Store, id: string): Promise<T | null>
  /** Absent: the resource names no address, and every key with the route's role sees it. */
  reach?(record: T): Reach
  /** Only its owner and admins see it (secrets: credentials, for instance). */
  ownerOnly?: boolean
}

function kind<T extends Owned> (k: OwnedKind<T>): OwnedKind<T> {
  return k
}

/**
 * The owned kinds. A route loads one through plugins/ownership.ts (`fastify.owned.read` / `.change`), which answers
 * 404 for what the key may not see and 403 for what it may see but not change. A new kind is one line here, e.g.
 * `credential: kind<CredentialRecord>({ noun: 'credential', load: (s, id) => s.getCredential(id), ownerOnly: true })`.
 */
export const OWNED = {
  scan: kind<ScanRecord>({ noun: 'scan', load: async (s, id) => await s.getScan(id), reach: (r) => r }),
  schedule: kind<ScheduleRecord>({ noun: 'schedule', load: async (s, id) => await s.getSchedule(id), reach: (r) => ({ keyScope: r.keyScope, ...r.scan }) }),
  webhook: kind<WebhookRecord>({ noun: 'webhook', load: async (s, id) => await s.getWebhook(id) })
}

export type OwnedKindName = keyof typeof OWNED
export type RecordOf<K extends OwnedKindName> = (typeof OWNED)[K] extends OwnedKind<infer T> ? T : never

/** Whether the actor may change the record: it made it, or it is an admin. */
export function owns (actor: Actor, record: Owned): boolean {
  return actor.admin || record.createdBy === actor.id
}

const compiled = new Map<string, Scope>()
const COMPILED_MAX = 1000

/** A key's scope, compiled once per distinct list; null for a key without one. */
export function scopeOf (entries: readonly string[]): Scope | null {
  if (entries.length === 0) return null
  const text = entries.join(',')
  let s = compiled.get(text)
  if (s === undefined) {
    if (compiled.size >= COMPILED_MAX) compiled.clear()
    s = parseScope([...entries], [])
    compiled.set(text, s)
  }
  return s
}

/** Whether the actor's scope holds the address (always, for a key without a scope). */
export function seesAddress (actor: Actor, address: string): boolean {
  const scope = scopeOf(actor.scope)
  return scope === null || scope.allows(address)
}

/** A test for addresses, or null when the actor sees every address. */
export function addressFilter (actor: Actor): ((address: string) => boolean) | null {
  const scope = scopeOf(actor.scope)
  return scope === null ? null : (address) => scope.allows(address)
}

/** Whether a reach lies wholly in a scope list (always, for an empty list). */
export function reachWithin (reach: Reach, entries: readonly string[]): boolean {
  const scope = scopeOf(entries)
  if (scope === null) return true
  if (reach.keyScope !== undefined && reach.keyScope.length > 0 && networksWithin(reach.keyScope, scope)) return true
  if ((reach.targetTags ?? []).length > 0) return false
  return targetsWithin(reach.targets ?? [], scope)
}

/** Whether the actor sees the record of this kind: it made it, or the record's reach lies in its scope. */
export function sees<T extends Owned> (actor: Actor, k: OwnedKind<T>, record: T): boolean {
  if (record.createdBy === actor.id) return true
  if (k.ownerOnly === true) return actor.admin
  return k.reach === undefined || reachWithin(k.reach(record), actor.scope)
}

/**
 * The scope a schedule's run is held to: the scope it was given (its maker's when it was made or its scan last
 * changed) narrowed by its maker's scope now. Null when the two share no address: nothing may be scanned.
 */
export function runScope (given: readonly string[] | undefined, ownerNow: readonly string[]): string[] | null {
  return intersectScopes(given ?? [], ownerNow)
}

/**
 * The scan as this actor may read it: addresses its summary names outside the actor's scope left out, unless the actor
 * made the scan (they are then what its own host names resolved to; the worker never lists tagged hosts outside the
 * scan's key scope).
 */
export function scanView (actor: Actor, scan: ScanRecord): ScanRecord {
  if (scan.createdBy === actor.id) return scan
  const sees = addressFilter(actor)
  const excluded = scan.summary?.excluded
  if (sees === null || excluded === undefined || excluded.every((e) => sees(e.address))) return scan
  return { ...scan, summary: { ...scan.summary as NonNullable<ScanRecord['summary']>, excluded: excluded.filter((e) => sees(e.address)) } }
}
