// An independent reading of the fixture records, for end-to-end tests: which CVEs name a product at a
// version, by the plain rules of NVD configurations (vulnerable criteria, exact version or range
// bounds). Deliberately simple and separate from lib/nvd/matcher.ts, so the two can disagree.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { compareVersions } from '../../lib/cpe/version'

interface Criterion {
  vulnerable: boolean
  criteria: string
  versionStartIncluding?: string
  versionStartExcluding?: string
  versionEndIncluding?: string
  versionEndExcluding?: string
}

const DIR = join(__dirname, '..', 'fixtures', 'nvd', 'cves')

export function expectedCves (vendorProducts: string[], version: string): string[] {
  const out = new Set<string>()
  for (const file of readdirSync(DIR)) {
    const cve = JSON.parse(readFileSync(join(DIR, file), 'utf8'))
    if (cve.vulnStatus === 'Rejected') continue
    for (const config of cve.configurations ?? []) {
      for (const node of config.nodes ?? []) {
        for (const c of (node.cpeMatch ?? []) as Criterion[]) {
          if (!c.vulnerable) continue
          const [, , , vendor, product, v] = c.criteria.split(':')
          if (!vendorProducts.includes(`${vendor}:${product}`)) continue
          const ok = v === '*'
            ? (c.versionStartIncluding === undefined || compareVersions(version, c.versionStartIncluding) >= 0) &&
              (c.versionStartExcluding === undefined || compareVersions(version, c.versionStartExcluding) > 0) &&
              (c.versionEndIncluding === undefined || compareVersions(version, c.versionEndIncluding) <= 0) &&
              (c.versionEndExcluding === undefined || compareVersions(version, c.versionEndExcluding) < 0)
            : v === version
          if (ok) out.add(cve.id)
        }
      }
    }
  }
  return [...out].sort()
}
