// What one detected service is vulnerable to, from every source at once, in an explicit precedence, one
// stage per deciding source: the NVD's configurations; the CNA's and CISA's affected data in CVE JSON 5
// records where the NVD has none; then the distribution's tracker for the package revision the banner shows
// (every tracker, by family, through lib/distro/families.ts); then every enriching source of the registry
// (KEV, EPSS) for priority. Each verdict names the source that decided it and the exact rule.

import { formatCpe, parseCpe, unescapeCpeValue } from '../cpe/name'
import { aliasesFor } from '../cpe/aliases'
import { readAliases, type ImportedAlias } from '../cpe/dictionary'
import type { ServiceInfo } from '../domain/services'
import type { LocalCveIndex } from '../nvd/cve-index'
import type { CpeCriterion, CveMatch, CveRecord } from '../nvd/types'
import type { DistributionEvidence, Kev, NewFinding } from '../domain/findings'
import { matchCve5, nvdDecides, type Cve5Hit } from '../cve5/source'
import { decideBackport, type BackportDecision } from '../distro/decide'
import { describeFamily, readTrackerEntries, type TrackerEntry as DistroCveEntry } from '../distro/families'
import { distroPackageOf, sourceRuleFor, type DistroPackage } from '../distro/package'
import { releaseByCodename, tracked, trackedReleases, type DistroRelease } from '../distro/releases'
import { criterionUses, productKeyOf } from '../nvd/matcher'
import { confidenceFor, scoreOf, type Confidence, type EvidenceKind } from '../domain/confidence'
import type { EnrichableFields } from '../sources/descriptor'
import { ENRICHERS } from '../sources/registry'
import type { SourceStore } from '../sources/source-store'

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
  /** When the scan runs: whether a release is still supported is judged on it (default: now). */
  now?: Date
}

/** A name the service's CPE names were matched under besides their own, and where it came from. */
export interface UsedAlias {
  /** The CPE name matched, e.g. `cpe:2.3:a:f5:nginx_open_source:1.25.3:*:…`. */
  cpe: string
  /** The vendor:product the scan derived, which the alias stands for. */
  of: string
  /** `cpe-dictionary`: imported from the NVD's CPE dictionary (a rename); the hand-kept table's names are the service's own CPE names. */
  origin: 'cpe-dictionary'
  relation: ImportedAlias['relation']
  /** The dictionary entry that shows the rename. */
  deprecated: string
  by: string
}

export interface ServiceMatch {
  verdicts: Verdict[]
  /** Where the CVE record's own affected data says otherwise than the NVD, which decided. */
  disagreements: string[]
  distroPackage: DistroPackage | null
  /** Imported aliases the service was also matched under (`nvd:match` shows which decided a verdict: its matchedCpe). */
  aliases: UsedAlias[]
  /** The distribution release the banner revealed, when no tracker covers it any more. */
  outOfSupport: DistroRelease | null
}

/** The finding id of a distribution release out of support. */
export const EOL_FINDING_ID = 'VULNSCAN-OS-EOL'

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
function nvdConfidence (service: ServiceInfo, match: CveMatch, pkg: DistroPackage | null): { kind: EvidenceKind, note: string | null } {
  if (match.productOnly === true || service.version === undefined) return { kind: 'product-only', note: NO_VERSION_NOTE }
  if (service.versionPrefix === true && boundUndecided(match.criterion, service.version)) return { kind: 'version-prefix', note: prefixNote(service.version) }
  if (service.distro !== undefined || pkg !== null) return { kind: 'banner-family', note: distroNote(service, pkg) }
  if (match.confidence === 'platform') {
    return { kind: 'platform', note: `Applies only when running on ${(match.requiresPlatform ?? []).join(' or ') || 'a specific platform'}, which a network scan cannot confirm.` }
  }
  return { kind: 'banner-upstream', note: null }
}

function fromNvd (service: ServiceInfo, cpe: string, m: CveMatch, pkg: DistroPackage | null): Verdict {
  const { kind, note } = nvdConfidence(service, m, pkg)
  const { confidence, confidenceScore } = confidenceFor(kind)
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
    confidenceScore,
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
    ...confidenceFor(partial !== null ? 'version-prefix' : hit.confidence === 'low' ? 'default-status' : hit.origin === 'adp' ? 'adp-cpe' : 'cna-range'),
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
      confidenceScore: scoreOf('tracker'),
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
    // The tracker decided the running revision: as sure as the tracker, whatever range opened it.
    confidenceScore: v.source === 'nvd' ? scoreOf('tracker') : Math.max(v.confidenceScore ?? 0, scoreOf('cna-range')),
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

/** The upstream part of a package version: `1:9.2p1-2+deb12u3` → `9.2p1`, `2.3.19.1+dfsg1-2.1` → `2.3.19.1`. */
export function packageUpstream (version: string): string {
  const noEpoch = version.replace(/^\d+:/, '')
  const dash = noEpoch.lastIndexOf('-')
  const up = dash === -1 ? noEpoch : noEpoch.slice(0, dash)
  return up.replace(/[+~](?:dfsg|ds|repack)\d*.*$/i, '').toLowerCase()
}

/** CPE names of a service's names under their imported aliases (renames), with where each came from. */
async function aliasCpes (service: ServiceInfo, sources: SourceStore | null): Promise<UsedAlias[]> {
  if (sources === null) return []
  const own = new Set(productsOf(service).map((r) => `${r.vendor}:${r.product}`.toLowerCase()))
  const parsed = service.cpe.map((cpe) => ({ cpe, p: parseCpe(cpe) })).filter((x) => x.p !== null)
  const keys = [...new Set(parsed.map((x) => `${unescapeCpeValue(x.p!.vendor)}:${unescapeCpeValue(x.p!.product)}`.toLowerCase()))]
  const lists = await readAliases(sources, keys)
  const out: UsedAlias[] = []
  const seen = new Set<string>()
  keys.forEach((key, i) => {
    const base = parsed.find((x) => `${unescapeCpeValue(x.p!.vendor)}:${unescapeCpeValue(x.p!.product)}`.toLowerCase() === key)!.p!
    for (const a of lists[i]) {
      const pair = `${a.vendor}:${a.product}`
      if (own.has(pair) || seen.has(pair)) continue
      seen.add(pair)
      const cpe = formatCpe({ part: base.part, vendor: a.vendor, product: a.product, version: unescapeCpeValue(base.version), update: unescapeCpeValue(base.update) })
      out.push({ cpe, of: key, origin: 'cpe-dictionary', relation: a.relation, deprecated: a.deprecated, by: a.by })
    }
  })
  return out
}

/** Whether an NVD record's configurations name one of the product keys (quoted, lower case vendor:product). */
function configurationsName (record: CveRecord, keys: ReadonlySet<string>): boolean {
  return criterionUses(record.configurations).some((u) => keys.has(u.productKey))
}

function quotedKeyOf (cpe: string): string | null {
  const p = parseCpe(cpe)
  return p === null ? null : productKeyOf(p.vendor, p.product)
}

/** The release the package belongs to, when it is one no tracker covers any more on `at`. */
function releaseOutOfSupport (pkg: DistroPackage | null, at: Date): DistroRelease | null {
  if (pkg === null || pkg.release === null) return null
  const r = releaseByCodename(pkg.family, pkg.release)
  return r !== undefined && !tracked(r, at) ? r : null
}

function familyName (family: string): string {
  return family === 'debian' ? 'Debian' : 'Ubuntu'
}

/** The finding that says the banner revealed a release no tracker covers any more. */
function eolVerdict (service: ServiceInfo, cpe: string, pkg: DistroPackage, r: DistroRelease): Verdict {
  const name = `${familyName(r.family)} ${r.version} (${r.codename})`
  return {
    cveId: EOL_FINDING_ID,
    severity: 'high',
    cvss: null,
    cvssVersion: null,
    cvssVector: null,
    kev: null,
    epss: null,
    description: `Operating system release out of support: ${name} gets no security updates since ${r.trackedUntil ?? 'its end of life'}, and no distribution tracker covers it any more.`,
    product: service.product ?? service.service,
    version: service.version ?? null,
    matchedCpe: cpe,
    criterion: `${r.family}:${r.codename} tracked until ${r.trackedUntil ?? 'unknown'}`,
    reason: `${pkg.evidence}: ${name}, out of support since ${r.trackedUntil ?? 'unknown'}`,
    source: 'distribution',
    rule: `distribution: ${name} security support ended ${r.trackedUntil ?? 'unknown'} (distro-info-data ${r.family === 'debian' ? 'eol-lts' : 'eol-esm/eol-legacy'})`,
    observed: 'open',
    distribution: { family: pkg.family, release: pkg.release, sourcePackage: pkg.source, packageVersion: pkg.version, fixedVersion: null, trackerStatus: null, urgency: null },
    ...confidenceFor(pkg.version !== null ? 'tracker' : 'banner-family'),
    confidenceNote: pkg.version !== null ? null : 'The banner names the release only through the upstream version it shipped.',
    evidence: evidenceOf(service),
    requiresPlatform: [],
    remediation: `Upgrade the host to a supported ${familyName(r.family)} release.`
  }
}

/** Kinds of evidence an out-of-support release lowers to eol-release: the upstream version decides them now. */
const EOL_LOWERS = new Set<EvidenceKind>(['banner-upstream', 'banner-family', 'cna-range', 'adp-cpe'])

/**
 * A banner without any distribution sign whose upstream version is one a tracked release packaged and patched by
 * revision: it is most likely that distribution's package, whose revision the banner hides. Such a CVE is a lead
 * (potential), not an open finding; where no release fixed it, it stays open.
 */
async function shippedFixes (service: ServiceInfo, sources: SourceStore, at: Date): Promise<Map<string, { release: DistroRelease, source: string, entry: DistroCveEntry }>> {
  const out = new Map<string, { release: DistroRelease, source: string, entry: DistroCveEntry }>()
  const rule = sourceRuleFor(service.product)
  if (rule === undefined || service.version === undefined || service.versionPrefix === true) return out
  const upstream = service.version.toLowerCase()
  const keys = trackedReleases(at).flatMap((r) => {
    const source = rule.source(service.version, r.family, r.codename)
    return source === null ? [] : [{ release: r, source }]
  })
  const lists = await Promise.all(keys.map(async (k) => await readTrackerEntries(sources, { family: k.release.family, release: k.release.codename, sourcePackage: k.source })))
  keys.forEach((k, i) => {
    for (const [cve, entry] of lists[i] ?? []) {
      if (entry.status !== 'resolved' || entry.fixedVersion === null || out.has(cve)) continue
      if (packageUpstream(entry.fixedVersion) === upstream) out.set(cve, { release: k.release, source: k.source, entry })
    }
  })
  return out
}

function shippedVerdict (v: Verdict, fix: { release: DistroRelease, source: string, entry: DistroCveEntry }): Verdict {
  const { release: r, source, entry } = fix
  const rule = `${r.family} ${r.codename} ${source}: fixed in ${entry.fixedVersion ?? '?'}, a revision of the upstream ${v.version ?? '?'} the banner shows`
  return {
    ...v,
    observed: 'potential',
    source: 'distribution',
    rule: `${v.rule}; ${rule}`,
    distribution: { family: r.family, release: r.codename, sourcePackage: source, packageVersion: null, fixedVersion: entry.fixedVersion, trackerStatus: entry.status, urgency: entry.urgency },
    ...confidenceFor('distribution-shipped'),
    confidenceNote: `The banner shows ${v.product} ${v.version ?? ''} with no distribution sign, but ${familyName(r.family)} ${r.version} (${r.codename}) packages this very upstream version and fixed ${v.cveId} in revision ${entry.fixedVersion ?? '?'}: if this is that package, the fix depends on a revision the banner hides. Check the installed package.`
  }
}

/** Every CVE of one detected service, decided by the sources that hold it. */
export async function matchService (service: ServiceInfo, deps: MatchDeps, opts: MatchOptions = {}): Promise<ServiceMatch> {
  const pkg = opts.distroPackage !== undefined ? opts.distroPackage : distroPackageOf(service)
  const at = opts.now ?? new Date()
  const eol = releaseOutOfSupport(pkg, at)
  const out: ServiceMatch = { verdicts: [], disagreements: [], distroPackage: pkg, aliases: [], outOfSupport: eol }
  if (service.cpe.length === 0) return out
  const byCve = new Map<string, Verdict>()
  const sources = deps.sources

  out.aliases = await aliasCpes(service, sources)
  const ownCpes = service.cpe.filter((cpe) => {
    const key = productKeyOfCpe(cpe)
    return !(key !== null && opts.unavailable?.has(key) === true)
  })
  // The hand-kept names first: a CVE they match is not matched again under a rename.
  const nvdCpes = [...ownCpes, ...out.aliases.map((a) => a.cpe)]
  // Every name the product is known by: an NVD configuration naming none of them does not decide for it.
  const known = new Set(nvdCpes.map(quotedKeyOf).filter((k): k is string => k !== null))
  for (const a of aliasesFor(service.product ?? '')) known.add(productKeyOf(a.vendor, a.product))

  // Every lookup that does not depend on another is issued at once: on Redis each is a round trip, and
  // one after another they made up most of a port's matching time.
  const cve5Refs = sources !== null && service.version !== undefined
    ? service.cpe.flatMap((cpe) => productsOf({ cpe: [cpe] }).map((ref) => ({ cpe, ref })))
    : []
  const distroKey = sources !== null && pkg !== null && pkg.release !== null && pkg.source !== null
    ? { family: pkg.family, release: pkg.release, sourcePackage: pkg.source }
    : null
  const [nvdMatches, cve5Matches, entries, shipped] = await Promise.all([
    Promise.all(nvdCpes.map(async (cpe) => await deps.nvd.match(cpe))),
    Promise.all(cve5Refs.map(async ({ ref }) => await matchCve5(sources as SourceStore, { ...ref, version: service.version }, { all: true }))),
    distroKey !== null ? readTrackerEntries(sources as SourceStore, distroKey) : Promise.resolve(null),
    sources !== null && pkg === null && service.distro === undefined ? shippedFixes(service, sources, at) : Promise.resolve(new Map())
  ])

  nvdCpes.forEach((cpe, i) => {
    for (const m of nvdMatches[i]) {
      if (m.cve.rejected || byCve.has(m.cve.id)) continue
      byCve.set(m.cve.id, fromNvd(service, cpe, m, pkg))
    }
  })

  // The CVE record's own affected data decides where the NVD has no configuration for the CVE, or where its
  // configurations name none of the product's known names (a product the NVD filed under a new name only).
  const hits: Array<{ cpe: string, hit: Cve5Hit }> = []
  const seen = new Set<string>()
  cve5Refs.forEach(({ cpe }, i) => {
    for (const hit of cve5Matches[i]) {
      if (seen.has(hit.id)) continue
      seen.add(hit.id)
      hits.push({ cpe, hit })
    }
  })
  let verdicts: Verdict[]
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
      if (nvdDecides(nvd) && nvd !== null && configurationsName(nvd, known)) {
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
      if (hit.status === 'affected' && !byCve.has(hit.id)) {
        const v = fromCve5(service, cpe, hit, nvd)
        const renamed = nvdDecides(nvd) && nvd !== null
          ? `The NVD's configurations name only ${[...new Set(criterionUses(nvd.configurations).map((u) => u.productKey))].join(', ')}, none of this product's names: the CVE record decided.`
          : null
        byCve.set(hit.id, renamed === null ? v : { ...v, confidenceNote: v.confidenceNote === null ? renamed : `${v.confidenceNote} ${renamed}` })
      }
    })
    verdicts = [...byCve.values()]
    if (pkg !== null) verdicts = verdicts.map((v) => applyBackport(v, pkg, entries?.get(v.cveId) ?? null))
    verdicts = verdicts.map((v) => {
      let fields: EnrichableFields = { kev: v.kev, epss: v.epss, euvdId: v.euvdId ?? null, kevCatalogues: v.kevCatalogues ?? (v.kev !== null ? ['cisa'] : []) }
      for (const enrich of enrichers) fields = { ...fields, ...enrich(v.cveId, fields) }
      return { ...v, ...fields }
    })
  } else {
    verdicts = pkg !== null ? [...byCve.values()].map((v) => applyBackport(v, pkg, null)) : [...byCve.values()]
  }
  if (shipped.size > 0) {
    verdicts = verdicts.map((v) => v.observed === 'open' && shipped.has(v.cveId) ? shippedVerdict(v, shipped.get(v.cveId)) : v)
  }
  if (eol !== null && pkg !== null) {
    const note = `${familyName(eol.family)} ${eol.version} (${eol.codename}) is out of support since ${eol.trackedUntil ?? '?'}: no tracker covers it, so the upstream version decides.`
    verdicts = verdicts.map((v) => {
      if (v.source === 'distribution' || v.observed !== 'open') return v
      const lowered = EOL_LOWERS.has(kindOfScore(v.confidenceScore)) ? confidenceFor('eol-release') : { confidence: v.confidence, confidenceScore: v.confidenceScore }
      return { ...v, ...lowered, confidenceNote: note }
    })
    verdicts.push(eolVerdict(service, service.cpe[0], pkg, eol))
  }
  out.verdicts = verdicts
  out.verdicts.sort((a, b) => a.cveId < b.cveId ? -1 : a.cveId > b.cveId ? 1 : 0)
  return out
}

function kindOfScore (score: number | undefined): EvidenceKind {
  switch (score) {
    case scoreOf('banner-upstream'): return 'banner-upstream'
    case scoreOf('banner-family'): return 'banner-family'
    case scoreOf('cna-range'): return 'cna-range'
    case scoreOf('adp-cpe'): return 'adp-cpe'
    default: return 'product-only'
  }
}
