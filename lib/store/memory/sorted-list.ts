// A sorted list kept in order as items come and go: items sit in chunks of a few hundred, each chunk a plain
// sorted array, so an insert or a removal moves a few hundred pointers rather than the whole list, positional
// access (a page at an offset) walks the chunk lengths, and a scan in either direction is a loop over arrays.
// sorted-btree was measured for this and left: it has no positional access (a deep page is a walk from an end),
// and its inserts and scans were several times slower at 200,000 items.

const LOAD = 512

export class SortedList<T> {
  private chunks: T[][] = []
  private count = 0

  /** `compare` must be a total order over the items present: no two distinct items compare equal. */
  constructor (private readonly compare: (a: T, b: T) => number) {}

  get size (): number {
    return this.count
  }

  /** Index of the first chunk whose last item is not below `item` (chunks.length when there is none). */
  private chunkFor (item: T): number {
    let lo = 0
    let hi = this.chunks.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const chunk = this.chunks[mid]
      if (this.compare(chunk[chunk.length - 1], item) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** Index in `chunk` of the first item not below `item`. */
  private indexIn (chunk: T[], item: T): number {
    let lo = 0
    let hi = chunk.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.compare(chunk[mid], item) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  insert (item: T): void {
    this.count++
    if (this.chunks.length === 0) {
      this.chunks.push([item])
      return
    }
    let c = this.chunkFor(item)
    if (c === this.chunks.length) c--
    const chunk = this.chunks[c]
    chunk.splice(this.indexIn(chunk, item), 0, item)
    if (chunk.length > 2 * LOAD) this.chunks.splice(c + 1, 0, chunk.splice(LOAD))
  }

  /** Remove the item that compares equal to `item`; false when there is none. */
  delete (item: T): boolean {
    const c = this.chunkFor(item)
    if (c === this.chunks.length) return false
    const chunk = this.chunks[c]
    const i = this.indexIn(chunk, item)
    if (i === chunk.length || this.compare(chunk[i], item) !== 0) return false
    chunk.splice(i, 1)
    this.count--
    if (chunk.length === 0) this.chunks.splice(c, 1)
    else if (chunk.length < LOAD / 4 && c + 1 < this.chunks.length && chunk.length + this.chunks[c + 1].length <= 2 * LOAD) {
      // Keep chunks from thinning out after many removals: merge with the next one.
      this.chunks[c] = chunk.concat(this.chunks[c + 1])
      this.chunks.splice(c + 1, 1)
    }
    return true
  }

  /** Build from items in any order, replacing what the list held. */
  reset (items: T[]): void {
    const sorted = [...items].sort(this.compare)
    this.chunks = []
    for (let i = 0; i < sorted.length; i += LOAD) this.chunks.push(sorted.slice(i, i + LOAD))
    this.count = sorted.length
  }

  /**
   * Visit items in ascending (or descending) order, from the `skip`-th item of that order on, until `visit`
   * returns false. The list must not change during the walk.
   */
  walk (order: 'asc' | 'desc', skip: number, visit: (item: T) => boolean | void): void {
    const chunks = this.chunks
    if (order === 'asc') {
      let c = 0
      while (c < chunks.length && skip >= chunks[c].length) skip -= chunks[c++].length
      for (; c < chunks.length; c++) {
        const chunk = chunks[c]
        for (let i = skip; i < chunk.length; i++) if (visit(chunk[i]) === false) return
        skip = 0
      }
    } else {
      let c = chunks.length - 1
      while (c >= 0 && skip >= chunks[c].length) skip -= chunks[c--].length
      for (; c >= 0; c--) {
        const chunk = chunks[c]
        for (let i = chunk.length - 1 - skip; i >= 0; i--) if (visit(chunk[i]) === false) return
        skip = 0
      }
    }
  }

  /**
   * The items that pass `test` in the given order: those at match positions `offset` to `offset + limit`, and
   * how many match in all. One loop over the chunks, for filters that test every item.
   */
  select (order: 'asc' | 'desc', offset: number, limit: number, test: (item: T) => boolean): { items: T[], total: number } {
    const items: T[] = []
    const end = offset + limit
    let total = 0
    const chunks = this.chunks
    if (order === 'asc') {
      for (let c = 0; c < chunks.length; c++) {
        const chunk = chunks[c]
        for (let i = 0; i < chunk.length; i++) {
          const item = chunk[i]
          if (!test(item)) continue
          if (total >= offset && total < end) items.push(item)
          total++
        }
      }
    } else {
      for (let c = chunks.length - 1; c >= 0; c--) {
        const chunk = chunks[c]
        for (let i = chunk.length - 1; i >= 0; i--) {
          const item = chunk[i]
          if (!test(item)) continue
          if (total >= offset && total < end) items.push(item)
          total++
        }
      }
    }
    return { items, total }
  }

  /**
   * How many items come before the first one `past` holds for, `past` being false and then true along the
   * ascending order: a binary search over the chunks' last items, then within one chunk.
   */
  countBefore (past: (item: T) => boolean): number {
    const chunks = this.chunks
    let lo = 0
    let hi = chunks.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const chunk = chunks[mid]
      if (past(chunk[chunk.length - 1])) hi = mid
      else lo = mid + 1
    }
    let n = 0
    for (let c = 0; c < lo; c++) n += chunks[c].length
    if (lo === chunks.length) return n
    const chunk = chunks[lo]
    let a = 0
    let b = chunk.length
    while (a < b) {
      const mid = (a + b) >>> 1
      if (past(chunk[mid])) b = mid
      else a = mid + 1
    }
    return n + a
  }

  /** `limit` items from position `offset` of the given order. */
  slice (order: 'asc' | 'desc', offset: number, limit: number): T[] {
    const out: T[] = []
    if (limit <= 0) return out
    this.walk(order, offset, (item) => { out.push(item); return out.length < limit })
    return out
  }

  toArray (): T[] {
    return this.chunks.flat()
  }
}
