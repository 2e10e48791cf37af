// Findings as CSV (RFC 4180) for spreadsheets and ticketing imports, built page by page so an export of every
// finding never sits in memory at once.
import type { FindingExportQuery, ResultsStore } from './store/results-types'
import type { FindingRecord } from './domain/findings'
import { kevCataloguesOfFinding } from './store/results-merge'

export const CSV_COLUMNS = [
  'id', 'address', 'port', 'cveId', 'severity', 'cvss', 'cvssVersion', 'kev', 'kevRansomware', 'epss', 'epssPercentile',
  'status', 'confidence', 'confidenceNote', 'source', 'rule', 'product', 'version', 'matchedCpe', 'criterion', 'reason',
  'firstSeen', 'lastSeen', 'fixedAt', 'comment', 'description',
  // The catalogues listing the CVE as exploited (`cisa eu`) and its EUVD id: before the three columns the tests hold
  // last, so `remediation`, `protocol` and `confidenceScore` moved two places right.
  'kevCatalogues', 'euvdId',
  'remediation',
  // Appended, not put beside `port`: imports that read columns by position keep working.
  'protocol', 'confidenceScore'
] as const

type Column = typeof CSV_COLUMNS[number]

// A spreadsheet runs a cell that starts with one of these as a formula (CSV injection); tab and CR count too.
const FORMULA_START = /^[=+\-@\t\r]/
// Where a spreadsheet may start a new cell: the comma, the ';' of locales that use a decimal comma, a tab, a
// line break. Every piece that follows one is neutralised, for the readers that ignore quotes too.
const PIECE = /([,;\t\r\n]+)/
const SPECIAL = /[",;\t\r\n]/

/**
 * One CSV cell: any piece (the text at the start or after a separator) that would start a formula gets a
 * leading `'`, and a cell holding a separator of any locale is quoted per RFC 4180.
 */
export function csvCell (value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return ''
  if (typeof value !== 'string') return String(value)
  // Most cells hold no separator at all: only their start can make a formula, and they need no quotes.
  if (!SPECIAL.test(value)) return FORMULA_START.test(value) ? `'${value}` : value
  const s = value.split(PIECE).map((piece, i) => i % 2 === 0 && FORMULA_START.test(piece) ? `'${piece}` : piece).join('')
  return `"${s.replace(/"/g, '""')}"`
}

export function csvRow (cells: (string | number | boolean | null | undefined)[]): string {
  return cells.map(csvCell).join(',') + '\r\n'
}

function cell (f: FindingRecord, c: Column): string | number | boolean | null {
  switch (c) {
    case 'kev': return f.kev?.dateAdded ?? ''
    case 'kevRansomware': return f.kev === null ? '' : f.kev.ransomware === true
    case 'epss': return f.epss?.score ?? null
    case 'epssPercentile': return f.epss?.percentile ?? null
    case 'kevCatalogues': return kevCataloguesOfFinding(f).join(' ')
    case 'euvdId': return f.euvdId ?? null
    case 'remediation': return f.remediation ?? null
    default: return f[c]
  }
}

export function findingCsvRow (f: FindingRecord): string {
  return csvRow(CSV_COLUMNS.map((c) => cell(f, c)))
}

const CHUNK = 500

/** The header row, then every finding the query matches (from its offset, at most its limit when given). */
export async function * findingsCsv (store: ResultsStore, query: FindingExportQuery): AsyncGenerator<string> {
  yield csvRow([...CSV_COLUMNS])
  let chunk = ''
  let rows = 0
  for await (const f of store.streamFindings(query)) {
    chunk += findingCsvRow(f)
    if (++rows === CHUNK) {
      yield chunk
      chunk = ''
      rows = 0
    }
  }
  if (chunk !== '') yield chunk
}
