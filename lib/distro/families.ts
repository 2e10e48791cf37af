// Distribution families for matching installed packages against their distribution's security data: one
// place that gives, per family, its package version order and its tracker's entries.
//
//   import { compareVersions, readTrackerEntries, releaseOf } from '../distro/families'
//
//   releaseOf({ ID: 'rocky', ID_LIKE: 'rhel centos fedora', VERSION_ID: '9.3' })   // → { family: 'rhel', release: '9' }
//   releaseOf({ ID: 'debian', VERSION_ID: '12', VERSION_CODENAME: 'bookworm' })      // → { family: 'debian', release: 'bookworm' }
//   releaseOf({ ID: 'alpine', VERSION_ID: '3.20.3' })                                // → { family: 'alpine', release: '3.20' }
//
//   const entries = await readTrackerEntries(store, { family: 'rhel', release: '9', sourcePackage: 'openssl' })
//   // Map<cveId, { status, fixedVersion, urgency, source, note?, introduced? }>, or null when the tracker lists
//   // nothing for that package in that release (the same shape lib/distro/entries.ts readDistroEntries returns):
//   //   status 'resolved' (fixed in fixedVersion), 'not-affected', 'open' (no fix yet) or 'undetermined';
//   //   urgency: the distribution's own rating (Debian urgency, Ubuntu priority, Red Hat severity), or null.
//   const e = entries?.get('CVE-2024-5535')
//   if (e?.status === 'resolved' && compareVersions('rhel', installed, e.fixedVersion!) >= 0) { … fixed … }
//
// Keys, per family (what `release` and `sourcePackage` are):
//   debian, ubuntu: release codename (bookworm, jammy); the source package (dpkg-query's ${source:Package}).
//   alpine: major.minor (3.20) or edge; the origin package (the `o:` field of /lib/apk/db/installed).
//   rhel (RHEL, CentOS, Rocky, AlmaLinux): the major version (9); Red Hat's data lists binary package names and
//     the source package through its -debugsource package, so a binary name or the source RPM's name both work.
// Versions: dpkg `[epoch:]upstream[-revision]`, rpm `[epoch:]version-release`, apk `version-rN`, as the
// package manager prints them. A family whose tracker was never imported reads null everywhere.

import { sourcesWithRole } from '../sources/registry'
import type { SourceStore } from '../sources/source-store'
import { readDistroEntries, readImportMeta, type DistroCveEntry } from './entries'
import { DISTRO_FAMILIES, FAMILY_INFO, isDistroFamily, type DistroFamily } from './family'
import { DEBIAN_RELEASES, UBUNTU_RELEASES } from './package'

export { DISTRO_FAMILIES, isDistroFamily, type DistroFamily }

/** One CVE's verdict for one package in one release. */
export type TrackerEntry = DistroCveEntry

export interface TrackerKey {
  family: DistroFamily
  release: string
  sourcePackage: string
}

/** -1, 0 or 1 by the family's version order; throws on a version it cannot read (see isVersion). */
export function compareVersions (family: DistroFamily, a: string, b: string): number {
  return FAMILY_INFO[family].versions.compare(a, b)
}

export function isVersion (family: DistroFamily, version: string): boolean {
  return FAMILY_INFO[family].versions.isVersion(version)
}

export interface FamilyDescription {
  family: DistroFamily
  title: string
  /** The version scheme: dpkg, rpm or apk. */
  scheme: 'dpkg' | 'rpm' | 'apk'
  /** The registered data source that speaks for the family, if any. */
  tracker: { name: string, title: string } | null
}

export function describeFamily (family: DistroFamily): FamilyDescription {
  const d = sourcesWithRole('backports').find((s) => s.family === family)
  return {
    family,
    title: FAMILY_INFO[family].title,
    scheme: FAMILY_INFO[family].versions.scheme,
    tracker: d === undefined ? null : { name: d.name, title: d.title }
  }
}

/** What a tracker says about every CVE of one source package in one release; null when it lists none. */
export async function readTrackerEntries (store: SourceStore, key: TrackerKey): Promise<Map<string, TrackerEntry> | null> {
  return await readDistroEntries(store, { family: key.family, release: key.release, source: key.sourcePackage })
}

/** When the family's tracker data was last imported, or null when never. */
export async function trackerImportedAt (store: SourceStore, family: DistroFamily): Promise<string | null> {
  return (await readImportMeta(store, family))?.importedAt ?? null
}

/** `/etc/os-release` fields, as its KEY=value lines give them (quotes removed). */
export interface OsRelease {
  ID?: string
  ID_LIKE?: string
  VERSION_ID?: string
  VERSION_CODENAME?: string
}

/** Distributions that rebuild RHEL's sources with its version-release numbers, so Red Hat's fixed versions apply. */
const RHEL_REBUILDS = new Set(['rhel', 'centos', 'rocky', 'almalinux'])

/**
 * The family and tracker release of a host from its os-release, or null for a distribution no tracker here
 * covers (Fedora and Oracle Linux publish their own data; Red Hat's does not speak for them).
 */
export function releaseOf (os: OsRelease): { family: DistroFamily, release: string } | null {
  const id = (os.ID ?? '').toLowerCase()
  const version = os.VERSION_ID ?? ''
  const codename = os.VERSION_CODENAME?.toLowerCase()
  if (id === 'debian' || id === 'raspbian') {
    const release = codename !== undefined && codename !== '' ? codename : DEBIAN_RELEASES[version.split('.')[0]]
    return release === undefined ? null : { family: 'debian', release }
  }
  if (id === 'ubuntu') {
    const release = codename !== undefined && codename !== '' ? codename : UBUNTU_RELEASES[/^\d+\.\d+/.exec(version)?.[0] ?? '']
    return release === undefined ? null : { family: 'ubuntu', release }
  }
  if (id === 'alpine') {
    // Edge reports the next release with a pre-release tag (3.21_alpha20240807).
    if (/_(alpha|beta|rc)/.test(version)) return { family: 'alpine', release: 'edge' }
    const m = /^(\d+\.\d+)/.exec(version)
    return m === null ? null : { family: 'alpine', release: m[1] }
  }
  if (RHEL_REBUILDS.has(id)) {
    const m = /^(\d+)/.exec(version)
    return m === null ? null : { family: 'rhel', release: m[1] }
  }
  return null
}
