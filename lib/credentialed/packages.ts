// A host's package list decided by its distribution's tracker: one finding per source package and CVE, on port 0
// ("the host itself", as Nessus and Greenbone report local checks), listing the binary packages built from it.
// Kernel CVEs are decided on the running kernel, not on the newest one installed.
import type { CveRecord } from '../nvd/types'
import type { TrackerEntry } from '../distro/families'
import { ENRICHERS } from '../sources/registry'
import type { EnrichableFields } from '../sources/descriptor'
import type { SourceStore } from '../sources/source-store'
import type { NewFinding, PackageEvidence } from '../domain/findings'
import type { InstalledPackage, Inventory } from './inventory'
import type { PackageFamily } from './families'

/** The port of findings about the host itself rather than a service on it (package findings). */
export const HOST_PORT = 0

/** The `rule` of every package finding. */
export const PACKAGE_RULE = 'package'

export const NO_FIX_YET = 'no fix yet'

/** One source package as installed: the binaries built from it, and the version that decides it. */
export interface InstalledSource {
  source: string
  /** The lowest installed version among its binaries: the oldest code on the host decides. */
  version: string
  binaries: Array<{ name: string, version: string }>
  /** Set for the kernel: what the running kernel says. */
  kernel?: KernelState
}

export interface KernelState {
  running: string
  /** The running kernel's image package, when one is installed. */
  image: string | null
  /** The newest installed kernel image's version, when another than the running one. */
  newest: string | null
  rebootPending: boolean
}

/** The kernel as the host runs it: the running image's package, the newest installed, and whether a reboot is due. */
export function kernelState (inv: Inventory, family: PackageFamily): KernelState | null {
  const rule = family.kernel
  if (rule === undefined || inv.kernel === null) return null
  const images = inv.packages.filter((p) => rule.isImage(p.name))
  const running = images.find((p) => p.name === rule.imageOf(inv.kernel as string)) ?? null
  let newest: InstalledPackage | null = null
  for (const p of images) {
    if (!family.isVersion(p.version)) continue
    if (newest === null || family.compare(p.version, newest.version) > 0) newest = p
  }
  const newer = running !== null && newest !== null && family.isVersion(running.version) && family.compare(newest.version, running.version) > 0
  return {
    running: inv.kernel,
    image: running?.name ?? null,
    newest: newer && newest !== null ? newest.version : null,
    // A running kernel whose package is gone was replaced by an upgrade: only a reboot loads the new one.
    rebootPending: inv.rebootRequired || newer || (running === null && images.length > 0)
  }
}

/** The host's source packages, the kernel's decided by the running image alone. */
export function installedSources (inv: Inventory, family: PackageFamily): { sources: InstalledSource[], kernel: KernelState | null, notes: string[] } {
  const notes: string[] = []
  const kernel = kernelState(inv, family)
  const rule = family.kernel
  const bySource = new Map<string, InstalledSource>()
  const add = (source: string, version: string, binary: InstalledPackage): InstalledSource => {
    let s = bySource.get(source)
    if (s === undefined) bySource.set(source, s = { source, version, binaries: [] })
    else if (family.isVersion(version) && family.isVersion(s.version) && family.compare(version, s.version) < 0) s.version = version
    s.binaries.push({ name: binary.name, version: binary.version })
    return s
  }
  let kernelSource: string | null = null
  for (const p of inv.packages) {
    if (rule?.isImage(p.name) === true) {
      const { source, version } = rule.source(p)
      kernelSource = source
      // Images of kernels not running are on disk, not in memory: the running one decides the kernel's CVEs.
      if (kernel?.image === p.name) add(source, version, p).kernel = kernel
      continue
    }
    add(p.source, p.sourceVersion, p)
  }
  if (kernel !== null && kernel.image === null) {
    notes.push(`the running kernel ${kernel.running} is not from an installed package: kernel CVEs are not decided`)
    // The kernel's other binaries (headers, tools) would decide the kernel's CVEs on a kernel that is not running.
    if (kernelSource !== null) bySource.delete(kernelSource)
  }
  for (const s of bySource.values()) s.binaries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  return { sources: [...bySource.values()].sort((a, b) => a.source < b.source ? -1 : a.source > b.source ? 1 : 0), kernel, notes }
}

export interface PackageVerdict {
  cveId: string
  source: InstalledSource
  entry: TrackerEntry
  observed: 'open' | 'fixed_by_distribution'
  fixed: string
  /** The exact comparison, e.g. `3.0.15-1~deb12u1 < 3.0.16-1~deb12u1`. */
  reason: string
  note: string | null
}

const NEGLIGIBLE = new Set(['unimportant', 'negligible'])

/** One CVE of one installed source package, as the tracker decides it; null when it is no finding. */
export function decidePackage (s: InstalledSource, cveId: string, entry: TrackerEntry, family: PackageFamily, os: Inventory['os']): PackageVerdict | null {
  if (entry.status === 'not-affected') return null
  const kernelNote = (fixedBy: string | null): string | null => {
    const k = s.kernel
    if (k === undefined) return null
    const bits = [`Decided on the running kernel ${k.running} (${k.image ?? 'no package'} ${s.version}).`]
    if (k.newest !== null && fixedBy !== null && family.isVersion(fixedBy) && family.compare(k.newest, fixedBy) >= 0) bits.push(`A kernel with the fix (${k.newest}) is installed: reboot into it.`)
    else if (k.rebootPending) bits.push('A reboot is pending.')
    return bits.join(' ')
  }
  if (entry.status === 'open' || entry.status === 'undetermined') {
    return { cveId, source: s, entry, observed: 'open', fixed: NO_FIX_YET, reason: `${s.source} ${s.version}: no fixed version yet (${entry.status})`, note: kernelNote(null) }
  }
  const fixed = entry.fixedVersion
  if (fixed === null || !family.isVersion(fixed) || !family.isVersion(s.version)) return null
  if (entry.introduced !== undefined && family.isVersion(entry.introduced) && family.compare(s.version, entry.introduced) < 0) return null
  if (family.compare(s.version, fixed) >= 0) {
    if (!family.releaseUpdate(fixed, os)) return null
    return { cveId, source: s, entry, observed: 'fixed_by_distribution', fixed, reason: `${s.source} ${s.version} >= ${fixed}`, note: null }
  }
  return { cveId, source: s, entry, observed: 'open', fixed, reason: `${s.source} ${s.version} < ${fixed}`, note: kernelNote(fixed) }
}

export interface PackageMatchDeps {
  sources: SourceStore
  /** NVD records of CVE ids (severity, CVSS, description); null where the index has none. */
  cves: (ids: string[]) => Promise<Array<CveRecord | null>>
}

export interface PackageMatch {
  findings: NewFinding[]
  /** Source packages looked up, and how many the tracker knew. */
  sources: number
  known: number
  kernel: KernelState | null
  notes: string[]
}

/** Every package finding of one host: its installed sources against the family's tracker entries. */
export async function matchPackages (address: string, inv: Inventory, family: PackageFamily, deps: PackageMatchDeps): Promise<PackageMatch> {
  const release = family.release(inv.os, inv)
  const { sources, kernel, notes } = installedSources(inv, family)
  if (release === null) return { findings: [], sources: sources.length, known: 0, kernel, notes: [...notes, 'the host does not name its release (VERSION_CODENAME): its packages are not decided'] }
  const [entries, importedAt] = await Promise.all([
    Promise.all(sources.map(async (s) => await family.readEntries(deps.sources, release, s.source))),
    family.importedAt(deps.sources)
  ])
  const verdicts: PackageVerdict[] = []
  let known = 0
  sources.forEach((s, i) => {
    const m = entries[i]
    if (m === null) return
    known++
    for (const [cve, entry] of m) {
      const v = decidePackage(s, cve, entry, family, inv.os)
      if (v !== null) verdicts.push(v)
    }
  })
  const ids = [...new Set(verdicts.map((v) => v.cveId))]
  const [records, enrichers] = await Promise.all([deps.cves(ids), Promise.all(ENRICHERS.map(async (e) => await e.lookup(deps.sources, ids)))])
  const byId = new Map(ids.map((id, i) => [id, records[i]]))
  // The registry's enriching sources (KEV, EPSS…), in its order, as the banner matcher applies them.
  const findings = verdicts.map((v) => packageFinding(address, v, byId.get(v.cveId) ?? null, family, release, importedAt))
    .map((f) => {
      let fields: EnrichableFields = { kev: f.kev, epss: f.epss, euvdId: f.euvdId ?? null, kevCatalogues: f.kevCatalogues ?? (f.kev !== null ? ['cisa'] : []) }
      for (const enrich of enrichers) fields = { ...fields, ...enrich(f.cveId, fields) }
      return { ...f, ...fields }
    })
  findings.sort((a, b) => a.cveId < b.cveId ? -1 : a.cveId > b.cveId ? 1 : a.product < b.product ? -1 : a.product > b.product ? 1 : 0)
  return { findings, sources: sources.length, known, kernel, notes }
}

const EVIDENCE_BINARIES = 20

function packageFinding (address: string, v: PackageVerdict, cve: CveRecord | null, family: PackageFamily, release: string, importedAt: string | null): NewFinding {
  const s = v.source
  const main = s.binaries.find((b) => b.name === s.source) ?? s.binaries[0]
  const pkg: PackageEvidence = {
    name: main.name,
    source: s.source,
    installed: s.version,
    fixed: v.fixed,
    binaries: s.binaries.map((b) => b.name),
    tracker: family.tracker,
    trackerDate: importedAt
  }
  const negligible = NEGLIGIBLE.has(v.entry.urgency ?? '') && v.observed === 'open'
  const nvdSeverity = cve?.severity ?? 'unknown'
  const notes = [v.note, negligible ? `${family.tracker} rates it ${v.entry.urgency ?? ''} for ${release} (upstream: ${nvdSeverity}): severity low.` : null,
    v.entry.note !== undefined ? v.entry.note : null].filter((n): n is string => n !== null && n !== '')
  const shown = s.binaries.slice(0, EVIDENCE_BINARIES).map((b) => `${b.name} ${b.version}`).join(', ')
  const more = s.binaries.length > EVIDENCE_BINARIES ? ` and ${s.binaries.length - EVIDENCE_BINARIES} more` : ''
  return {
    address,
    port: HOST_PORT,
    protocol: 'tcp',
    cveId: v.cveId,
    severity: negligible ? (nvdSeverity === 'none' ? 'none' : 'low') : nvdSeverity,
    cvss: cve?.cvss ?? null,
    cvssVersion: cve?.cvssVersion ?? null,
    cvssVector: cve?.cvssVector ?? null,
    kev: cve?.kev ?? null,
    epss: null,
    description: cve?.description ?? '',
    product: s.source,
    version: s.version,
    matchedCpe: `pkg:${family.format === 'dpkg' ? 'deb' : family.format}/${family.family}/${s.source}@${encodeURIComponent(s.version)}?distro=${release}`,
    criterion: v.fixed === NO_FIX_YET ? `${family.family} ${release} ${s.source}: ${NO_FIX_YET}` : `${family.family} ${release} ${s.source} < ${v.fixed}`,
    reason: v.reason,
    source: 'distribution',
    rule: PACKAGE_RULE,
    observed: v.observed,
    distribution: {
      family: family.family,
      release,
      sourcePackage: s.source,
      packageVersion: s.version,
      fixedVersion: v.fixed === NO_FIX_YET ? null : v.fixed,
      trackerStatus: v.entry.status,
      urgency: v.entry.urgency
    },
    confidence: 'high',
    confidenceNote: notes.length > 0 ? notes.join(' ') : null,
    evidence: `installed (credentialed scan): ${shown}${more}; ${family.tracker}${importedAt !== null ? ` imported ${importedAt}` : ''}`,
    requiresPlatform: [],
    package: pkg
  }
}
