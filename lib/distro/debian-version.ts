// Debian package version comparison (Debian Policy 5.6.12): `[epoch:]upstream[-revision]`.
// Written here rather than taken from npm: the one package that does it has a single release and
// a few hundred users; the algorithm is short and the tests check it against dpkg itself.

export interface DebianVersion {
  epoch: number
  upstream: string
  /** Empty for a native package (no hyphen). */
  revision: string
}

const EPOCH = /^(\d+):/

/** Split a version into epoch, upstream version and revision; throws on an empty or malformed one. */
export function parseDebianVersion (version: string): DebianVersion {
  const v = version.trim()
  if (!v) throw new Error('empty Debian version')
  let rest = v
  let epoch = 0
  const e = EPOCH.exec(rest)
  if (e) {
    epoch = Number(e[1])
    rest = rest.slice(e[0].length)
  } else if (rest.includes(':') && !/^\d/.test(rest)) {
    throw new Error(`malformed Debian version: ${version}`)
  }
  const dash = rest.lastIndexOf('-')
  const upstream = dash >= 0 ? rest.slice(0, dash) : rest
  const revision = dash >= 0 ? rest.slice(dash + 1) : ''
  if (!upstream || !/^\d/.test(upstream)) throw new Error(`malformed Debian version: ${version}`)
  if (!/^[A-Za-z0-9.+~:-]+$/.test(upstream) || !/^[A-Za-z0-9.+~]*$/.test(revision)) {
    throw new Error(`malformed Debian version: ${version}`)
  }
  return { epoch, upstream, revision }
}

/** Sort weight of one character in a non-digit run: `~` below the end of the string, letters below the rest. */
function order (c: string | undefined): number {
  if (c === undefined) return 0
  if (c === '~') return -1
  const code = c.charCodeAt(0)
  if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122)) return code
  return code + 256
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9'

/** dpkg's verrevcmp: alternate non-digit runs (compared by `order`) and digit runs (compared as numbers). */
function compareFragment (a: string, b: string): number {
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) {
    while ((i < a.length && !isDigit(a[i])) || (j < b.length && !isDigit(b[j]))) {
      const ac = i < a.length && !isDigit(a[i]) ? order(a[i]) : 0
      const bc = j < b.length && !isDigit(b[j]) ? order(b[j]) : 0
      if (ac !== bc) return ac < bc ? -1 : 1
      i++
      j++
    }
    while (a[i] === '0') i++
    while (b[j] === '0') j++
    let diff = 0
    while (isDigit(a[i]) && isDigit(b[j])) {
      if (diff === 0) diff = a.charCodeAt(i) - b.charCodeAt(j)
      i++
      j++
    }
    if (isDigit(a[i])) return 1
    if (isDigit(b[j])) return -1
    if (diff !== 0) return diff < 0 ? -1 : 1
  }
  return 0
}

/** -1, 0 or 1 as `a` sorts before, equal to or after `b` by Debian's rules. */
export function compareDebianVersions (a: string | DebianVersion, b: string | DebianVersion): number {
  const va = typeof a === 'string' ? parseDebianVersion(a) : a
  const vb = typeof b === 'string' ? parseDebianVersion(b) : b
  if (va.epoch !== vb.epoch) return va.epoch < vb.epoch ? -1 : 1
  return compareFragment(va.upstream, vb.upstream) || compareFragment(va.revision, vb.revision)
}

/** Whether `version` parses as a Debian version. */
export function isDebianVersion (version: string): boolean {
  try {
    parseDebianVersion(version)
    return true
  } catch {
    return false
  }
}
