// How sure a finding is, as a number from 0 to 100, from the kind of evidence that decided it. Greenbone's
// quality of detection is the model (a package check 97, a remote banner 80, an unreliable banner lower): a
// user filters on it (minConfidence), the CLI's --fail-on ignores what falls below 70 by default, and SARIF
// ranks results by it. The label (high, medium, low) stays beside the number for the clients that read it,
// and is derived from it, so the two never disagree. docs/accuracy.md explains each row.

import type { FindingSource } from '../vocabulary'

/**
 * high: exact upstream version under an NVD rule, or a distribution tracker that says the running revision is
 * still vulnerable; medium: a CNA-only range, a distribution family without its revision, a required platform;
 * low: product without version.
 */
export type Confidence = 'high' | 'medium' | 'low'

/** The kinds of evidence a finding can rest on, surest first. */
export type EvidenceKind =
  | 'package'
  | 'exposure'
  | 'tracker'
  | 'template'
  | 'banner-upstream'
  | 'adp-cpe'
  | 'cna-range'
  | 'platform'
  | 'eol-release'
  | 'banner-family'
  | 'distribution-shipped'
  | 'version-prefix'
  | 'default-status'
  | 'product-only'

export interface ConfidenceRow {
  kind: EvidenceKind
  score: number
  /** What gives it, as docs/accuracy.md and `GET /vulnerability/...` consumers read it. */
  evidence: string
}

/** The table, surest first; each score names one kind. Tests and docs/accuracy.md read it from here; change a score here and nowhere else. */
export const CONFIDENCE_TABLE: readonly ConfidenceRow[] = Object.freeze([
  { kind: 'package', score: 97, evidence: 'installed package list read over credentials, compared with the distribution tracker' },
  { kind: 'exposure', score: 95, evidence: 'an exposure check saw the behaviour itself (a login without credentials, a weak transport)' },
  { kind: 'tracker', score: 90, evidence: 'banner with the distribution package revision, decided by the distribution tracker' },
  { kind: 'template', score: 85, evidence: 'a template\'s matchers matched the service\'s own reply' },
  { kind: 'banner-upstream', score: 80, evidence: 'full upstream version in the banner, no distribution sign, NVD configuration' },
  { kind: 'adp-cpe', score: 75, evidence: 'CISA ADP (Vulnrichment) CPE range, where the NVD has no configuration' },
  { kind: 'cna-range', score: 70, evidence: 'the CNA\'s listed version range, where the NVD has no configuration' },
  { kind: 'platform', score: 60, evidence: 'an NVD configuration that also requires a platform the scan cannot see' },
  { kind: 'eol-release', score: 55, evidence: 'upstream version on a distribution release no tracker covers any more (no backports since)' },
  { kind: 'banner-family', score: 50, evidence: 'banner names the distribution family without the package revision: a backport is possible' },
  { kind: 'distribution-shipped', score: 40, evidence: 'upstream version a supported distribution release ships and patched: the banner hides the revision' },
  { kind: 'version-prefix', score: 30, evidence: 'the wire shows only the leading part of the version, and a bound falls inside it' },
  { kind: 'default-status', score: 25, evidence: 'only the CVE record\'s defaultStatus: no listed version covers the detected one' },
  { kind: 'product-only', score: 20, evidence: 'product seen without any version' }
])

const BY_KIND = new Map(CONFIDENCE_TABLE.map((r) => [r.kind, r.score]))

/** The score the table gives a kind of evidence. */
export function scoreOf (kind: EvidenceKind): number {
  return BY_KIND.get(kind) as number
}

/** The label of a score: high from 80, medium from 50, low below. */
export function labelOf (score: number): Confidence {
  return score >= 80 ? 'high' : score >= 50 ? 'medium' : 'low'
}

/** Both fields of a finding for one kind of evidence. */
export function confidenceFor (kind: EvidenceKind): { confidence: Confidence, confidenceScore: number } {
  const confidenceScore = scoreOf(kind)
  return { confidence: labelOf(confidenceScore), confidenceScore }
}

/** What `--fail-on` counts by default: findings below this score are left out unless asked for. */
export const DEFAULT_GATE_SCORE = 70

/** The score a label stands for when a filter names a label (`minConfidence=medium`): the lowest score of it. */
export const LABEL_FLOOR: Record<Confidence, number> = { high: 80, medium: 50, low: 0 }

/**
 * The score of a finding that came without one (a producer that predates the number, a row stored before it):
 * read from its source and rule where they tell the evidence, else from its label.
 */
export function scoreOfFinding (f: { source: FindingSource, rule: string, confidence: Confidence, confidenceScore?: number | null }): number {
  if (typeof f.confidenceScore === 'number' && Number.isFinite(f.confidenceScore)) return Math.max(0, Math.min(100, Math.round(f.confidenceScore)))
  const source = f.source as string
  if (source === 'distribution' && /^package\b/.test(f.rule ?? '')) return scoreOf('package')
  if (source === 'template') return scoreOf('template')
  if (source === 'vulnscan') return scoreOf('exposure')
  switch (f.confidence) {
    case 'high': return scoreOf('banner-upstream')
    case 'medium': return scoreOf('banner-family')
    default: return scoreOf('version-prefix')
  }
}

/**
 * A confidence filter as the API and CLI take it: a number 0–100, or a label standing for its floor
 * (`high` → 80). Returns undefined for anything else.
 */
export function parseMinConfidence (value: string | number | undefined): number | undefined {
  if (value === undefined) return undefined
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 && value <= 100 ? value : undefined
  const v = value.trim().toLowerCase()
  if (v === 'high' || v === 'medium' || v === 'low') return LABEL_FLOOR[v]
  if (!/^\d{1,3}$/.test(v)) return undefined
  const n = Number(v)
  return n <= 100 ? n : undefined
}
