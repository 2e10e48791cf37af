// CPE matching against NVD configurations. Pure functions: the index compiles each distinct
// criterion once and evaluates it against a compiled target.

import { parseCpe, unescapeCpeValue } from '../cpe/name'
import { compareKeys, versionKey, type VersionKey } from '../cpe/version'
import type { Configuration, CpeCriterion, CveMatch, CveRecord, MatchConfidence } from './types'

export interface TargetCpe {
  part: string
  vendor: string
  product: string
  /** Unquoted version; `*` when unknown (product only), `-` when not applicable. */
  version: string
  /** Unquoted update; `*` when unknown. */
  update: string
  /** edition, language, swEdition, targetSw, targetHw, other (quoted form). */
  rest: string[]
}

export interface CompiledTarget extends TargetCpe {
  /** True when the version is unknown: every criterion of vendor:product matches, at low confidence. */
  productOnly: boolean
  /** Key of version + update (`9.2` + `p1` → 9.2p1), null for `*` and `-`. */
  key: VersionKey | null
  /** The version text the reasons quote (9.2p1). */
  label: string
  /** Key of the version alone, null for `*` and `-`. */
  versionOnlyKey: VersionKey | null
  /** Key of the release without its patch level (9.2 for 9.2 + p1 and for 9.2p1), for bounds that name none. */
  baseKey: VersionKey | null
}

export interface CompiledCriterion {
  criterion: CpeCriterion
  part: string
  vendor: string
  product: string
  version: string
  update: string
  rest: string[]
  /** Key of the exact version (+ update when it is a specific value). */
  exactKey: VersionKey | null
  /** Key of the version field alone. */
  versionKey: VersionKey | null
  exactLabel: string
  startIncl: VersionKey | null
  startExcl: VersionKey | null
  endIncl: VersionKey | null
  endExcl: VersionKey | null
  /** Bound texts as compared (with the criterion's update appended when it names one). */
  labels: { si?: string, se?: string, ei?: string, ee?: string }
  /** Per bound, whether it names a patch level or letter release itself (7.2p2, 1.0.1g). */
  lettered: { si: boolean, se: boolean, ei: boolean, ee: boolean }
  hasRange: boolean
}

/** One vulnerable criterion of a CVE, with what the configuration additionally requires. */
export interface CriterionUse {
  criterion: CpeCriterion
  /** vendor:product in the quoted, lower-case form. */
  productKey: string
  /** Criteria of the other nodes the configuration AND-s with this one (the platform). */
  requiresPlatform?: string[]
}

/** The outcome of matching without the record itself. */
export interface MatchHit {
  id: string
  criterion: CpeCriterion
  reason: string
  confidence: MatchConfidence
  requiresPlatform?: string[]
  /** The target carried no version: every criterion of the product matched. Mark it low confidence. */
  productOnly?: boolean
}

function isSpecific (v: string): boolean {
  return v !== '*' && v !== '-' && v !== ''
}

export function productKeyOf (vendor: string, product: string): string {
  return vendor.toLowerCase() + ':' + product.toLowerCase()
}

/** Parse and compile a target CPE 2.3 name. Returns null when it is not a valid CPE 2.3 name. */
export function compileTarget (cpe: string | TargetCpe): CompiledTarget | null {
  let t: TargetCpe
  if (typeof cpe === 'string') {
    const p = parseCpe(cpe.trim())
    if (p === null) return null
    t = {
      part: p.part,
      vendor: p.vendor.toLowerCase(),
      product: p.product.toLowerCase(),
      version: p.version === '*' || p.version === '-' ? p.version : unescapeCpeValue(p.version),
      update: p.update === '*' || p.update === '-' ? p.update : unescapeCpeValue(p.update),
      rest: [p.edition, p.language, p.swEdition, p.targetSw, p.targetHw, p.other]
    }
  } else {
    t = { ...cpe, vendor: cpe.vendor.toLowerCase(), product: cpe.product.toLowerCase() }
    if (t.version === '') t.version = '*'
    if (t.update === '') t.update = '*'
  }
  const productOnly = t.version === '*'
  const specific = isSpecific(t.version)
  const label = specific ? t.version + (isSpecific(t.update) ? t.update : '') : t.version
  const base = isSpecific(t.update) ? t.version : t.version.replace(/(\d)p\d+$/i, '$1')
  return {
    ...t,
    productOnly,
    key: specific ? versionKey(label) : null,
    label,
    versionOnlyKey: specific ? versionKey(t.version) : null,
    baseKey: specific ? versionKey(base) : null
  }
}

/** Compile a criterion for repeated evaluation. Returns null when its CPE is malformed. */
export function compileCriterion (criterion: CpeCriterion): CompiledCriterion | null {
  const p = parseCpe(criterion.criteria)
  if (p === null) return null
  const version = p.version === '*' || p.version === '-' ? p.version : unescapeCpeValue(p.version)
  const update = p.update === '*' || p.update === '-' ? p.update : unescapeCpeValue(p.update)
  // A range criterion naming an update (OpenSSH `*:p2` up to 7.2) bounds the version with that
  // patch level: the end bound is 7.2p2, so 7.2p1 falls inside it.
  const withUpdate = (b: string | undefined): string | undefined =>
    b === undefined ? undefined : isSpecific(update) && /\d$/.test(b) ? b + update : b
  const si = withUpdate(criterion.versionStartIncluding)
  const se = withUpdate(criterion.versionStartExcluding)
  const ei = withUpdate(criterion.versionEndIncluding)
  const ee = withUpdate(criterion.versionEndExcluding)
  const labels: CompiledCriterion['labels'] = {}
  if (si !== undefined) labels.si = si
  if (se !== undefined) labels.se = se
  if (ei !== undefined) labels.ei = ei
  if (ee !== undefined) labels.ee = ee
  const exactLabel = isSpecific(version) ? version + (isSpecific(update) ? update : '') : version
  return {
    criterion,
    part: p.part,
    vendor: p.vendor.toLowerCase(),
    product: p.product.toLowerCase(),
    version,
    update,
    rest: [p.edition, p.language, p.swEdition, p.targetSw, p.targetHw, p.other],
    exactKey: isSpecific(version) ? versionKey(exactLabel) : null,
    versionKey: isSpecific(version) ? versionKey(version) : null,
    exactLabel,
    startIncl: si !== undefined ? versionKey(si) : null,
    startExcl: se !== undefined ? versionKey(se) : null,
    endIncl: ei !== undefined ? versionKey(ei) : null,
    endExcl: ee !== undefined ? versionKey(ee) : null,
    labels,
    lettered: { si: /[a-z]/i.test(si ?? ''), se: /[a-z]/i.test(se ?? ''), ei: /[a-z]/i.test(ei ?? ''), ee: /[a-z]/i.test(ee ?? '') },
    hasRange: si !== undefined || se !== undefined || ei !== undefined || ee !== undefined
  }
}

function restCompatible (a: string[], b: string[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]
    const y = b[i]
    if (x !== '*' && y !== '*' && x !== y) return false
  }
  return true
}

/**
 * Whether a compiled criterion matches a compiled target, and why. Returns the reason, or null.
 * Vendor and product are assumed equal (the index looks criteria up by them); part and the
 * remaining attributes are checked here.
 */
export function evaluate (c: CompiledCriterion, t: CompiledTarget): string | null {
  if (c.part !== t.part) return null
  if (!restCompatible(c.rest, t.rest)) return null
  if (t.productOnly) {
    return `product only: no version detected, criterion ${c.criterion.criteria} names ${t.vendor}:${t.product}` +
      describeRange(c)
  }
  if (t.version === '-') {
    if (c.version === '-') return 'criterion and target both have version NA (-)'
    if (c.version === '*' && !c.hasRange) return 'criterion covers every version (*)'
    return null
  }
  // From here the target has a specific version.
  if (c.version === '-') return null
  if (c.version !== '*') {
    const tk = t.key as VersionKey
    const cv = c.versionKey as VersionKey
    const same = `version ${t.label} equals criterion version ${c.exactLabel}`
    if (c.update === '*') {
      // Any update of that version: 9.2 covers 9.2 + p1 and 9.2p1 written as one version.
      if (compareKeys(cv, t.versionOnlyKey as VersionKey) === 0 || compareKeys(cv, t.baseKey as VersionKey) === 0 ||
        compareKeys(c.exactKey as VersionKey, tk) === 0) return same
      return null
    }
    if (c.update === '-') {
      // Only the version without any update.
      if (isSpecific(t.update)) return null
      return compareKeys(cv, t.versionOnlyKey as VersionKey) === 0 ? same : null
    }
    if (compareKeys(c.exactKey as VersionKey, tk) === 0) return same
    // The target does not know its update: the version alone decides.
    if (t.update === '*' && compareKeys(cv, t.versionOnlyKey as VersionKey) === 0) return same
    return null
  }
  if (!c.hasRange) {
    if (isSpecific(c.update) && isSpecific(t.update) && c.update !== t.update) return null
    return `criterion covers every version (*)${isSpecific(c.update) ? ' with update ' + c.update : ''}`
  }
  const tk = t.key as VersionKey
  const bk = t.baseKey as VersionKey
  // A bound without a patch level names the release with all its patch levels at that point:
  // OpenSSH "through 7.7" includes 7.7p1, "before 9.6" excludes 9.6p1, "after 9.2" excludes 9.2p1.
  const cmp = (bound: VersionKey, lettered: boolean): number =>
    !lettered && compareKeys(bk, bound) === 0 ? 0 : compareKeys(tk, bound)
  const parts: string[] = []
  if (c.startIncl !== null) {
    if (cmp(c.startIncl, c.lettered.si) < 0) return null
    parts.push(`${t.label} >= ${c.labels.si} (versionStartIncluding)`)
  }
  if (c.startExcl !== null) {
    if (cmp(c.startExcl, c.lettered.se) <= 0) return null
    parts.push(`${t.label} > ${c.labels.se} (versionStartExcluding)`)
  }
  if (c.endIncl !== null) {
    if (cmp(c.endIncl, c.lettered.ei) > 0) return null
    parts.push(`${t.label} <= ${c.labels.ei} (versionEndIncluding)`)
  }
  if (c.endExcl !== null) {
    if (cmp(c.endExcl, c.lettered.ee) >= 0) return null
    parts.push(`${t.label} < ${c.labels.ee} (versionEndExcluding)`)
  }
  return parts.join(' and ')
}

function describeRange (c: CompiledCriterion): string {
  const l = c.labels
  const bits: string[] = []
  if (l.si !== undefined) bits.push(`>= ${l.si}`)
  if (l.se !== undefined) bits.push(`> ${l.se}`)
  if (l.ei !== undefined) bits.push(`<= ${l.ei}`)
  if (l.ee !== undefined) bits.push(`< ${l.ee}`)
  if (bits.length > 0) return ` (affected ${bits.join(', ')})`
  if (c.version !== '*') return ` (affected version ${c.exactLabel})`
  return ''
}

/**
 * Every vulnerable criterion of a record, with its product and the platform the configuration
 * requires besides it. A configuration whose top-level operator is AND (or an AND node) makes
 * the other nodes' criteria a requirement the scan cannot check. Negated nodes are never used
 * as evidence of vulnerability.
 */
export function criterionUses (configurations: Configuration[]): CriterionUse[] {
  const out: CriterionUse[] = []
  for (const conf of configurations) {
    const andConf = conf.operator === 'AND'
    for (let ni = 0; ni < conf.nodes.length; ni++) {
      const node = conf.nodes[ni]
      if (node.negate) continue
      for (const c of node.cpeMatch) {
        if (!c.vulnerable) continue
        const p = parseCpe(c.criteria)
        if (p === null) continue
        const req: string[] = []
        if (andConf) {
          conf.nodes.forEach((other, oi) => {
            if (oi !== ni) for (const o of other.cpeMatch) req.push((other.negate ? 'NOT ' : '') + o.criteria)
          })
        }
        if (node.operator === 'AND') {
          for (const o of node.cpeMatch) if (o !== c) req.push(o.criteria)
        }
        const use: CriterionUse = { criterion: c, productKey: productKeyOf(p.vendor, p.product) }
        if (req.length > 0) use.requiresPlatform = req
        out.push(use)
      }
    }
  }
  return out
}

/** Order of preference when one CVE matches through several criteria. */
export function betterHit (a: MatchHit, b: MatchHit): MatchHit {
  if (a.confidence !== b.confidence) return a.confidence === 'exact' ? a : b
  return a
}

/**
 * Match one record against a target CPE. Rejected records never match. Returns the best match
 * (an exact one before one that needs a platform), or null.
 */
export function matchRecord (target: string | CompiledTarget, cve: CveRecord): CveMatch | null {
  if (cve.rejected) return null
  const t = typeof target === 'string' ? compileTarget(target) : target
  if (t === null) return null
  const key = productKeyOf(t.vendor, t.product)
  let best: MatchHit | null = null
  for (const use of criterionUses(cve.configurations)) {
    if (use.productKey !== key) continue
    const cc = compileCriterion(use.criterion)
    if (cc === null) continue
    const reason = evaluate(cc, t)
    if (reason === null) continue
    const hit: MatchHit = {
      id: cve.id,
      criterion: use.criterion,
      reason,
      confidence: use.requiresPlatform !== undefined ? 'platform' : 'exact'
    }
    if (use.requiresPlatform !== undefined) hit.requiresPlatform = use.requiresPlatform
    if (t.productOnly) hit.productOnly = true
    best = best === null ? hit : betterHit(best, hit)
  }
  return best === null ? null : toMatch(best, cve)
}

export function toMatch (hit: MatchHit, cve: CveRecord): CveMatch {
  const m: CveMatch = { cve, criterion: hit.criterion, reason: hit.reason, confidence: hit.confidence }
  if (hit.requiresPlatform !== undefined) m.requiresPlatform = hit.requiresPlatform
  if (hit.productOnly === true) m.productOnly = true
  return m
}
