// The Debian security tracker as a data source: which Debian package revision fixes each CVE.

import { defineSource, isUrl, single, syncUrl } from '../sources/descriptor'
import { DEBIAN_TRACKER, DEBIAN_TRACKER_URL, importDebianTracker } from './debian-tracker'
import { syncDebianTracker } from './sync'
import { downloadProgress, importedOutcome, syncOutcome, trackerStatus, trackerSummary } from './tracker-source'

const TITLE = DEBIAN_TRACKER.title

export const debianTrackerSource = defineSource({
  name: 'debian-tracker',
  title: TITLE,
  role: 'backports',
  family: 'debian',
  summary: trackerSummary('debian', true),
  officialUrl: DEBIAN_TRACKER_URL,
  urlSetting: 'DEBIAN_TRACKER_URL',
  // A dropped download continues with Range; an unchanged file costs one 304.
  resumable: true,
  status: async (ctx) => await trackerStatus(ctx, 'debian'),
  async import (ctx, inputs, opts = {}) {
    const input = single(inputs, TITLE)
    if (isUrl(input)) {
      const s = await syncDebianTracker(ctx.sources, { url: input, releases: opts.releases, dir: opts.workDir, signal: opts.signal, onProgress: downloadProgress(opts.progress, input) })
      return syncOutcome(TITLE, s, input)
    }
    return importedOutcome(TITLE, await importDebianTracker(input, ctx.sources, { releases: opts.releases }), input)
  },
  async sync (ctx, opts = {}) {
    const url = syncUrl({ officialUrl: DEBIAN_TRACKER_URL, urlSetting: 'DEBIAN_TRACKER_URL' }, opts)
    const s = await syncDebianTracker(ctx.sources, { url, releases: opts.releases, dir: opts.workDir, signal: opts.signal, onProgress: downloadProgress(opts.progress, url) })
    return syncOutcome(TITLE, s, url)
  }
})
