// The backport decision for one CVE on one detected distribution package.

import { trackerTitle, type DistroCveEntry } from './entries'
import { FAMILY_INFO } from './family'
import type { DistroPackage } from './package'

export type BackportStatus = 'fixed_by_distribution' | 'open' | 'unknown'

export interface BackportDecision {
  status: BackportStatus
  /** The tracker's fixed version, when it gave one. */
  fixedVersion: string | null
  /** The exact rule, for the finding's `reason`; empty for `unknown`. */
  rule: string
}

function evidenceOf (entry: DistroCveEntry, status: string): string {
  const bits = [trackerTitle(entry.source), status]
  if (entry.urgency && entry.urgency !== 'not yet assigned') bits.push(entry.urgency)
  if (entry.note) bits.push(entry.note)
  return `(${bits.join(', ')})`
}

/**
 * Decide one CVE for one package. `unknown` means the distribution data cannot say (no package
 * version on the wire, no entry for this package and release, or a version that does not parse):
 * the caller then keeps its upstream-version finding with its usual confidence note.
 */
export function decideBackport (pkg: DistroPackage, entry: DistroCveEntry | null | undefined): BackportDecision {
  const unknown: BackportDecision = { status: 'unknown', fixedVersion: null, rule: '' }
  if (!entry || !pkg.release || !pkg.source) return unknown
  const who = `${pkg.family} ${pkg.release} ${pkg.source}`
  if (entry.status === 'not-affected') {
    return { status: 'fixed_by_distribution', fixedVersion: null, rule: `${who}: not affected ${evidenceOf(entry, 'not-affected')}` }
  }
  if (entry.status === 'open' || entry.status === 'undetermined') {
    const at = pkg.version ? ` ${pkg.version}` : ''
    return { status: 'open', fixedVersion: null, rule: `${who}${at}: no fixed version ${evidenceOf(entry, entry.status)}` }
  }
  // Each family's packages follow their own version order: dpkg, rpm or apk.
  const { compare, isVersion } = FAMILY_INFO[pkg.family].versions
  if (!pkg.version || !entry.fixedVersion || !isVersion(pkg.version) || !isVersion(entry.fixedVersion)) return unknown
  if (entry.introduced && isVersion(entry.introduced) && compare(pkg.version, entry.introduced) < 0) {
    return {
      status: 'fixed_by_distribution',
      fixedVersion: entry.fixedVersion,
      rule: `${who} ${pkg.version} < ${entry.introduced}, the first affected version ${evidenceOf(entry, 'resolved')}`
    }
  }
  const fixed = compare(pkg.version, entry.fixedVersion) >= 0
  return {
    status: fixed ? 'fixed_by_distribution' : 'open',
    fixedVersion: entry.fixedVersion,
    rule: `${who} ${pkg.version} ${fixed ? '>=' : '<'} ${entry.fixedVersion} ${evidenceOf(entry, 'resolved')}`
  }
}
