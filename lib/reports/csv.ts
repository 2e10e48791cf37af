// The CSV report: the scan's findings with the columns and cell rules of the findings export
// (lib/findings-csv.ts), so one spreadsheet import reads both.
import { CSV_COLUMNS, csvRow, findingCsvRow } from '../findings-csv'
import { reportFindings, type ReportSource } from './gather'

const CHUNK = 500

export async function * csvReport (src: ReportSource): AsyncGenerator<string> {
  yield csvRow([...CSV_COLUMNS])
  let chunk = ''
  let rows = 0
  for await (const f of reportFindings(src)) {
    chunk += findingCsvRow(f)
    if (++rows % CHUNK === 0) { yield chunk; chunk = '' }
  }
  if (chunk !== '') yield chunk
}
