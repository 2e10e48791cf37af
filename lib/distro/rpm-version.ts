// RPM package version order: `[epoch:]version[-release]`, each part compared with rpmvercmp's rules
// (rpm's own tests/rpmvercmp.at is the reference; test/lib/distro/rpm-version.test.ts runs its examples
// and, where the machine has rpm, checks generated pairs against `rpm.vercmp`).
//
// rpmvercmp walks both strings in segments: separators (anything but ASCII letters and digits, `~` and
// `^`) are skipped and carry no weight; `~` sorts before everything, even the end of the string
// (1.0~rc1 < 1.0); `^` sorts after the end of the string but before any other segment (1.0 < 1.0^git1 <
// 1.0.1); a digit run beats a letter run; digit runs compare as numbers, letter runs as bytes; when
// every segment matched, the string with something left over is newer.

export interface RpmVersion {
  epoch: number
  version: string
  /** Empty when the string names no release. */
  release: string
}

/** Split `[epoch:]version[-release]`; throws on an empty string or a non-numeric epoch. */
export function parseRpmVersion (evr: string): RpmVersion {
  const s = evr.trim()
  if (s === '') throw new Error('empty RPM version')
  let rest = s
  let epoch = 0
  const colon = rest.indexOf(':')
  if (colon >= 0) {
    const e = rest.slice(0, colon)
    if (!/^\d+$/.test(e)) throw new Error(`malformed RPM version: ${evr}`)
    epoch = Number(e)
    rest = rest.slice(colon + 1)
  }
  const dash = rest.lastIndexOf('-')
  const version = dash >= 0 ? rest.slice(0, dash) : rest
  const release = dash >= 0 ? rest.slice(dash + 1) : ''
  if (version === '') throw new Error(`malformed RPM version: ${evr}`)
  return { epoch, version, release }
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57
const isAlpha = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
const TILDE = 126
const CARET = 94

/** -1, 0 or 1 as `a` sorts before, equal to or after `b` by rpmvercmp (one version or one release string). */
export function rpmvercmp (a: string, b: string): number {
  if (a === b) return 0
  let i = 0
  let j = 0
  const at = (s: string, k: number): number => (k < s.length ? s.charCodeAt(k) : 0)
  while (i < a.length || j < b.length) {
    while (i < a.length && !isDigit(at(a, i)) && !isAlpha(at(a, i)) && at(a, i) !== TILDE && at(a, i) !== CARET) i++
    while (j < b.length && !isDigit(at(b, j)) && !isAlpha(at(b, j)) && at(b, j) !== TILDE && at(b, j) !== CARET) j++
    const ca = at(a, i)
    const cb = at(b, j)
    if (ca === TILDE || cb === TILDE) {
      if (ca !== TILDE) return 1
      if (cb !== TILDE) return -1
      i++
      j++
      continue
    }
    if (ca === CARET || cb === CARET) {
      if (i >= a.length) return -1
      if (j >= b.length) return 1
      if (ca !== CARET) return 1
      if (cb !== CARET) return -1
      i++
      j++
      continue
    }
    if (i >= a.length || j >= b.length) break
    const numeric = isDigit(ca)
    const take = numeric ? isDigit : isAlpha
    const si = i
    const sj = j
    while (i < a.length && take(at(a, i))) i++
    while (j < b.length && take(at(b, j))) j++
    let x = a.slice(si, i)
    let y = b.slice(sj, j)
    // The segment types differ (digits against letters): digits are newer.
    if (y === '') return numeric ? 1 : -1
    if (numeric) {
      x = x.replace(/^0+/, '')
      y = y.replace(/^0+/, '')
      if (x.length !== y.length) return x.length < y.length ? -1 : 1
    }
    if (x !== y) return x < y ? -1 : 1
  }
  if (i >= a.length && j >= b.length) return 0
  return i >= a.length ? -1 : 1
}

/** -1, 0 or 1 as `a` sorts before, equal to or after `b`: epoch, then version, then release. */
export function compareRpmVersions (a: string | RpmVersion, b: string | RpmVersion): number {
  const va = typeof a === 'string' ? parseRpmVersion(a) : a
  const vb = typeof b === 'string' ? parseRpmVersion(b) : b
  if (va.epoch !== vb.epoch) return va.epoch < vb.epoch ? -1 : 1
  return rpmvercmp(va.version, vb.version) || rpmvercmp(va.release, vb.release)
}

/** Whether `version` parses as an RPM `[epoch:]version[-release]`. */
export function isRpmVersion (version: string): boolean {
  try {
    parseRpmVersion(version)
    return true
  } catch {
    return false
  }
}
