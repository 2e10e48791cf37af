// What a credentialed login reads off a host, parsed: the OS (/etc/os-release), the installed packages with their
// source package and version (dpkg-query, rpm -qa, apk info -v), the running kernel and whether a reboot is
// pending. Parsers only: lib/credentialed/collect.ts runs the commands; each parser is tested on recorded output.

/** The package families a host's package list is read for. */
export type PackageFormat = 'dpkg' | 'rpm' | 'apk'

export interface OsRelease {
  /** `ID`: debian, ubuntu, rhel, rocky, almalinux, alpine … */
  id: string
  /** `ID_LIKE`, split. */
  idLike: string[]
  versionId: string | null
  /** `VERSION_CODENAME` (bookworm, jammy), or null. */
  codename: string | null
  prettyName: string | null
}

export interface InstalledPackage {
  /** Binary package name (architecture-qualified for dpkg multi-arch, e.g. libc6:i386, as dpkg names it). */
  name: string
  /** Full version: epoch:upstream-revision (dpkg), [epoch:]version-release (rpm), version-rN (apk). */
  version: string
  /** The source package it was built from (rpm: the source RPM's name; apk: the origin). */
  source: string
  /** The source package's version (dpkg can differ from the binary's: binNMUs, signed kernels). */
  sourceVersion: string
  arch?: string
}

export interface Inventory {
  os: OsRelease
  format: PackageFormat
  packages: InstalledPackage[]
  /** `uname -r`. */
  kernel: string | null
  /** Whether the host says a reboot is pending (/var/run/reboot-required), before the kernel check adds its own. */
  rebootRequired: boolean
  /** Alpine: /etc/alpine-release. */
  alpineRelease?: string
}

/** Read /etc/os-release (shell-style `KEY=value` lines, values optionally quoted). */
export function parseOsRelease (text: string): OsRelease {
  const fields = new Map<string, string>()
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const eq = line.indexOf('=')
    if (eq <= 0) continue
    let value = line.slice(eq + 1)
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'"))) value = value.slice(1, -1)
    fields.set(line.slice(0, eq), value.replace(/\\(["$`\\])/g, '$1'))
  }
  const id = (fields.get('ID') ?? 'linux').toLowerCase()
  return {
    id,
    idLike: (fields.get('ID_LIKE') ?? '').toLowerCase().split(/\s+/).filter((s) => s !== ''),
    versionId: fields.get('VERSION_ID') ?? null,
    codename: fields.get('VERSION_CODENAME') ?? fields.get('UBUNTU_CODENAME') ?? null,
    prettyName: fields.get('PRETTY_NAME') ?? null
  }
}

/** The dpkg-query format collect.ts asks for: status, binary, version, source, source version, architecture. */
export const DPKG_FORMAT = '${db:Status-Abbrev}\\t${binary:Package}\\t${Version}\\t${source:Package}\\t${source:Version}\\t${Architecture}\\n'

/** Installed packages from `dpkg-query -W -f=DPKG_FORMAT`: only those whose status is installed (`?i`). */
export function parseDpkg (text: string): InstalledPackage[] {
  const out: InstalledPackage[] = []
  for (const line of text.split('\n')) {
    if (line === '') continue
    const f = line.split('\t')
    if (f.length < 5) continue
    const status = f[0].trim()
    // Desired state first, current state second: `ii`, `hi` (held). Removed (`rc`) and half-installed ones are not running code.
    if (status[1] !== 'i') continue
    const [, name, version, source, sourceVersion, arch] = f
    if (name === '' || version === '') continue
    out.push({ name, version, source: source !== '' ? source : name.replace(/:.*$/, ''), sourceVersion: sourceVersion !== '' ? sourceVersion : version, ...(arch !== undefined && arch !== '' ? { arch } : {}) })
  }
  return out
}

/** The rpm query format collect.ts asks for: name, epoch, version, release, arch, source RPM. */
export const RPM_FORMAT = '%{NAME}\\t%{EPOCHNUM}\\t%{VERSION}\\t%{RELEASE}\\t%{ARCH}\\t%{SOURCERPM}\\n'

/** `name-version-release.src.rpm` → name (version and release hold no hyphen in rpm). */
function srpmName (srpm: string): string | null {
  const m = /^(.+)-[^-]+-[^-]+\.(?:no)?src\.rpm$/.exec(srpm)
  return m === null ? null : m[1]
}

/** Installed packages from `rpm -qa --qf RPM_FORMAT`; a version carries its epoch when it is not 0. */
export function parseRpm (text: string): InstalledPackage[] {
  const out: InstalledPackage[] = []
  for (const line of text.split('\n')) {
    if (line === '') continue
    const f = line.split('\t')
    if (f.length < 6) continue
    const [name, epochText, version, release, arch, srpm] = f
    // gpg-pubkey entries are keys in the rpm database, not software.
    if (name === '' || name === 'gpg-pubkey') continue
    const epoch = /^\d+$/.test(epochText) ? Number(epochText) : 0
    const full = `${epoch > 0 ? `${epoch}:` : ''}${version}-${release}`
    out.push({ name, version: full, source: srpmName(srpm) ?? name, sourceVersion: full, arch })
  }
  return out
}

/** Installed packages from `apk info -v` (`name-version-rN` per line); the origin is the package itself. */
export function parseApk (text: string): InstalledPackage[] {
  const out: InstalledPackage[] = []
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    // Versions start with a digit after the last hyphen-separated name part: `musl-1.2.4-r2`, `py3-six-1.16.0-r6`.
    const m = /^(.+?)-(\d[^-]*-r\d+)$/.exec(line)
    if (m === null) continue
    out.push({ name: m[1], version: m[2], source: m[1], sourceVersion: m[2] })
  }
  return out
}

/** Which package database a host keeps, from its os-release. */
export function packageFormatOf (os: OsRelease): PackageFormat | null {
  const ids = [os.id, ...os.idLike]
  if (ids.some((id) => id === 'debian' || id === 'ubuntu')) return 'dpkg'
  if (ids.some((id) => id === 'alpine')) return 'apk'
  if (ids.some((id) => ['rhel', 'fedora', 'centos', 'rocky', 'almalinux', 'ol', 'amzn', 'suse', 'sles', 'opensuse'].includes(id))) return 'rpm'
  return null
}
