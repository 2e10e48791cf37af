// The seam between a host's package list and the distribution data that decides it: per family, how to name the
// host's release in the tracker, how to order its versions, and how to read the tracker's entries for one source
// package. Debian and Ubuntu are here; Alpine (secdb) and Red Hat (CSAF/OSV) plug in as two more entries once their
// importers and comparators exist (lib/distro/families.ts), with no change to the matcher.
import { compareDebianVersions, isDebianVersion } from '../distro/debian-version'
import { readDistroEntries, readImportMeta, type DistroCveEntry } from '../distro/entries'
import type { DistroFamily } from '../distro/package'
import type { SourceStore } from '../sources/source-store'
import type { InstalledPackage, Inventory, OsRelease, PackageFormat } from './inventory'

export interface KernelRule {
  /** Whether a binary package is an image of one installed kernel (not a meta package). */
  isImage(name: string): boolean
  /** The binary package of the running kernel (`uname -r`). */
  imageOf(release: string): string
  /** The tracker's source package for a kernel image package, and the version to judge it by. */
  source(pkg: InstalledPackage): { source: string, version: string }
}

export interface PackageFamily {
  /** The tracker table the family's entries live in (lib/distro/entries.ts). */
  family: string
  format: PackageFormat
  /** The tracker's name, for evidence. */
  tracker: string
  /** Which hosts it reads: os-release ID (or ID_LIKE) values. */
  osIds: string[]
  /** The tracker's release name of a host, or null when the host does not say it. */
  release(os: OsRelease, inventory: Inventory): string | null
  compare(a: string, b: string): number
  isVersion(v: string): boolean
  readEntries(store: SourceStore, release: string, source: string): Promise<Map<string, DistroCveEntry> | null>
  /** When the tracker data was imported, or null. */
  importedAt(store: SourceStore): Promise<string | null>
  /**
   * Whether a fixed version is an update the release shipped after it came out (Debian `+deb12u3`, Ubuntu
   * `ubuntu0.22.04.1`): only such fixes are worth a `fixed_by_distribution` finding, since a fix older than the
   * release never reached a host of it unfixed.
   */
  releaseUpdate(fixedVersion: string, os: OsRelease): boolean
  kernel?: KernelRule
}

const debianKernel: KernelRule = {
  isImage: (name) => /^linux-image-\d/.test(name) && !name.endsWith('-dbg'),
  imageOf: (release) => `linux-image-${release}`,
  // Signed images come from linux-signed-<arch> (Debian) or linux-signed[-flavour] (Ubuntu), whose versions are not the
  // kernel's: the tracker lists kernel CVEs under linux[-flavour] at the image's own version.
  source: (pkg) => {
    const m = /^linux-signed(?:-(amd64|arm64|i386|armhf|ppc64el|s390x))?(-.+)?$/.exec(pkg.source)
    if (m === null) return { source: pkg.source, version: pkg.sourceVersion }
    return { source: `linux${m[1] === undefined ? (m[2] ?? '') : ''}`, version: pkg.version }
  }
}

function dpkgFamily (family: DistroFamily, tracker: string, releaseUpdate: PackageFamily['releaseUpdate']): PackageFamily {
  return {
    family,
    format: 'dpkg',
    tracker,
    osIds: [family],
    release: (os) => os.codename,
    compare: (a, b) => compareDebianVersions(a, b),
    isVersion: isDebianVersion,
    readEntries: async (store, release, source) => await readDistroEntries(store, { family, release, source }),
    importedAt: async (store) => (await readImportMeta(store, family))?.importedAt ?? null,
    releaseUpdate,
    kernel: debianKernel
  }
}

export const PACKAGE_FAMILIES: PackageFamily[] = [
  dpkgFamily('debian', 'Debian security tracker', (fixed, os) => {
    const n = os.versionId?.split('.')[0]
    return n !== undefined && new RegExp(`(?:deb|bpo)${n}(?:u\\d+|\\+\\d+|$)`).test(fixed)
  }),
  dpkgFamily('ubuntu', 'Ubuntu OSV', (fixed, os) => os.versionId !== null && fixed.includes(os.versionId))
]

/** The family whose tracker decides a host's packages: its os-release ID first, then ID_LIKE. */
export function packageFamilyOf (os: OsRelease, families: readonly PackageFamily[] = PACKAGE_FAMILIES): PackageFamily | null {
  for (const id of [os.id, ...os.idLike]) {
    const f = families.find((x) => x.osIds.includes(id))
    if (f !== undefined) return f
  }
  return null
}
