// The per-product part of the index both backends share: the CVEs of one vendor:product grouped
// by identical criterion (criteria string and bounds), so that a product with thousands of CVEs
// costs one evaluation per distinct criterion, not one per CVE.

import { compileCriterion, evaluate, type CompiledCriterion, type CompiledTarget, type CriterionUse, type MatchHit } from './matcher'
import type { CpeCriterion } from './types'

interface Group {
  criterion: CpeCriterion
  /** undefined until first needed; null when the criterion cannot be parsed. */
  compiled: CompiledCriterion | null | undefined
  plain: Set<string>
  platform: Map<string, string[]>
  plainIds: string[] | null
}

/** One distinct criterion that matched, with every CVE that carries it. */
export interface GroupHit {
  criterion: CpeCriterion
  reason: string
  productOnly: boolean
  /** CVEs listing this criterion with no platform requirement. */
  ids: readonly string[]
  /** CVEs listing it inside an AND configuration, with the platform criteria each requires. */
  platform: ReadonlyMap<string, string[]>
}

export function groupKey (c: CpeCriterion): string {
  return c.criteria + '\u0001' + (c.versionStartIncluding ?? '') + '\u0001' + (c.versionStartExcluding ?? '') +
    '\u0001' + (c.versionEndIncluding ?? '') + '\u0001' + (c.versionEndExcluding ?? '')
}

/** Identical platform lists are shared, not repeated per CVE. */
const platformIntern = new Map<string, string[]>()
function internPlatform (req: string[]): string[] {
  const k = req.join('\n')
  let v = platformIntern.get(k)
  if (v === undefined) {
    if (platformIntern.size > 100_000) platformIntern.clear()
    v = req
    platformIntern.set(k, v)
  }
  return v
}

export class ProductGroups {
  private readonly groups = new Map<string, Group>()
  private members = 0

  get size (): number {
    return this.members
  }

  get groupCount (): number {
    return this.groups.size
  }

  add (id: string, use: CriterionUse): void {
    const k = groupKey(use.criterion)
    let g = this.groups.get(k)
    if (g === undefined) {
      g = { criterion: stripCriterion(use.criterion), compiled: undefined, plain: new Set(), platform: new Map(), plainIds: null }
      this.groups.set(k, g)
    }
    if (use.requiresPlatform !== undefined) {
      if (!g.platform.has(id)) this.members++
      g.platform.set(id, internPlatform(use.requiresPlatform))
    } else {
      if (!g.plain.has(id)) this.members++
      g.plain.add(id)
      g.plainIds = null
    }
  }

  remove (id: string, use: CriterionUse): void {
    const k = groupKey(use.criterion)
    const g = this.groups.get(k)
    if (g === undefined) return
    if (g.plain.delete(id)) {
      this.members--
      g.plainIds = null
    }
    if (g.platform.delete(id)) this.members--
    if (g.plain.size === 0 && g.platform.size === 0) this.groups.delete(k)
  }

  /** The groups as plain data, for persisting. */
  export (): Array<{ criterion: CpeCriterion, ids: string[], platform: Array<[string, string[]]> }> {
    return [...this.groups.values()].map((g) => ({ criterion: g.criterion, ids: [...g.plain], platform: [...g.platform] }))
  }

  /** Evaluate each distinct criterion once against the target. */
  match (target: CompiledTarget): GroupHit[] {
    const out: GroupHit[] = []
    for (const g of this.groups.values()) {
      if (g.compiled === undefined) g.compiled = compileCriterion(g.criterion)
      if (g.compiled === null) continue
      const reason = evaluate(g.compiled, target)
      if (reason === null) continue
      if (g.plainIds === null) g.plainIds = [...g.plain]
      out.push({ criterion: g.criterion, reason, productOnly: target.productOnly, ids: g.plainIds, platform: g.platform })
    }
    return out
  }
}

/** A fresh copy, so a group never keeps a whole decoded record alive through one of its criteria. */
function stripCriterion (c: CpeCriterion): CpeCriterion {
  const out: CpeCriterion = { criteria: c.criteria, vulnerable: c.vulnerable }
  if (c.matchCriteriaId !== undefined) out.matchCriteriaId = c.matchCriteriaId
  if (c.versionStartIncluding !== undefined) out.versionStartIncluding = c.versionStartIncluding
  if (c.versionStartExcluding !== undefined) out.versionStartExcluding = c.versionStartExcluding
  if (c.versionEndIncluding !== undefined) out.versionEndIncluding = c.versionEndIncluding
  if (c.versionEndExcluding !== undefined) out.versionEndExcluding = c.versionEndExcluding
  return out
}

/**
 * Expand group hits to one hit per CVE: a CVE matched through several criteria keeps the best
 * (exact before platform).
 */
export function expandHits (hits: GroupHit[]): MatchHit[] {
  if (hits.length === 1 && hits[0].platform.size === 0) {
    const h = hits[0]
    return h.ids.map((id) => hitFor(id, h, undefined))
  }
  const best = new Map<string, MatchHit>()
  for (const h of hits) {
    for (const id of h.ids) {
      const prev = best.get(id)
      if (prev === undefined || prev.confidence !== 'exact') best.set(id, hitFor(id, h, undefined))
    }
    for (const [id, req] of h.platform) {
      if (!best.has(id)) best.set(id, hitFor(id, h, req))
    }
  }
  return [...best.values()]
}

function hitFor (id: string, h: GroupHit, req: string[] | undefined): MatchHit {
  const hit: MatchHit = { id, criterion: h.criterion, reason: h.reason, confidence: req === undefined ? 'exact' : 'platform' }
  if (req !== undefined) hit.requiresPlatform = req
  if (h.productOnly) hit.productOnly = true
  return hit
}
