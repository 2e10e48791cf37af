// Host pages change only when a scan writes hosts, and are read far more often than that: a results store
// that keeps each page it served until the hosts revision moves. Building a page is a query and a parse per
// host; reading the revision is one small round trip, and with an invalidation channel not even that: every
// process announces its host writes on the channel (withHostWriteAnnouncements), and a cache whose channel is
// live reads the revision only after an announcement. While the channel is down announcements may be lost,
// so the revision is read on every request, as without a channel.
import type { InvalidationChannel } from '../invalidation'
import type { HostRecord } from '../domain/hosts'
import type { Page } from './types'
import type { HostQuery, ResultsStore } from './results-types'

/** The invalidation topic on which every write that moves the hosts revision is announced. */
export const HOSTS_TOPIC = 'hosts'

interface Entry {
  revision: string
  page: Promise<Page<HostRecord>>
  /** Hosts the page holds, once read (0 before). */
  hosts: number
}

export interface HostPageCacheOptions {
  maxEntries?: number
  /**
   * Hosts held across every page (default 2,000: 40 pages of 50). A cached host is its parsed record and its part of
   * the page's serialised body: 256 pages of a thousand hosts each would hold a quarter of a million records (with
   * the page bound alone, the API at 10,000 hosts peaked at 405-517 MB in two traced runs; with both, 323 MB).
   */
  maxHosts?: number
  /** Announcements of host writes from every process: while live, the revision is not read per request. */
  channel?: InvalidationChannel
}

/** `inner` with host pages cached per query and revision; every other call goes straight through. */
export function withHostPageCache (inner: ResultsStore, opts: HostPageCacheOptions = {}): ResultsStore & { close(): void } {
  const maxEntries = opts.maxEntries ?? 256
  const maxHosts = opts.maxHosts ?? 2000
  const channel = opts.channel
  const pages = new Map<string, Entry>()
  let held = 0
  const drop = (key: string): void => {
    const e = pages.get(key)
    if (e === undefined) return
    held -= e.hosts
    pages.delete(key)
  }
  // Oldest first in a Map: drop from the front past either bound (the newest page stays, however large).
  const trim = (): void => {
    while (pages.size > maxEntries || (held > maxHosts && pages.size > 1)) drop(pages.keys().next().value as string)
  }
  /** The revision as last read, trusted while no write was announced or made here since and the channel stayed live. */
  let known: { revision: string, epoch: number } | null = null
  /** Bumped on every announcement and local write: a revision read that started before one must not be kept. */
  let generation = 0
  const moved = (): void => { generation++; known = null }
  const unsubscribe = channel?.subscribe(HOSTS_TOPIC, moved) ?? (() => {})

  async function revision (): Promise<string> {
    if (channel === undefined) return await inner.hostsRevision()
    const epoch = channel.epoch()
    const live = channel.live(HOSTS_TOPIC)
    if (live && known !== null && known.epoch === epoch) return known.revision
    const before = generation
    const read = await inner.hostsRevision()
    if (live && before === generation && channel.epoch() === epoch && channel.live(HOSTS_TOPIC)) known = { revision: read, epoch }
    return read
  }

  /** A write through this cache: its own pages are stale at once, before the announcement comes back. */
  async function writing<T> (p: Promise<T>): Promise<T> {
    try {
      return await p
    } finally {
      moved()
    }
  }

  return {
    recordHost: (write) => writing(inner.recordHost(write)),
    recordHosts: (writes) => writing(inner.recordHosts(writes)),
    getHost: (address) => inner.getHost(address),
    ping: () => inner.ping(),
    hostsRevision: () => inner.hostsRevision(),
    deleteHost: (address) => writing(inner.deleteHost(address)),
    listFindings: (query) => inner.listFindings(query),
    streamFindings: (query) => inner.streamFindings(query),
    getFinding: (id) => inner.getFinding(id),
    decideFinding: (id, status, comment, by) => writing(inner.decideFinding(id, status, comment, by)),
    hostsForCve: (cveId) => inner.hostsForCve(cveId),
    setHostTags: (address, tags) => writing(inner.setHostTags(address, tags)),
    addHostTags: (address, tags, remove) => writing(inner.addHostTags(address, tags, remove)),
    hostsWithTags: (tags) => inner.hostsWithTags(tags),
    refreshExploitContext: (lookup) => writing(inner.refreshExploitContext(lookup)),
    scanHosts: (scanId) => inner.scanHosts(scanId),
    async listHosts (query: HostQuery): Promise<Page<HostRecord>> {
      // Read before the page: a page is never older than the revision it is kept under.
      const rev = await revision()
      const key = JSON.stringify(query)
      const hit = pages.get(key)
      if (hit !== undefined && hit.revision === rev) return await hit.page
      // Concurrent readers of a page not cached yet share one query; a failed one is not kept.
      const page = inner.listHosts(query)
      const entry: Entry = { revision: rev, page, hosts: 0 }
      drop(key)
      pages.set(key, entry)
      page.then((p) => {
        if (pages.get(key) !== entry) return
        entry.hosts = p.items.length
        held += entry.hosts
        trim()
      }, () => { if (pages.get(key) === entry) drop(key) })
      trim()
      return await page
    },
    close: () => { unsubscribe(); pages.clear(); held = 0 }
  }
}

/**
 * `inner` announcing on `channel` every write that moves the hosts revision, once it has committed, so that
 * host page caches in every process stop trusting the revision they hold. A failed announcement is not the
 * write's failure: the caches of a channel that cannot carry messages do not trust it anyway.
 */
export function withHostWriteAnnouncements (inner: ResultsStore, channel: InvalidationChannel): ResultsStore {
  async function announced<T> (p: Promise<T>): Promise<T> {
    try {
      return await p
    } finally {
      // A failed write may have committed before its answer was lost: announced all the same.
      await channel.publish(HOSTS_TOPIC, '').catch(() => {})
    }
  }
  // Everything else is inner's own, the class included (the store stays an instance of its backend's class).
  const overrides: Partial<ResultsStore> = {
    recordHost: (write) => announced(inner.recordHost(write)),
    recordHosts: (writes) => announced(inner.recordHosts(writes)),
    deleteHost: (address) => announced(inner.deleteHost(address)),
    decideFinding: (id, status, comment, by) => announced(inner.decideFinding(id, status, comment, by)),
    refreshExploitContext: (lookup) => announced(inner.refreshExploitContext(lookup)),
    setHostTags: (address, tags) => announced(inner.setHostTags(address, tags)),
    addHostTags: (address, tags, remove) => announced(inner.addHostTags(address, tags, remove))
  }
  return Object.assign(Object.create(inner) as ResultsStore, overrides)
}
