// Alpine package version order (apk-tools): `digits{.digits}{letter}{_suffix{digits}}…{-r<n>}`, the
// Gentoo-style scheme. apk-tools' own test/version.data is the reference (test/lib/distro/apk-version.test.ts
// runs every line of it).
//
// A version is read as a run of tokens, each compared with the other version's token at the same place:
//   - numbers: the first numerically; after a dot, a component with leading zeros is a fraction (1.02 < 1.1,
//     the zeros counting as a negative weight), otherwise numerically;
//   - one letter straight after a number (1.0b);
//   - suffixes after `_`: _alpha < _beta < _pre < _rc < (none) < _cvs < _svn < _git < _hg < _p, each with an
//     optional number;
//   - the package revision `-rN`.
// When one version runs out first, the longer one is newer unless what it has left is a pre-release
// suffix (1.1_alpha1 < 1.1 < 1.1_p1, 1.1 < 1.1-r1). A version that stops parsing compares up to where it
// stopped, as apk does.

enum T { Invalid = -1, DigitOrZero, Digit, Letter, Suffix, SuffixNo, RevisionNo, End }

const PRE_SUFFIXES = ['alpha', 'beta', 'pre', 'rc']
const POST_SUFFIXES = ['cvs', 'svn', 'git', 'hg', 'p']

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9'
const isLower = (c: string | undefined): boolean => c !== undefined && c >= 'a' && c <= 'z'

/** A reader over one version string: the token type it expects next and its position. */
class Reader {
  type: T = T.Digit
  pos = 0
  constructor (readonly s: string) {}

  private get rest (): number { return this.s.length - this.pos }

  /** Decide the type of the next token from the separator or character that starts it. */
  private next (): void {
    const c = this.s[this.pos]
    let n: T = T.Invalid
    if (this.rest <= 0) {
      n = T.End
    } else if ((this.type === T.Digit || this.type === T.DigitOrZero) && isLower(c)) {
      n = T.Letter
    } else if (this.type === T.Letter && isDigit(c)) {
      n = T.Digit
    } else if (this.type === T.Suffix && isDigit(c)) {
      n = T.SuffixNo
    } else {
      if (c === '.') n = T.DigitOrZero
      else if (c === '_') n = T.Suffix
      else if (c === '-' && this.s[this.pos + 1] === 'r') {
        n = T.RevisionNo
        this.pos++
      }
      this.pos++
    }
    // Tokens only move forward through the scheme, with these three ways back.
    if (n < this.type && !((n === T.DigitOrZero && this.type === T.Digit) ||
      (n === T.Suffix && this.type === T.SuffixNo) || (n === T.Digit && this.type === T.Letter))) {
      n = T.Invalid
    }
    this.type = n
  }

  /** The value of the token at the current position, and move past it. Numbers stay exact (BigInt): dates make long ones. */
  token (): bigint {
    if (this.rest <= 0) {
      this.type = T.End
      return 0n
    }
    let v = 0n
    let i = this.pos
    let then: T = T.Invalid
    const leadingZero = this.type === T.DigitOrZero && this.s[i] === '0'
    switch (leadingZero ? T.DigitOrZero : this.type === T.DigitOrZero ? T.Digit : this.type) {
      case T.DigitOrZero:
        // After a dot, leading zeros make a fraction: each zero weighs -1, and the digits after follow as a number.
        while (i < this.s.length && this.s[i] === '0') i++
        v = -BigInt(i - this.pos)
        then = T.Digit
        break
      case T.Digit:
      case T.SuffixNo:
      case T.RevisionNo: {
        const start = i
        while (isDigit(this.s[i])) i++
        v = i > start ? BigInt(this.s.slice(start, i)) : 0n
        break
      }
      case T.Letter:
        v = BigInt(this.s.charCodeAt(i))
        i++
        break
      case T.Suffix: {
        const rest = this.s.slice(i)
        const pre = PRE_SUFFIXES.findIndex((x) => rest.startsWith(x))
        if (pre >= 0) {
          v = BigInt(pre - PRE_SUFFIXES.length)
          i += PRE_SUFFIXES[pre].length
          break
        }
        const post = POST_SUFFIXES.findIndex((x) => rest.startsWith(x))
        if (post >= 0) {
          v = BigInt(post)
          i += POST_SUFFIXES[post].length
          break
        }
        this.type = T.Invalid
        return -1n
      }
      default:
        this.type = T.Invalid
        return -1n
    }
    this.pos = i
    if (this.rest <= 0) this.type = T.End
    else if (then !== T.Invalid) this.type = then
    else this.next()
    return v
  }
}

/** -1, 0 or 1 as `a` sorts before, equal to or after `b` by apk's rules. */
export function compareApkVersions (a: string, b: string): number {
  const ra = new Reader(a.trim())
  const rb = new Reader(b.trim())
  let av = 0n
  let bv = 0n
  while (ra.type === rb.type && ra.type !== T.End && ra.type !== T.Invalid && av === bv) {
    av = ra.token()
    bv = rb.token()
  }
  if (av !== bv) return av < bv ? -1 : 1
  if (ra.type === rb.type) return 0
  // Equal so far and one goes on: it is newer, unless what follows is a pre-release suffix.
  if (ra.type === T.Suffix && ra.token() < 0n) return -1
  if (rb.type === T.Suffix && rb.token() < 0n) return 1
  if (ra.type > rb.type) return -1
  if (rb.type > ra.type) return 1
  return 0
}

/** Whether `version` reads to its end by apk's scheme. */
export function isApkVersion (version: string): boolean {
  const r = new Reader(version.trim())
  if (r.s === '' || !isDigit(r.s[0])) return false
  while (r.type !== T.End && r.type !== T.Invalid) r.token()
  return r.type === T.End
}
