// Decoding a stored value (a CVE record summary, a package's tracker entries) costs more than reading it
// from the worker's read cache: the same text decodes to the same object, so the last decodes are kept.
// Callers treat what they get as read-only.

const MAX_ENTRIES = 20_000

export class DecodedCache<T> {
  private readonly byText = new Map<string, T>()

  constructor (private readonly decode: (text: string) => T, private readonly maxEntries = MAX_ENTRIES) {}

  get (text: string): T {
    let value = this.byText.get(text)
    if (value === undefined) {
      value = this.decode(text)
      this.byText.set(text, value)
      if (this.byText.size > this.maxEntries) this.byText.delete(this.byText.keys().next().value as string)
    }
    return value
  }
}
