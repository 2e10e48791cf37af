// The distribution families whose security data decides package versions, and the version order each
// family's packages follow. A leaf: the comparators only, no tracker; lib/distro/families.ts puts the
// trackers beside them for callers.

import { compareApkVersions, isApkVersion } from './apk-version'
import { compareDebianVersions, isDebianVersion } from './debian-version'
import { compareRpmVersions, isRpmVersion } from './rpm-version'

/** `rhel` stands for Red Hat Enterprise Linux and the rebuilds that follow its package versions. */
export const DISTRO_FAMILIES = ['debian', 'ubuntu', 'alpine', 'rhel'] as const
export type DistroFamily = typeof DISTRO_FAMILIES[number]

export interface VersionOrder {
  /** The package format's scheme: dpkg (Debian Policy 5.6.12), rpm (rpmvercmp), apk (apk-tools). */
  scheme: 'dpkg' | 'rpm' | 'apk'
  /** -1, 0 or 1; throws on a version the scheme cannot read (check with isVersion first). */
  compare: (a: string, b: string) => number
  isVersion: (v: string) => boolean
}

const DPKG: VersionOrder = { scheme: 'dpkg', compare: compareDebianVersions, isVersion: isDebianVersion }
const RPM: VersionOrder = { scheme: 'rpm', compare: compareRpmVersions, isVersion: isRpmVersion }
const APK: VersionOrder = { scheme: 'apk', compare: compareApkVersions, isVersion: isApkVersion }

export const FAMILY_INFO: Record<DistroFamily, { title: string, versions: VersionOrder }> = {
  debian: { title: 'Debian', versions: DPKG },
  ubuntu: { title: 'Ubuntu', versions: DPKG },
  alpine: { title: 'Alpine', versions: APK },
  rhel: { title: 'Red Hat Enterprise Linux', versions: RPM }
}

export function isDistroFamily (s: string): s is DistroFamily {
  return (DISTRO_FAMILIES as readonly string[]).includes(s)
}
