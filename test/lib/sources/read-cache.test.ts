// The worker's read cache over the source store: a repeated read costs no store call, an import by another
// process is seen once the revision moves (within checkEveryMs), and a write of its own is seen at once.
import { test } from 'tap'
import { createMemorySourceStore } from '../../../lib/sources/memory'
import { withReadCache } from '../../../lib/sources/read-cache'
import type { SourceStore } from '../../../lib/sources/source-store'

function counting (inner: SourceStore): { store: SourceStore, reads: () => number } {
  let n = 0
  // Every other method of the store as it is, on its own object.
  const store: SourceStore = Object.assign(Object.create(inner) as SourceStore, {
    get: async (t: string, k: string) => { n++; return await inner.get(t, k) },
    getMany: async (t: string, ks: readonly string[]) => { n++; return await inner.getMany(t, ks) },
    getMeta: async (k: string) => { n++; return await inner.getMeta(k) }
  })
  return { store, reads: () => n }
}

test('repeated reads are served from the cache until the revision moves', async (t) => {
  const backing = await createMemorySourceStore()
  await backing.put('kev', [['CVE-1', 'a'], ['CVE-2', 'b']])
  await backing.setMeta('kev:meta', 'v1')
  const { store: inner, reads } = counting(backing)
  const cached = withReadCache(inner, { checkEveryMs: 0 })

  t.equal(await cached.get('kev', 'CVE-1'), 'a')
  t.same(await cached.getMany('kev', ['CVE-1', 'CVE-2', 'CVE-3']), ['a', 'b', null])
  t.equal(await cached.getMeta('kev:meta'), 'v1')
  const after = reads()
  t.same(await cached.getMany('kev', ['CVE-2', 'CVE-3', 'CVE-1']), ['b', null, 'a'], 'absent keys are cached too')
  t.equal(await cached.get('kev', 'CVE-2'), 'b')
  t.equal(await cached.getMeta('kev:meta'), 'v1')
  t.equal(reads(), after, 'no store read for what was read before')

  // Another process writes: the revision moves and the next read sees it.
  await backing.put('kev', [['CVE-1', 'A']])
  t.equal(await cached.get('kev', 'CVE-1'), 'A')

  // A write through the cache is seen at once.
  await cached.put('kev', [['CVE-3', 'c']])
  t.equal(await cached.get('kev', 'CVE-3'), 'c')
})

test('the revision is read at most once per checkEveryMs, and the cache stays bounded', async (t) => {
  const backing = await createMemorySourceStore()
  await backing.put('epss', Array.from({ length: 50 }, (_, i) => [`CVE-${i}`, String(i)] as const))
  let revisions = 0
  const inner = Object.assign(Object.create(backing) as SourceStore, { revision: async () => { revisions++; return await backing.revision() } })
  const cached = withReadCache(inner, { checkEveryMs: 60_000, maxEntries: 10 })
  for (let i = 0; i < 50; i++) t.equal(await cached.get('epss', `CVE-${i}`), String(i))
  t.equal(revisions, 1, 'one revision read for fifty reads within the interval')
  await backing.put('epss', [['CVE-0', 'changed'], ['CVE-49', 'changed']])
  t.equal(await cached.get('epss', 'CVE-49'), '49', 'within the interval a cached entry stays as read')
  t.equal(await cached.get('epss', 'CVE-0'), 'changed', 'an entry the bound evicted is read again')
})

test('recheck makes the next read look at the revision', async (t) => {
  const backing = await createMemorySourceStore()
  await backing.put('kev', [['CVE-1', 'a']])
  const cached = withReadCache(backing, { checkEveryMs: 60_000 })
  t.equal(await cached.get('kev', 'CVE-1'), 'a')
  await backing.put('kev', [['CVE-1', 'b']])
  t.equal(await cached.get('kev', 'CVE-1'), 'a', 'within the interval: as read')
  cached.recheck()
  t.equal(await cached.get('kev', 'CVE-1'), 'b', 'after recheck: the import is seen')
})
