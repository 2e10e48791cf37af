// Port lists as range text ("21-23,80,8000-8100"): what a scan covered on each host is kept once per scan and
// host, and a full template covers 65,535 ports: as text it is a few bytes, and hosts of one scan share it.
const parsed = new Map<string, PortSet>()
const PARSED_MAX = 1024
const made = new WeakMap<readonly number[], string>()

/** A set of ports read from range text, answering membership without expanding the ranges. */
export class PortSet {
  /** Range starts and ends, in order: [from0, to0, from1, to1, …]. */
  private readonly bounds: Uint16Array

  constructor (readonly text: string) {
    const parts = text === '' ? [] : text.split(',')
    this.bounds = new Uint16Array(parts.length * 2)
    parts.forEach((part, i) => {
      const dash = part.indexOf('-')
      const from = Number(dash === -1 ? part : part.slice(0, dash))
      this.bounds[2 * i] = from
      this.bounds[2 * i + 1] = dash === -1 ? from : Number(part.slice(dash + 1))
    })
  }

  has (port: number): boolean {
    const b = this.bounds
    let lo = 0
    let hi = b.length / 2 - 1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if (port < b[2 * mid]) hi = mid - 1
      else if (port > b[2 * mid + 1]) lo = mid + 1
      else return true
    }
    return false
  }

  get empty (): boolean {
    return this.bounds.length === 0
  }
}

/**
 * The range text of a port list, in order and without repeats. A worker hands the same template array for every
 * host of a batch: its text is made once.
 */
export function portRanges (ports: readonly number[]): string {
  const known = made.get(ports)
  if (known !== undefined) return known
  // 0 is the host itself (package findings of a credentialed scan), settled like a port.
  const sorted = [...new Set(ports)].filter((p) => Number.isInteger(p) && p >= 0 && p <= 65535).sort((a, b) => a - b)
  const parts: string[] = []
  for (let i = 0; i < sorted.length;) {
    let j = i
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`)
    i = j + 1
  }
  const text = parts.join(',')
  made.set(ports, text)
  return text
}

/** The ports of both range texts. */
export function unionRanges (a: string, b: string): string {
  if (a === b || b === '') return a
  if (a === '') return b
  return portRanges([...expand(a), ...expand(b)])
}

function expand (text: string): number[] {
  const out: number[] = []
  for (const part of text.split(',')) {
    const dash = part.indexOf('-')
    const from = Number(dash === -1 ? part : part.slice(0, dash))
    const to = dash === -1 ? from : Number(part.slice(dash + 1))
    for (let p = from; p <= to; p++) out.push(p)
  }
  return out
}

/** The set of a range text, shared by every caller that asks for the same text. */
export function portSet (text: string): PortSet {
  let set = parsed.get(text)
  if (set === undefined) {
    if (parsed.size >= PARSED_MAX) parsed.clear()
    set = new PortSet(text)
    parsed.set(text, set)
  }
  return set
}
