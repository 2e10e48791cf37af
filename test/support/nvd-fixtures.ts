// The real NVD records of test/fixtures/nvd/cves, raw and normalized.

import fs from 'node:fs'
import path from 'node:path'
import { normalizeCve } from '../../lib/nvd/normalize'
import type { CveRecord } from '../../lib/nvd/types'

export const CVE_DIR = path.join(__dirname, '..', 'fixtures', 'nvd', 'cves')

export function rawFixture (id: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(CVE_DIR, id + '.json'), 'utf8')) as Record<string, unknown>
}

export function allRawFixtures (): Array<Record<string, unknown>> {
  return fs.readdirSync(CVE_DIR).filter((f) => f.endsWith('.json')).sort()
    .map((f) => JSON.parse(fs.readFileSync(path.join(CVE_DIR, f), 'utf8')) as Record<string, unknown>)
}

export function allRecords (): CveRecord[] {
  return allRawFixtures().map((r) => normalizeCve(r))
}
