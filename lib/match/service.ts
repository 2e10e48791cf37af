// What one detected service is vulnerable to, from every source at once, in an explicit precedence, one
// stage per deciding source: the NVD's configurations; the CNA's and CISA's affected data in CVE JSON 5
// records where the NVD has none; then the distribution's tracker for the package revision the banner shows
// (every tracker, by family, through lib/distro/families.ts); then every enriching source of the registry
// (KEV, EPSS) for priority. Each verdict names the source that decided it and the exact rule.

import { parseCpe, unescapeCpeValue } from '../cpe/name'
import type { ServiceInfo } from '../scanner/types'
import type { LocalCveIndex } from '../nvd/cve-index'
import type { CpeCriterion, CveMatch, CveRecord, Kev } from '../nvd/types'
import { matchCve5, nvdDecides, type Cve5Hit } from '../cve5/source'
import { decideBackport, type BackportDecision } from '../distro/decide'
import { describeFamily, readTrackerEntries, type TrackerEntry as DistroCveEntry } from '../distro/families'
import { distroPackageOf, type DistroPackage } from '../distro/package'
import type { EnrichableFields } from '../sources/descriptor'
import { ENRICHERS } from '../sources/registry'
import type { SourceStore } from '../sources/source-store'
import type { Confidence, DistributionEvidence, NewFinding } from '../store/results-types'

const EVIDENCE_MAX = 300

/** A finding before it is tied to a host and port. */
export type Verdict = Omit<NewFinding, 'address' | 'port'>

export interface MatchDeps {
  nvd: Pick<LocalCveIndex, 'match' | 'getMany'>
  /** Every other source (CVE records, distribution trackers, enrichment); null matches on the NVD alone. */
  sources: SourceStore | null
}

export interface MatchOptions {
  /** vendor:product pairs the NVD could not supply (unreachable): their CPE names are not matched against it. */
  unavailable?: ReadonlySet<string>
  /** The distribution package to judge backports by, instead of what the banner shows (nvd:match --distro). */
  distroPackage?: DistroPackage | null
}

export interface ServiceMatch {
  verdicts: Verdict[]
  /** Where the CVE record's own affected data says otherwise than the NVD, which decided. */
  disagreements: string[]
  distroPackage: DistroPackage | null
}

export interface ProductRef {
  vendor: string
  product: string
}

/** The vendor:product pairs a service's CPE names refer to, each once. */
export function productsOf (service: Pick<ServiceInfo, 'cpe'>): ProductRef[] {
  const out = new Map<string, ProductRef>()
  for (const cpe of service.cpe) {
    const p = parseCpe(cpe)
    if (p) {
      const ref = { vendor: unescapeCpeValue(p.vendor), product: unescapeCpeValue(p.product) }
      out.set(`${ref.vendor}:${ref.product}`, ref)
    }
  }
  return [...out.values()]
}

function productKeyOfCpe (cpe: string): string | null {
  const p = parseCpe(cpe)
  return p === null ? null : `${unescapeCpeValue(p.vendor)}:${unescapeCpeValue(p.product)}`
}

/** `cpe:… >= 6.2.0, < 6.2.9`: the criterion with its bounds, as a user can check it. */
export function describeCriterion (c: CpeCriterion): string {
  const bounds = [
    c.versionStartIncluding !== undefined ? `>= ${c.versionStartIncluding}` : null,
    c.versionStartExcluding !== undefined ? `> ${c.versionStartExcluding}` : null,
    c.versionEndIncluding !== undefined ? `<= ${c.versionEndIncluding}` : null,
    c.versionEndExcluding !== undefined ? `< ${c.versionEndExcluding}` : null
  ].filter((b) => b !== null)
  return bounds.length > 0 ? `${c.criteria} ${bounds.join(', ')}` : c.criteria
}

function evidenceOf (service: ServiceInfo): string {
  const text = service.banner ?? [service.product, service.version].filter(Boolean).join(' ')
  return text.length > EVIDENCE_MAX ? text.slice(0, EVIDENCE_MAX) + '…' : text
}

const NO_VERSION_NOTE = 'The banner shows the product but no version: this CVE affects some versions of it. Check the installed version.'

function distroNote (service: ServiceInfo, pkg: DistroPackage | null): string {
  const family = pkg !== null ? describeFamily(pkg.family).title : service.distro ?? 'distribution'
  const shown = service.extraInfo !== undefined ? ` (${service.extraInfo})` : ''
  return `The banner shows a ${family} package${shown}: the distribution may have backported the fix without changing the upstream version. ` +
    (pkg?.version === null || pkg === null ? 'The banner does not show the package revision, so its security tracker cannot decide.' : 'Its security tracker has no entry for this CVE.')
}

function prefixNote (version: string): string {
  return `The wire shows only ${version} of the version, and the running ${version}.x release may fall on either side of this CVE's affected range: check the installed version.`
}

/**
 * Whether a range bound begins with a version the wire showed only the leading parts of (`7.1` against
 * `< 7.1.3`): the running release may fall on either side of it.
 */
export function boundUndecided (c: CpeCriterion, shown: string): boolean {
  const bounds = [c.versionStartIncluding, c.versionStartExcluding, c.versionEndIncluding, c.versionEndExcluding]
  const v = shown.toLowerCase()
  return bounds.some((b) => b !== undefined && (b.toLowerCase() === v || b.toLowerCase().startsWith(`${v}.`)))
}

/** Confidence of an NVD match before the distribution data is heard. */
function nvdConfidence (service: ServiceInfo, match: CveMatch, pkg: DistroPackage | null): { confidence: Confidence, note: string | null } {
  if (match.productOnly === true || service.version === undefined) return { confidence: 'low', note: NO_VERSION_NOTE }
  if (service.versionPrefix === true && boundUndecided(match.criterion, service.version)) return { confidence: 'low', note: prefixNote(service.version) }
  if (service.distro !== undefined || pkg !== null) return { confidence: 'medium', note: distroNote(service, pkg) }
  if (match.confidence === 'platform') {
    return { confidence: 'medium', note: `Applies only when running on ${(match.requiresPlatform ?? []).join(' or ') || 'a specific platform'}, which a network scan cannot confirm.` }
  }
  return { confidence: 'high', note: null }
}

function fromNvd (service: ServiceInfo, cpe: string, m: CveMatch, pkg: DistroPackage | null): Verdict {
  const { confidence, note } = nvdConfidence(service, m, pkg)
  const criterion = describeCriterion(m.criterion)
  return {
    cveId: m.cve.id,
    severity: m.cve.severity ?? 'unknown',
    cvss: m.cve.cvss,
    cvssVersion: m.cve.cvssVersion,
    cvssVector: m.cve.cvssVector,
    kev: m.cve.kev,
    epss: null,
    description: m.cve.description,
    product: service.product ?? service.service,
    version: service.version ?? null,
    matchedCpe: cpe,
    criterion,
    reason: m.reason,
    source: 'nvd',
    rule: `nvd: ${criterion}: ${m.reason}`,
    // A product seen without a version is a lead to check, never an open finding.
    observed: confidence === 'low' ? 'potential' : 'open',
    distribution: null,
    confidence,
    confidenceNote: note,
    evidence: evidenceOf(service),
    requiresPlatform: m.requiresPlatform ?? []
  }
}

function severityOf (s: string | undefined): Verdict['severity'] {
  const v = s?.toLowerCase()
  return v === 'critical' || v === 'high' || v === 'medium' || v === 'low' || v === 'none' ? v : 'unknown'
}

function fromCve5 (service: ServiceInfo, cpe: string, hit: Cve5Hit, nvd: CveRecord | null): Verdict {
  // The NVD's score when it has one (it may score a CVE it has not given configurations), else the record's own.
  const nvdScored = nvd !== null && nvd.cvss !== null
  const kev: Kev | null = nvd?.kev ?? (hit.kev !== undefined ? { dateAdded: hit.kev.dateAdded } : null)
  const who = hit.origin === 'cna' ? 'cna' : 'adp'
  // A CNA range cannot be read against a version the wire showed only the leading parts of.
  const partial = service.versionPrefix === true && service.version !== undefined ? prefixNote(service.version) : null
  return {
    cveId: hit.id,
    severity: nvdScored ? (nvd.severity ?? 'unknown') : severityOf(hit.cvss?.severity),
    cvss: nvdScored ? nvd.cvss : hit.cvss?.score ?? null,
    cvssVersion: nvdScored ? nvd.cvssVersion : hit.cvss?.version ?? null,
    cvssVector: nvdScored ? nvd.cvssVector : hit.cvss?.vector ?? null,
    kev,
    epss: null,
    description: hit.description ?? hit.title ?? nvd?.description ?? '',
    product: service.product ?? service.service,
    version: service.version ?? null,
    matchedCpe: cpe,
    criterion: hit.rule,
    reason: `${service.version ?? 'no version'} ${hit.status} per ${hit.rule}`,
    source: who,
    rule: hit.rule,
    // Only the record's default status says so (no listed range covers the version), or the wire showed only
    // the leading parts of the version: a lead, not a finding.
    observed: hit.confidence === 'low' || partial !== null ? 'potential' : 'open',
    distribution: null,
    // CNA-only ranges are never high: the NVD has not analysed them.
    confidence: partial !== null ? 'low' : hit.confidence,
    confidenceNote: partial ?? hit.note,
    evidence: evidenceOf(service),
    requiresPlatform: hit.platforms ?? []
  }
}

function evidenceFor (pkg: DistroPackage, entry: DistroCveEntry | null, decision: BackportDecision | null): DistributionEvidence {
  return {
    family: pkg.family,
    release: pkg.release,
    sourcePackage: pkg.source,
    packageVersion: pkg.version,
    fixedVersion: decision?.fixedVersion ?? (entry?.status === 'not-affected' ? '0' : entry?.fixedVersion ?? null),
    trackerStatus: entry?.status ?? null,
    urgency: entry?.urgency ?? null
  }
}

/** Let the distribution's tracker decide a verdict the upstream version opened. */
function applyBackport (v: Verdict, pkg: DistroPackage, entry: DistroCveEntry | null): Verdict {
  const decision = entry === null ? null : decideBackport(pkg, entry)
  const distribution = evidenceFor(pkg, entry, decision)
  if (decision === null || decision.status === 'unknown' || v.observed === 'potential') return { ...v, distribution }
  if (decision.status === 'fixed_by_distribution') {
    return {
      ...v,
      distribution,
      observed: 'fixed_by_distribution',
      source: 'distribution',
      rule: decision.rule,
      confidenceNote: `The upstream version matches (${v.rule}), but the running package carries the fix: ${decision.rule}.`
    }
  }
  // The tracker confirms the running revision is still vulnerable: no backport doubt remains.
  const open: Verdict = {
    ...v,
    distribution,
    source: 'distribution',
    rule: `${v.rule}; ${decision.rule}`,
    confidence: v.source === 'nvd' ? 'high' : v.confidence,
    confidenceNote: v.source === 'nvd' ? null : v.confidenceNote
  }
  // The distribution judges it no real issue for its package (Debian "unimportant", Ubuntu "negligible"):
  // it stays open and listed, at low severity, with the upstream score kept beside it.
  if (entry !== null && NEGLIGIBLE.has(entry.urgency ?? '')) {
    const upstream = v.cvss === null ? v.severity : `${v.severity}, CVSS ${v.cvss}${v.cvssVersion !== null ? ` v${v.cvssVersion}` : ''}`
    const note = `${describeFamily(pkg.family).title} rates it ${entry.urgency} for ${pkg.release ?? 'this release'} (upstream: ${upstream}): severity low.`
    return { ...open, severity: v.severity === 'none' ? 'none' : 'low', confidenceNote: open.confidenceNote === null ? note : `${open.confidenceNote} ${note}` }
  }
  return open
}

/** Tracker ratings that say a CVE is no real issue for the distribution's package. */
const NEGLIGIBLE = new Set(['unimportant', 'negligible'])

/** Every CVE of one detected service, decided by the sources that hold it. */
export async function matchService (service: ServiceInfo, deps: MatchDeps, opts: MatchOptions = {}): Promise<ServiceMatch> {
  const pkg = opts.distroPackage !== undefined ? opts.distroPackage : distroPackageOf(service)
  const out: ServiceMatch = { verdicts: [], disagreements: [], distroPackage: pkg }
  if (service.cpe.length === 0) return out
  const byCve = new Map<string, Verdict>()
  const sources = deps.sources

  // Every lookup that does not depend on another is issued at once: on Redis each is a round trip, and
  // one after another they made up most of a port's matching time.
  const nvdCpes = service.cpe.filter((cpe) => {
    const key = productKeyOfCpe(cpe)
    return !(key !== null && opts.unavailable?.has(key) === true)
  })
  const cve5Refs = sources !== null && service.version !== undefined
    ? service.cpe.flatMap((cpe) => productsOf({ cpe: [cpe] }).map((ref) => ({ cpe, ref })))
    : []
  const distroKey = sources !== null && pkg !== null && pkg.release !== null && pkg.source !== null
    ? { family: pkg.family, release: pkg.release, sourcePackage: pkg.source }
    : null
  const [nvdMatches, cve5Matches, entries] = await Promise.all([
    Promise.all(nvdCpes.map(async (cpe) => await deps.nvd.match(cpe))),
    Promise.all(cve5Refs.map(async ({ ref }) => await matchCve5(sources as SourceStore, { ...ref, version: service.version }, { all: true }))),
    distroKey !== null ? readTrackerEntries(sources as SourceStore, distroKey) : Promise.resolve(null)
  ])

  nvdCpes.forEach((cpe, i) => {
    for (const m of nvdMatches[i]) {
      if (m.cve.rejected || byCve.has(m.cve.id)) continue
      byCve.set(m.cve.id, fromNvd(service, cpe, m, pkg))
    }
  })

  // The CVE record's own affected data decides where the NVD has no configuration for the CVE.
  const hits: Array<{ cpe: string, hit: Cve5Hit }> = []
  const seen = new Set<string>()
  cve5Refs.forEach(({ cpe }, i) => {
    for (const hit of cve5Matches[i]) {
      if (seen.has(hit.id)) continue
      seen.add(hit.id)
      hits.push({ cpe, hit })
    }
  })
  if (sources !== null && hits.length + byCve.size > 0) {
    // The enriching sources are read for every candidate beside the NVD records of the CNA's hits; a few
    // candidates that end up without a verdict cost nothing but their keys.
    const candidates = [...byCve.keys(), ...hits.map((h) => h.hit.id)]
    const [records, enrichers] = await Promise.all([
      hits.length > 0 ? deps.nvd.getMany(hits.map((h) => h.hit.id)) : Promise.resolve([]),
      Promise.all(ENRICHERS.map(async (e) => await e.lookup(sources, candidates)))
    ])
    hits.forEach(({ cpe, hit }, i) => {
      const nvd = records[i]
      if (nvd?.rejected === true) return
      if (nvdDecides(nvd)) {
        const nvdAffected = byCve.has(hit.id)
        const cnaAffected = hit.status === 'affected'
        if (hit.status !== 'unknown' && nvdAffected !== cnaAffected) {
          const text = `${hit.id}: the NVD says ${nvdAffected ? 'affected' : 'not affected'}, the ${hit.origin === 'cna' ? 'CNA' : hit.provider ?? 'ADP'} says ${hit.status} (${hit.rule}); the NVD decided.`
          out.disagreements.push(text)
          const v = byCve.get(hit.id)
          if (v !== undefined) byCve.set(hit.id, { ...v, confidenceNote: v.confidenceNote === null ? text : `${v.confidenceNote} ${text}` })
        }
        return
      }
      if (hit.status === 'affected' && !byCve.has(hit.id)) byCve.set(hit.id, fromCve5(service, cpe, hit, nvd))
    })
    let verdicts = [...byCve.values()]
    if (pkg !== null) verdicts = verdicts.map((v) => applyBackport(v, pkg, entries?.get(v.cveId) ?? null))
    out.verdicts = verdicts.map((v) => {
      let fields: EnrichableFields = { kev: v.kev, epss: v.epss }
      for (const enrich of enrichers) fields = { ...fields, ...enrich(v.cveId, fields) }
      return { ...v, ...fields }
    })
  } else {
    out.verdicts = pkg !== null ? [...byCve.values()].map((v) => applyBackport(v, pkg, null)) : [...byCve.values()]
  }
  out.verdicts.sort((a, b) => a.cveId < b.cveId ? -1 : a.cveId > b.cveId ? 1 : 0)
  return out
}
