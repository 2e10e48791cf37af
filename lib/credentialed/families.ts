// The seam between a host's package list and the distribution data that decides it: per family, how to name the
// host's release in the tracker, how to order its versions, and how to read the tracker's entries for one source
// package. The version orders and the trackers are the shared distribution layer's (lib/distro/families.ts); what is
// added here is what a package list needs: which hosts a family reads, the release a host names, the kernel rule and
// which fixes count as updates of the release.
import { compareVersions, isVersion, readTrackerEntries, releaseOf, trackerImportedAt, type DistroFamily, type TrackerEntry } from '../distro/families'
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
  /** The distribution family whose tracker decides (lib/distro/families.ts). */
  family: DistroFamily
  format: PackageFormat
  /** The tracker's name, for evidence. */
  tracker: string
  /** Which hosts it reads: os-release ID (or ID_LIKE) values. */
  osIds: string[]
  /** The tracker's release name of a host, or null when the host does not say it. */
  release(os: OsRelease, inventory: Inventory): string | null
  compare(a: string, b: string): number
  isVersion(v: string): boolean
  readEntries(store: SourceStore, release: string, source: string): Promise<Map<string, TrackerEntry> | null>
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

/** The tracker release of a host as the shared layer names it (codename, Alpine's major.minor, RHEL's major). */
function trackerRelease (os: OsRelease, inventory: Inventory): string | null {
  const version = os.id === 'alpine' && inventory.alpineRelease !== undefined ? inventory.alpineRelease : os.versionId
  return releaseOf({ ID: os.id, ID_LIKE: os.idLike.join(' '), ...(version !== null ? { VERSION_ID: version } : {}), ...(os.codename !== null ? { VERSION_CODENAME: os.codename } : {}) })?.release ?? null
}

function family (family: DistroFamily, format: PackageFormat, tracker: string, osIds: string[], releaseUpdate: PackageFamily['releaseUpdate'], kernel?: KernelRule): PackageFamily {
  return {
    family,
    format,
    tracker,
    osIds,
    release: trackerRelease,
    compare: (a, b) => compareVersions(family, a, b),
    isVersion: (v) => isVersion(family, v),
    readEntries: async (store, release, source) => await readTrackerEntries(store, { family, release, sourcePackage: source }),
    importedAt: async (store) => await trackerImportedAt(store, family),
    releaseUpdate,
    ...(kernel !== undefined ? { kernel } : {})
  }
}

export const PACKAGE_FAMILIES: PackageFamily[] = [
  family('debian', 'dpkg', 'Debian security tracker', ['debian'], (fixed, os) => {
    const n = os.versionId?.split('.')[0]
    return n !== undefined && new RegExp(`(?:deb|bpo)${n}(?:u\\d+|\\+\\d+|$)`).test(fixed)
  }, debianKernel),
  family('ubuntu', 'dpkg', 'Ubuntu OSV', ['ubuntu'], (fixed, os) => os.versionId !== null && fixed.includes(os.versionId), debianKernel),
  // secdb's versions (`1.2.4-r3`) do not say whether a fix came before the branch was cut or after: none is called
  // an update, so an Alpine host shows what is open, never a wall of fixes it was built with.
  family('alpine', 'apk', 'Alpine secdb', ['alpine'], () => false),
  // An errata build of a minor release (`.el9_2`) came after the release; a plain `.el9` build may be its first one.
  family('rhel', 'rpm', 'Red Hat security data (OSV)', ['rhel', 'centos', 'rocky', 'almalinux'], (fixed, os) => {
    const n = os.versionId?.split('.')[0]
    return n !== undefined && new RegExp(`\\.el${n}_\\d`).test(fixed)
  })
]

/** The family whose tracker decides a host's packages: its os-release ID first, then ID_LIKE. */
export function packageFamilyOf (os: OsRelease, families: readonly PackageFamily[] = PACKAGE_FAMILIES): PackageFamily | null {
  for (const id of [os.id, ...os.idLike]) {
    const f = families.find((x) => x.osIds.includes(id))
    if (f !== undefined) return f
  }
  return null
}
