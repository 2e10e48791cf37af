// What data a scan is matched against, for /health and every scan summary: a finding is only as
// current as the data behind it, and a user needs to see how old each source is.

import type { LocalCveIndex } from './nvd/cve-index'
import { META_AUTHORITATIVE } from './nvd/sync'
import { cve5Stats } from './cve5/source'
import { readImportMeta } from './distro/entries'
import { exploitDates } from './exploit/context'
import type { DataSources, DistroStatus, SourceStore } from './sources/source-store'

export type { DataSources }

async function distro (sources: SourceStore, family: 'debian' | 'ubuntu'): Promise<DistroStatus | null> {
  const m = await readImportMeta(sources, family)
  return m === null ? null : { importedAt: m.importedAt, packages: m.packages, cves: m.cves }
}

export async function dataSources (nvd: LocalCveIndex, sources: SourceStore | null): Promise<DataSources> {
  const [stats, authoritativeAsOf] = await Promise.all([nvd.stats(), nvd.getMeta(META_AUTHORITATIVE)])
  const out: DataSources = {
    nvd: { ...stats, authoritativeAsOf },
    cve5: { records: 0, newestUpdated: null, importedAt: null },
    distributions: { debian: null, ubuntu: null },
    kev: null,
    epss: null
  }
  if (sources === null) return out
  await sources.revision()
  const [cve5, debian, ubuntu, exploit] = await Promise.all([cve5Stats(sources), distro(sources, 'debian'), distro(sources, 'ubuntu'), exploitDates(sources)])
  return { ...out, cve5, distributions: { debian, ubuntu }, kev: exploit.kev, epss: exploit.epss }
}
