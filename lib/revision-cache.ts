// Responses built from data that only changes together with a revision counter are kept until the
// revision moves: reading the counter is one small round trip, rebuilding the page is many.

export class RevisionCache {
  private readonly entries = new Map<string, { revision: string, body: string }>()

  constructor (private readonly maxEntries = 256) {}

  get (key: string, revision: string): string | undefined {
    const e = this.entries.get(key)
    return e !== undefined && e.revision === revision ? e.body : undefined
  }

  set (key: string, revision: string, body: string): void {
    this.entries.delete(key)
    this.entries.set(key, { revision, body })
    // Oldest first in a Map: drop from the front past the bound.
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string)
  }
}
