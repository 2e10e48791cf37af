// Every data source filled from the real fixture records, in memory: the NVD index, CVE JSON 5 records,
// the Debian tracker and the KEV catalog, as a scan would match against them.
import path from 'node:path'
import { finishImport, writeSummaries } from '../../lib/cve5/source'
import { importDebianTracker } from '../../lib/distro/debian-tracker'
import { importKev } from '../../lib/exploit/kev'
import { createMemoryIndex, type MemoryIndex } from '../../lib/nvd/memory/cve-index'
import { createMemorySourceStore, type MemorySourceStore } from '../../lib/sources/memory'
import { cve5Summary, nvdFixture } from './cve5-fixtures'
import { rawFixture } from './nvd-fixtures'

export const FIXTURES = path.join(__dirname, '..', 'fixtures')
export const DEBIAN_TRACKER = path.join(FIXTURES, 'distro', 'debian-tracker.json')
export const KEV_CATALOG = path.join(FIXTURES, 'exploit', 'kev-catalog.json')
export const EPSS_SCORES = path.join(FIXTURES, 'exploit', 'epss-scores.csv')

/** NVD records (test/fixtures/nvd/cves) the matcher tests use. */
export const NVD_IDS = ['CVE-2016-6210', 'CVE-2018-15473', 'CVE-2023-51385', 'CVE-2024-6387', 'CVE-2023-51767', 'CVE-2015-3306',
  'CVE-2022-0543', 'CVE-2023-28856', 'CVE-2022-24834', 'CVE-2023-22458', 'CVE-2019-10149']
/** NVD records kept beside the CVE JSON 5 fixtures (test/fixtures/cve5/nvd). */
export const NVD_CVE5_IDS = ['CVE-2023-46118', 'CVE-2025-61985', 'CVE-2025-30219']
/** CVE JSON 5 records loaded. */
export const CVE5_IDS = ['CVE-2024-31449', 'CVE-2023-46118', 'CVE-2025-61985', 'CVE-2025-30219', 'CVE-2024-8376']

export function nvdRecords (): Array<Record<string, unknown>> {
  return [...NVD_IDS.map(rawFixture), ...NVD_CVE5_IDS.map(nvdFixture)]
}

export async function loadSources (): Promise<{ nvd: MemoryIndex, sources: MemorySourceStore }> {
  const nvd = await createMemoryIndex()
  await nvd.upsertRaw(nvdRecords())
  const sources = await createMemorySourceStore()
  await importDebianTracker(DEBIAN_TRACKER, sources)
  await writeSummaries(sources, CVE5_IDS.map(cve5Summary))
  await finishImport(sources)
  await importKev(KEV_CATALOG, sources)
  return { nvd, sources }
}
