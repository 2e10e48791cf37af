// The real CVE JSON 5 records of test/fixtures/cve5 (cvelistV5 layout), raw and parsed.

import fs from 'node:fs'
import path from 'node:path'
import { parseCve5Record, type Cve5Summary } from '../../lib/cve5/record'

export const CVE5_FIXTURES = path.join(__dirname, '..', 'fixtures', 'cve5')
export const CVE5_TREE = path.join(CVE5_FIXTURES, 'cves')

/** cvelistV5 path of a record: cves/2024/31xxx/CVE-2024-31449.json */
export function cvelistPath (id: string): string {
  const [, year, num] = id.split('-')
  return path.posix.join('cves', year, num.slice(0, -3) + 'xxx', id + '.json')
}

export function cve5Text (id: string): string {
  return fs.readFileSync(path.join(CVE5_FIXTURES, cvelistPath(id)), 'utf8')
}

export function cve5Raw (id: string): Record<string, unknown> {
  return JSON.parse(cve5Text(id)) as Record<string, unknown>
}

export function vulnrichmentRaw (id: string): Record<string, unknown> {
  const [, year, num] = id.split('-')
  const file = path.join(CVE5_FIXTURES, 'vulnrichment', year, num.slice(0, -3) + 'xxx', id + '.json')
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>
}

export function cve5Summary (id: string): Cve5Summary {
  const s = parseCve5Record(cve5Raw(id))
  if (!s) throw new Error(`fixture ${id} did not parse`)
  return s
}

/** Every record file of the fixture tree, as cvelistV5 paths. */
export function allCve5Paths (): string[] {
  const out: string[] = []
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (/^CVE-\d{4}-\d+\.json$/.test(e.name)) out.push(path.relative(CVE5_FIXTURES, p).split(path.sep).join('/'))
    }
  }
  walk(CVE5_TREE)
  return out.sort()
}

export function allCve5Ids (): string[] {
  return allCve5Paths().map((p) => path.basename(p, '.json'))
}

export function nvdFixture (id: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(CVE5_FIXTURES, 'nvd', id + '.json'), 'utf8')) as Record<string, unknown>
}
