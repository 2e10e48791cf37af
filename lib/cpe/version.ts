// Version comparison for matching detected versions against NVD ranges. It runs in the match hot
// path, so a version string is compiled once into a flat numeric key and keys compare without
// re-parsing.

/**
 * Token classes, ordered so that at one position a pre-release sorts below the end of the
 * version, a patch level above it, and a further numeric segment above both
 * (1.3.5rc3 < 1.3.5 < 1.3.5p1 < 1.3.5.1).
 */
const PRE = 0
const END = 1
const POST = 2
const NUM = 3

const PRE_WORDS: Record<string, number> = {
  dev: 0, snapshot: 0, nightly: 0, alpha: 1, a: 1, beta: 2, b: 2, m: 2, milestone: 2, pre: 3, preview: 3, c: 4, rc: 4, cr: 4
}
/** Words that name the release itself and so add nothing to the order. */
const NEUTRAL_WORDS = new Set(['final', 'ga', 'release', 'stable', 'v'])
/** Patch-level words that mean the same thing are folded onto one value. */
const POST_ALIASES: Record<string, string> = { patch: 'p', pl: 'p', post: 'p' }

export interface VersionKey {
  /** Flat (class, value) pairs of the upstream version. */
  readonly up: readonly number[]
  readonly epoch: number
  /** Flat (class, value) pairs of the distribution revision, empty when none. */
  readonly distro: readonly number[]
}

export interface DistroSplit {
  upstream: string
  /** Distribution revision after the upstream version (Debian `-2+deb12u3`, Ubuntu `-3ubuntu0.4`). */
  distro?: string
  /** Debian epoch (`1:` in `1:9.2p1-2`). */
  epoch?: string
}

const PRE_TAG = /^(alpha|beta|rc|pre|preview|dev|snapshot|nightly|a|b|m|cr)\d*([.\-_]|$)/i

/**
 * Separate a packaged version into the upstream version and the distribution's revision, so
 * that `9.2p1-2+deb12u3` is compared as 9.2p1. A hyphen followed by a pre-release tag
 * (`1.3.5-rc1`) stays part of the upstream version.
 */
export function splitDistroVersion (v: string): DistroSplit {
  let s = v.trim()
  let epoch: string | undefined
  const em = /^(\d+):(?=\d)/.exec(s)
  if (em) {
    epoch = em[1]
    s = s.slice(em[0].length)
  }
  let cut = -1
  for (let i = s.indexOf('-'); i !== -1; i = s.indexOf('-', i + 1)) {
    const rest = s.slice(i + 1)
    if (rest === '' || PRE_TAG.test(rest)) continue
    if (/^\d/.test(rest) || /^[a-z]*\d/i.test(rest)) {
      cut = i
      break
    }
  }
  const out: DistroSplit = { upstream: cut === -1 ? s : s.slice(0, cut) }
  if (cut !== -1) out.distro = s.slice(cut + 1)
  if (epoch !== undefined) out.epoch = epoch
  return out
}

/** Fold a lower-case word into a number that keeps alphabetical order for its first 6 letters. */
function wordValue (w: string): number {
  let n = 0
  for (let i = 0; i < 6; i++) {
    n = n * 27 + (i < w.length ? w.charCodeAt(i) - 96 : 0)
  }
  return n
}

function tokenize (s: string, out: number[], debianTilde: boolean): void {
  const str = s.toLowerCase()
  let i = 0
  const n = str.length
  while (i < n) {
    const c = str.charCodeAt(i)
    if (c >= 48 && c <= 57) {
      let j = i
      let val = 0
      while (j < n) {
        const d = str.charCodeAt(j)
        if (d < 48 || d > 57) break
        val = val * 10 + (d - 48)
        j++
      }
      out.push(NUM, val)
      i = j
    } else if (c >= 97 && c <= 122) {
      let j = i
      while (j < n) {
        const d = str.charCodeAt(j)
        if (d < 97 || d > 122) break
        j++
      }
      const word = str.slice(i, j)
      const followedByDigit = j < n && str.charCodeAt(j) >= 48 && str.charCodeAt(j) <= 57
      const atStart = out.length === 0
      i = j
      if (NEUTRAL_WORDS.has(word)) continue
      // A lone letter right after a number with nothing numeric after it is a patch letter
      // (OpenSSL 1.0.1g), not an alpha or beta marker.
      const loneLetter = word.length === 1 && !followedByDigit
      const pre = PRE_WORDS[word]
      if (pre !== undefined && !loneLetter && !(atStart && word.length === 1)) {
        out.push(PRE, pre + 1)
      } else {
        out.push(POST, wordValue(POST_ALIASES[word] ?? word))
      }
    } else {
      if (c === 126 && debianTilde) out.push(PRE, 0)
      i++
    }
  }
}

const cache = new Map<string, VersionKey>()
const CACHE_MAX = 50_000

/** Compile a version string into a key for compareKeys. Results are memoized (bounded). */
export function versionKey (v: string): VersionKey {
  const hit = cache.get(v)
  if (hit !== undefined) return hit
  let s = v.trim()
  if (/^v\d/i.test(s)) s = s.slice(1)
  const split = splitDistroVersion(s)
  const up: number[] = []
  tokenize(split.upstream, up, false)
  const distro: number[] = []
  if (split.distro !== undefined) tokenize(split.distro, distro, true)
  const key: VersionKey = { up, epoch: split.epoch !== undefined ? Number(split.epoch) : 0, distro }
  if (cache.size >= CACHE_MAX) cache.clear()
  cache.set(v, key)
  return key
}

function compareTokens (a: readonly number[], b: readonly number[]): number {
  const la = a.length
  const lb = b.length
  const n = la > lb ? la : lb
  for (let i = 0; i < n; i += 2) {
    const ca = i < la ? a[i] : END
    const cb = i < lb ? b[i] : END
    const va = i < la ? a[i + 1] : 0
    const vb = i < lb ? b[i + 1] : 0
    if (ca === cb) {
      if (va !== vb) return va < vb ? -1 : 1
      continue
    }
    // A missing segment equals a zero segment: 7.0 = 7.0.0.
    if (ca === END && cb === NUM && vb === 0) continue
    if (cb === END && ca === NUM && va === 0) continue
    return ca < cb ? -1 : 1
  }
  return 0
}

/**
 * Compare compiled keys: upstream version first; the epoch and the distribution revision only
 * break ties, because NVD ranges speak of upstream versions.
 */
export function compareKeys (a: VersionKey, b: VersionKey): number {
  const c = compareTokens(a.up, b.up)
  if (c !== 0) return c
  if (a.epoch !== b.epoch) return a.epoch < b.epoch ? -1 : 1
  if (a.distro.length === 0 && b.distro.length === 0) return 0
  return compareTokens(a.distro, b.distro)
}

/** Negative when a < b, 0 when equal, positive when a > b. */
export function compareVersions (a: string, b: string): number {
  return compareKeys(versionKey(a), versionKey(b))
}
