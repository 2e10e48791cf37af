// A streaming splitter for the one array of a feed file that matters (`vulnerabilities`): it
// scans bytes only to find where each element starts and ends (strings, escapes and nesting),
// then hands each element to JSON.parse. A token-by-token JSON parser written in JavaScript
// reads about 25 MB/s here; this reads several hundred, and a full NVD feed is about 2 GB of
// JSON. Memory stays bounded by the largest single element, which is capped.

const QUOTE = 0x22
const BACKSLASH = 0x5c
const LBRACE = 0x7b
const RBRACE = 0x7d
const LBRACKET = 0x5b
const RBRACKET = 0x5d
const COLON = 0x3a

export interface SplitOptions {
  /** Key of the top-level array to stream. */
  key: string
  /** Largest element accepted, in bytes (a guard against a hostile or corrupt file). */
  maxElementBytes?: number
}

export class FeedSplitError extends Error {}

/**
 * Yield each element of the top-level `key` array of a JSON document, parsed. Elements must be
 * objects or arrays (NVD feed items are objects). Everything outside that array is skipped
 * unparsed, and nothing after the array is read into memory.
 */
export async function * splitArray (source: AsyncIterable<Buffer | string>, opts: SplitOptions): AsyncGenerator<unknown> {
  const max = opts.maxElementBytes ?? 64 * 1024 * 1024
  const wanted = Buffer.from(JSON.stringify(opts.key))
  let depth = 0
  let inString = false
  let escaped = false
  /** Depth of the wanted array once found, -1 while still looking. */
  let arrayDepth = -1
  let done = false
  // Bytes of the most recent string at depth 1, to recognise the key (only its first bytes matter).
  let keyBuf: number[] = []
  let keyCandidate = false
  let awaitingValueOfWanted = false
  let stringAtDepth1 = false
  let parts: Buffer[] = []
  let partBytes = 0
  let elementStart = -1
  let sawDocument = false

  for await (const chunk of source) {
    if (done) continue
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    const n = buf.length
    let i = 0
    // Next backslash at or after i, kept so that strings without escapes do not rescan the chunk.
    let nextBackslash = buf.indexOf(BACKSLASH)
    elementStart = elementStart === -2 ? 0 : elementStart
    while (i < n) {
      if (inString) {
        if (escaped) {
          escaped = false
          if (stringAtDepth1 && keyBuf.length <= wanted.length) keyBuf.push(buf[i])
          i++
          continue
        }
        const q = buf.indexOf(QUOTE, i)
        if (nextBackslash !== -1 && nextBackslash < i) nextBackslash = buf.indexOf(BACKSLASH, i)
        const b = nextBackslash
        if (b !== -1 && (q === -1 || b < q)) {
          if (stringAtDepth1) for (let k = i; k <= b && keyBuf.length <= wanted.length; k++) keyBuf.push(buf[k])
          escaped = true
          i = b + 1
          continue
        }
        if (q === -1) {
          if (stringAtDepth1) for (let k = i; k < n && keyBuf.length <= wanted.length; k++) keyBuf.push(buf[k])
          i = n
          continue
        }
        if (stringAtDepth1) {
          for (let k = i; k <= q && keyBuf.length <= wanted.length; k++) keyBuf.push(buf[k])
          keyCandidate = keyBuf.length === wanted.length && Buffer.from(keyBuf).equals(wanted)
          stringAtDepth1 = false
        }
        inString = false
        i = q + 1
        continue
      }
      const c = buf[i]
      if (c === QUOTE) {
        inString = true
        if (depth === 1 && arrayDepth === -1) {
          stringAtDepth1 = true
          keyBuf = [QUOTE]
        }
      } else if (c === COLON) {
        if (depth === 1 && arrayDepth === -1) awaitingValueOfWanted = keyCandidate
        keyCandidate = false
      } else if (c === LBRACE || c === LBRACKET) {
        sawDocument = true
        if (depth === 1 && awaitingValueOfWanted && arrayDepth === -1) {
          if (c !== LBRACKET) throw new FeedSplitError(`"${opts.key}" is not an array`)
          arrayDepth = depth + 1
        } else if (arrayDepth !== -1 && depth === arrayDepth) {
          elementStart = i
        }
        awaitingValueOfWanted = false
        depth++
      } else if (c === RBRACE || c === RBRACKET) {
        depth--
        if (depth < 0) throw new FeedSplitError('unbalanced JSON: too many closing brackets')
        if (arrayDepth !== -1 && depth === arrayDepth) {
          const start = elementStart >= 0 ? elementStart : 0
          const piece = buf.subarray(start, i + 1)
          const whole = parts.length === 0 ? piece : Buffer.concat([...parts, piece])
          parts = []
          partBytes = 0
          elementStart = -1
          if (whole.length > max) throw new FeedSplitError(`an element is larger than ${max} bytes`)
          let value: unknown
          try {
            value = JSON.parse(whole.toString('utf8'))
          } catch (err) {
            throw new FeedSplitError(`malformed element: ${(err as Error).message}`)
          }
          yield value
        } else if (arrayDepth !== -1 && depth === arrayDepth - 1) {
          done = true
          break
        }
      } else if (depth === 1 && arrayDepth === -1 && c > 0x20 && c !== 0x2c) {
        // A scalar value at depth 1 (a number, true, false, null) is never the wanted array.
        awaitingValueOfWanted = false
      }
      i++
    }
    if (!done && elementStart !== -1) {
      // The current element continues in the next chunk: keep its bytes so far.
      const piece = buf.subarray(elementStart >= 0 ? elementStart : 0)
      partBytes += piece.length
      if (partBytes > max) throw new FeedSplitError(`an element is larger than ${max} bytes`)
      parts.push(Buffer.from(piece))
      elementStart = -2
    }
  }
  if (!sawDocument) throw new FeedSplitError('not a JSON document')
  if (arrayDepth === -1) throw new FeedSplitError(`no "${opts.key}" array found`)
  if (!done) throw new FeedSplitError('unexpected end of file inside the array')
}
