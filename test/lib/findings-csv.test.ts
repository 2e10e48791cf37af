// CSV injection: a cell must neither start a formula nor let a locale that splits on ';' (or a tab) start one.
import { test } from 'tap'
import { csvCell, csvRow } from '../../lib/findings-csv'

/** Read a CSV line as a spreadsheet set to `sep` would, honouring RFC 4180 quotes. */
function splitAs (line: string, sep: string): string[] {
  const cells: string[] = []
  let cur = ''
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') { cur += '"'; i++ } else if (c === '"') quoted = false
      else cur += c
    } else if (c === '"' && cur === '') quoted = true
    else if (c === sep) { cells.push(cur); cur = '' } else cur += c
  }
  cells.push(cur)
  return cells
}

/** Cells a spreadsheet would evaluate, whether it honours quotes or not. */
function formulas (line: string): string[] {
  const out: string[] = []
  for (const sep of [',', ';', '\t']) {
    for (const cell of [...splitAs(line, sep), ...line.split(sep)]) {
      const bare = cell.replace(/^"/, '')
      if (/^[=+\-@]/.test(bare)) out.push(`${JSON.stringify(sep)}: ${cell}`)
    }
  }
  return out
}

test('a separator inside a cell is quoted and no piece starts a formula', async (t) => {
  const hostile = ['2.1;=1+2;@SUM(1)', '1.0\t=HYPERLINK("http://x")', 'a,=cmd|calc', 'ok;+1', 'x;-1+2', 'fine\n=1+1', 'p;;@x', '=1;=2']
  for (const value of hostile) {
    const line = csvRow(['id', value, 'tail']).trimEnd()
    t.same(formulas(line), [], `${JSON.stringify(value)} → ${line}`)
    t.match(csvCell(value), /^"/, `${JSON.stringify(value)} is quoted`)
    t.equal(splitAs(line, ',').length, 3, 'three cells when read with commas')
  }
  t.equal(csvCell('2.1;=1+2;@SUM(1)'), '"2.1;\'=1+2;\'@SUM(1)"')
  t.equal(csvCell('OpenSSH_8.4p1 Debian-5+deb11u3'), 'OpenSSH_8.4p1 Debian-5+deb11u3', 'ordinary versions are untouched')
  t.equal(csvCell(-1), '-1', 'numbers are data')
})
