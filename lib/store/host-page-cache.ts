// Host pages change only when a scan writes hosts, and are read far more often than that: a results store
// that keeps each page it served until the hosts revision moves. Reading the revision is one small round
// trip; building the page is a query and a parse per host.
import type { HostRecord, Page } from './types'
import type { HostQuery, ResultsStore } from './results-types'

interface Entry {
  revision: string
  page: Promise<Page<HostRecord>>
}

/** `inner` with host pages cached per query and revision; every other call goes straight through. */
export function withHostPageCache (inner: ResultsStore, maxEntries = 256): ResultsStore {
  const pages = new Map<string, Entry>()
  return {
    recordHost: (write) => inner.recordHost(write),
    recordHosts: (writes) => inner.recordHosts(writes),
    getHost: (address) => inner.getHost(address),
    hostsRevision: () => inner.hostsRevision(),
    deleteHost: (address) => inner.deleteHost(address),
    listFindings: (query) => inner.listFindings(query),
    streamFindings: (query) => inner.streamFindings(query),
    getFinding: (id) => inner.getFinding(id),
    decideFinding: (id, status, comment, by) => inner.decideFinding(id, status, comment, by),
    hostsForCve: (cveId) => inner.hostsForCve(cveId),
    setHostTags: (address, tags) => inner.setHostTags(address, tags),
    addHostTags: (address, tags, remove) => inner.addHostTags(address, tags, remove),
    hostsWithTags: (tags) => inner.hostsWithTags(tags),
    refreshExploitContext: (lookup) => inner.refreshExploitContext(lookup),
    scanHosts: (scanId) => inner.scanHosts(scanId),
    async listHosts (query: HostQuery): Promise<Page<HostRecord>> {
      // Read before the page: a page is never older than the revision it is kept under.
      const revision = await inner.hostsRevision()
      const key = JSON.stringify(query)
      const hit = pages.get(key)
      if (hit !== undefined && hit.revision === revision) return await hit.page
      // Concurrent readers of a page not cached yet share one query; a failed one is not kept.
      const page = inner.listHosts(query)
      pages.delete(key)
      pages.set(key, { revision, page })
      page.catch(() => { if (pages.get(key)?.page === page) pages.delete(key) })
      // Oldest first in a Map: drop from the front past the bound.
      while (pages.size > maxEntries) pages.delete(pages.keys().next().value as string)
      return await page
    }
  }
}
