// Roles and per-key scan scopes of dynamic API keys. The infrastructure key is always 'admin' and unscoped.
import { parseScope, Scope, scopeError } from './scanner/targets'
import type { Target } from './scanner/types'

type Span = Parameters<Scope['spanRefusal']>[0]

export const ROLES = ['reader', 'operator', 'admin'] as const
export type Role = typeof ROLES[number]

/** The principal id of the infrastructure key (SERVICE_API_KEY): it has no key record. */
export const SERVICE_PRINCIPAL_ID = 'service'

/**
 * A key stored before roles existed could do what an operator does, so it keeps exactly that: changing its
 * powers needs an explicit role.
 */
export const LEGACY_ROLE: Role = 'operator'

/** Whether `held` covers `needed`: each role includes every role before it in ROLES. */
export function roleAllows (held: Role, needed: Role): boolean {
  return ROLES.indexOf(held) >= ROLES.indexOf(needed)
}

export function isRole (value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value)
}

/**
 * A key's scope entries (CIDRs or addresses) as a list, refusing a malformed one. An empty list is no
 * restriction beyond the global lists. Throws an Error naming the entry.
 */
export function parseKeyScope (entries: readonly string[]): string[] {
  const out = entries.map((e) => e.trim())
  parseScope(out, [])
  return out
}

/**
 * The global scope narrowed by a key's own allow list: an address must pass both. The global refusal is
 * reported first, so a key never learns more about its own list than about the operator's.
 */
export class NarrowedScope extends Scope {
  constructor (private readonly outer: Scope, private readonly inner: Scope) {
    super([], [])
  }

  override refusal (address: string): string | null {
    const global = this.outer.refusal(address)
    if (global !== null) return global
    const own = this.inner.refusal(address)
    return own === null ? null : `${own.replace(/ is outside the allowed scope$/, '')} is outside this key's scope`
  }

  override spanRefusal (span: Span, what: string): string | null {
    return this.outer.spanRefusal(span, what) ?? keyRefusal(this.inner.spanRefusal(span, what))
  }
}

function keyRefusal (message: string | null): string | null {
  return message === null ? null : message.replace(/the allowed scope/, "this key's scope")
}

/** The scope a scan posted under `keyScope` is held to: the global one, narrowed when the key has a list. */
export function scopeFor (global: Scope, keyScope: readonly string[] | undefined): Scope {
  if (keyScope === undefined || keyScope.length === 0) return global
  return new NarrowedScope(global, parseScope([...keyScope], []))
}

/**
 * For a POST: the first literal target (single_ip, ip_range, cidr) outside the key's own scope, as a sentence
 * naming it; null when all are inside or the key has no scope. Host names are checked after resolution.
 */
export function keyScopeProblem (targets: readonly Target[], keyScope: readonly string[]): string | null {
  if (keyScope.length === 0) return null
  const own = parseScope([...keyScope], [])
  for (const [i, target] of targets.entries()) {
    const refusal = keyRefusal(scopeError(target, own))
    if (refusal !== null) return `targets[${i}].value: ${refusal}`
  }
  return null
}
