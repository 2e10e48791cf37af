// Host tags: short tokens a user (or a scan) puts on hosts to group them, e.g. `prod`, `dmz`, `team:web`.
// One rule for every place a tag is read (request bodies, filters, the CLI), kept here so they agree.
import { TagError } from './errors'

/** A tag: lower-case letters, digits and `.`, `_`, `:`, `-`, starting with a letter or digit, 1 to 63 characters. */
export const TAG_PATTERN = '^[a-z0-9][a-z0-9._:-]{0,62}$'
const TAG_RE = new RegExp(TAG_PATTERN)
export const TAG_MAX_LENGTH = 63
/** Most tags one host carries, and most one request names. */
export const MAX_TAGS = 32

export function isTag (value: string): boolean {
  return TAG_RE.test(value)
}

/** The first value of `tags` that is not a tag, or undefined. */
export function invalidTag (tags: readonly string[]): string | undefined {
  return tags.find((t) => !isTag(t))
}

/**
 * A tag set as hosts keep it: each tag once, in code-unit order, so that the same set always has the same JSON
 * (the stores tell a changed host record from an unchanged one by comparing them).
 */
export function tagSet (tags: Iterable<string>): string[] {
  return [...new Set(tags)].sort((a, b) => a < b ? -1 : a > b ? 1 : 0)
}

/**
 * The tags a scan adds to a host that has `current`: added while the host has room (MAX_TAGS), never replacing
 * a tag it has. Tags beyond the bound are left out rather than failing the scan's write.
 */
export function withScanTags (current: readonly string[], added: readonly string[]): string[] {
  const out = new Set(current)
  for (const t of tagSet(added)) {
    if (out.size >= MAX_TAGS) break
    out.add(t)
  }
  return tagSet(out)
}

/** Why a host cannot carry these tags (as a sentence naming the field), or null. */
export function tagSetProblem (field: string, tags: readonly string[]): string | null {
  const bad = invalidTag(tags)
  if (bad !== undefined) return `${field}: ${JSON.stringify(bad.slice(0, 80))} is not a tag (lower-case letters, digits, '.', '_', ':' or '-', at most ${TAG_MAX_LENGTH} characters, starting with a letter or digit)`
  const n = new Set(tags).size
  if (n > MAX_TAGS) return `${field}: a host carries at most ${MAX_TAGS} tags; this would give it ${n}`
  return null
}

/** `current` with `add` added and `remove` removed; a TagError (400) when the host would carry more than MAX_TAGS. */
export function editedTags (current: readonly string[], add: readonly string[], remove: readonly string[] = []): string[] {
  const out = new Set(current)
  for (const t of remove) out.delete(t)
  for (const t of add) out.add(t)
  if (out.size > MAX_TAGS) throw new TagError(`tags: a host carries at most ${MAX_TAGS} tags; this would give it ${out.size}`)
  return tagSet(out)
}
