// Ubuntu's CVE data in OSV format as a data source: which Ubuntu package revision fixes each CVE.

import { defineSource, isUrl, syncUrl } from '../sources/descriptor'
import { syncUbuntuOsv } from './sync'
import { downloadProgress, importedOutcome, syncOutcome, trackerStatus, trackerSummary } from './tracker-source'
import { UBUNTU_OSV, importUbuntuOsv } from './ubuntu-osv'

const TITLE = UBUNTU_OSV.title
const OFFICIAL_URL = 'https://github.com/canonical/ubuntu-security-notices'

export const ubuntuOsvSource = defineSource({
  name: 'ubuntu-osv',
  title: TITLE,
  role: 'backports',
  family: 'ubuntu',
  summary: trackerSummary('ubuntu', true),
  // Canonical publishes the records as one file per CVE in this repository (osv/cve/<year>/), not as one
  // download: sync needs the URL of a file of records (a mirror that bundles them), given or configured.
  officialUrl: OFFICIAL_URL,
  resumable: true,
  status: async (ctx) => await trackerStatus(ctx, 'ubuntu'),
  async import (ctx, inputs, opts = {}) {
    const urls = inputs.filter(isUrl)
    const paths = inputs.filter((i) => !isUrl(i))
    if (urls.length > 1 || (urls.length > 0 && paths.length > 0)) throw new Error(`${TITLE} imports either one URL or files and directories`)
    if (urls.length === 1) {
      const s = await syncUbuntuOsv(ctx.sources, { url: urls[0], releases: opts.releases, dir: opts.workDir, signal: opts.signal, onProgress: downloadProgress(opts.progress, urls[0]) })
      return syncOutcome(TITLE, s, urls[0])
    }
    const r = await importUbuntuOsv(paths, ctx.sources, { releases: opts.releases })
    const out = importedOutcome(TITLE, r, paths.join(', '))
    out.summary += ` from ${r.records} records`
    return out
  },
  async sync (ctx, opts = {}) {
    const url = syncUrl({ officialUrl: OFFICIAL_URL }, opts)
    if (url === OFFICIAL_URL) {
      throw new Error(`${TITLE}: Canonical publishes one file per CVE (${url}, osv/cve/): import a checkout's osv/cve directory, or sync from the URL of a file of records`)
    }
    const s = await syncUbuntuOsv(ctx.sources, { url, releases: opts.releases, dir: opts.workDir, signal: opts.signal, onProgress: downloadProgress(opts.progress, url) })
    return syncOutcome(TITLE, s, url)
  }
})
