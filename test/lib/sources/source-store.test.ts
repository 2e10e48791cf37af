// One contract for the source store, run on the embedded file-backed backend and on Redis.
import { test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Redis } from 'ioredis'
import { createMemorySourceStore } from '../../../lib/sources/memory'
import { createRedisSourceStore } from '../../../lib/sources/redis'
import type { SourceStore } from '../../../lib/sources/source-store'
import { REDIS_TEST_URL, backends, deletePrefix, uniquePrefix } from '../../helper'

interface Opened {
  store: SourceStore
  /** A second handle on the same data, as another process would open it. */
  other: () => Promise<SourceStore>
  done: () => Promise<void>
}

async function open (backend: 'memory' | 'redis'): Promise<Opened> {
  if (backend === 'memory') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-sources-'))
    const filePath = path.join(dir, 'sources.ndjson.gz')
    return {
      store: await createMemorySourceStore({ filePath }),
      other: async () => await createMemorySourceStore({ filePath }),
      done: async () => { fs.rmSync(dir, { recursive: true, force: true }) }
    }
  }
  const redis = new Redis(REDIS_TEST_URL)
  const prefix = uniquePrefix('sources') + ':'
  return {
    store: createRedisSourceStore({ redis, prefix }),
    other: async () => createRedisSourceStore({ redis, prefix }),
    done: async () => {
      await deletePrefix(redis, prefix)
      redis.disconnect()
    }
  }
}

async function all (store: SourceStore, table: string): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = []
  for await (const batch of store.scan(table, 7)) out.push(...batch)
  return out.sort((a, b) => a[0].localeCompare(b[0]))
}

test('source store contract', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { store, other, done } = await open(backend)
      t.teardown(done)

      t.equal(await store.get('kev', 'CVE-2024-1'), null, 'an empty table has nothing')
      t.equal(await store.count('kev'), 0)
      const rev0 = await store.revision()
      await store.put('kev', [['CVE-2024-1', 'a'], ['CVE-2024-2', 'b']])
      t.not(await store.revision(), rev0, 'a write changes the revision')
      await store.put('kev', [['CVE-2024-2', 'B']])
      t.equal(await store.get('kev', 'CVE-2024-2'), 'B', 'put replaces')
      t.same(await store.getMany('kev', ['CVE-2024-2', 'CVE-none', 'CVE-2024-1']), ['B', null, 'a'], 'getMany keeps the order of keys')
      t.same(await store.getMany('kev', []), [])
      t.equal(await store.count('kev'), 2)
      t.equal(await store.get('epss', 'CVE-2024-1'), null, 'tables are separate')

      await store.delete('kev', ['CVE-2024-1'])
      t.same(await all(store, 'kev'), [['CVE-2024-2', 'B']])

      const many = Array.from({ length: 5000 }, (_, i) => [`k${i}`, `v${i}`] as const)
      const n = await store.replace('epss', (function * () {
        for (let i = 0; i < many.length; i += 1000) yield many.slice(i, i + 1000)
      })())
      t.equal(n, 5000, 'replace reports what it stored')
      t.equal(await store.count('epss'), 5000)
      t.equal((await all(store, 'epss')).length, 5000, 'scan yields every entry once')
      await store.replace('epss', [[['only', '1']]])
      t.same(await all(store, 'epss'), [['only', '1']], 'replace drops what the new table lacks')
      await store.replace('epss', [])
      t.equal(await store.count('epss'), 0, 'replacing with nothing empties the table')

      await store.setMeta('kev:catalogVersion', '2026.11.20')
      t.equal(await store.getMeta('kev:catalogVersion'), '2026.11.20')
      t.equal(await store.getMeta('nothing'), null)

      await store.clear('kev')
      t.equal(await store.count('kev'), 0)
      await t.rejects(store.put('bad table', []), /invalid source table name/)

      // What one process writes, another opens after flush(); later writes it sees through revision(), without reopening.
      await store.put('distro', [['debian:bookworm:openssh', '{"x":1}']])
      await store.flush()
      const second = await other()
      t.equal(await second.get('distro', 'debian:bookworm:openssh'), '{"x":1}', 'a second handle reads what was flushed')
      const before = await second.revision()
      await store.put('distro', [['debian:bookworm:redis', '{"y":2}']])
      await store.flush()
      // The file backend looks at its file at most once a second.
      if (backend === 'memory') await new Promise((resolve) => setTimeout(resolve, 1100))
      t.not(await second.revision(), before, 'the second handle sees the revision change')
      t.equal(await second.get('distro', 'debian:bookworm:redis'), '{"y":2}', 'and then reads the new entry')
      await second.close()
      await store.close()
    })
  }
})

test('memory store without a file keeps data in memory only', async (t) => {
  const store = await createMemorySourceStore()
  await store.put('kev', [['a', '1']])
  await store.flush()
  t.equal(await store.get('kev', 'a'), '1')
})

test('memory store refuses a file that is not its own', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-sources-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'other.ndjson')
  fs.writeFileSync(file, '{"format":"something-else","version":1}\n')
  await t.rejects(createMemorySourceStore({ filePath: file }), /not a vulnscan source store file/)
})
