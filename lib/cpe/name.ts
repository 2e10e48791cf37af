// CPE 2.3 formatted-string binding (NISTIR 7695): build, parse and escape names.

export type CpePart = 'a' | 'o' | 'h'

export interface CpeName {
  part: CpePart
  vendor: string
  product: string
  version: string
  update: string
  edition: string
  language: string
  swEdition: string
  targetSw: string
  targetHw: string
  other: string
}

const FIELDS = ['part', 'vendor', 'product', 'version', 'update', 'edition', 'language',
  'swEdition', 'targetSw', 'targetHw', 'other'] as const

/**
 * Quote one attribute value for the formatted string. `*` (ANY) and `-` (NA) pass through as
 * logical values; every other character that is not alphanumeric, `_`, `.` or `-` gets a backslash.
 * Spaces become underscores as NVD's dictionary writes them.
 */
export function escapeCpeValue (value: string): string {
  if (value === '' || value === '*') return '*'
  if (value === '-') return '-'
  let out = ''
  for (const ch of value.trim().toLowerCase().replace(/\s+/g, '_')) {
    out += /[a-z0-9_.-]/.test(ch) ? ch : '\\' + ch
  }
  return out
}

/** Undo the formatted-string quoting: `\:` → `:`, `\\` → `\`. Logical `*` and `-` are kept as is. */
export function unescapeCpeValue (value: string): string {
  return value.replace(/\\(.)/g, '$1')
}

export function formatCpe (name: Partial<CpeName> & Pick<CpeName, 'vendor' | 'product'>): string {
  const full: CpeName = {
    part: 'a', version: '*', update: '*', edition: '*', language: '*',
    swEdition: '*', targetSw: '*', targetHw: '*', other: '*', ...name
  }
  return 'cpe:2.3:' + FIELDS.map((f) => f === 'part' ? full.part : escapeCpeValue(full[f])).join(':')
}

/** Split on colons that are not escaped. */
function splitFields (s: string): string[] {
  const parts: string[] = []
  let cur = ''
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]
    if (ch === '\\' && i + 1 < s.length) {
      cur += ch + s[i + 1]
      i++
    } else if (ch === ':') {
      parts.push(cur)
      cur = ''
    } else {
      cur += ch
    }
  }
  parts.push(cur)
  return parts
}

/**
 * Parse a CPE 2.3 formatted string. Values stay in their quoted form (as NVD criteria are written),
 * so two names compare field by field with plain string equality. Returns null when malformed.
 */
export function parseCpe (cpe: string): CpeName | null {
  const fields = splitFields(cpe)
  if (fields.length !== 13 || fields[0] !== 'cpe' || fields[1] !== '2.3') return null
  const [part, ...rest] = fields.slice(2)
  if (part !== 'a' && part !== 'o' && part !== 'h') return null
  if (rest.some((v) => v === '')) return null
  const name = { part } as CpeName
  FIELDS.slice(1).forEach((f, i) => { (name as unknown as Record<string, string>)[f] = rest[i] })
  return name
}
