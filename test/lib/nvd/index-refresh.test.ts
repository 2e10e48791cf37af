// A running server's embedded index sees an nvd:import made by another process, without a restart,
// and its own pending save never overwrites that import.
import { test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createMemoryIndex } from '../../../lib/nvd/memory/cve-index'
import { rawFixture } from '../../support/nvd-fixtures'

const MOSQUITTO = 'cpe:2.3:a:eclipse:mosquitto:2.0.11:*:*:*:*:*:*:*'

test('the file index reloads a file another process replaced', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-refresh-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const filePath = path.join(dir, 'index.ndjson.gz')

  const server = await createMemoryIndex({ filePath, saveDelayMs: 50 })
  t.teardown(() => server.close())
  t.same(await server.match(MOSQUITTO), [], 'nothing imported yet')
  t.equal(await server.refresh(), false, 'no file: nothing to reload')

  // Another process (npm run nvd:import) writes the file.
  const importer = await createMemoryIndex({ filePath })
  await importer.upsertRaw([rawFixture('CVE-2023-28366')])
  await importer.close()

  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal(await server.refresh(), true, 'the server sees the new file')
  t.same((await server.match(MOSQUITTO)).map((m) => m.cve.id), ['CVE-2023-28366'], 'and matches against it')
  t.equal(await server.refresh(), false, 'once')

  // The server changes something (an on-demand fetch) while another import replaces the file: the import wins.
  await server.markProductFetched('acme', 'widget', 3600)
  const second = await createMemoryIndex({ filePath })
  await second.upsertRaw([rawFixture('CVE-2024-6387')])
  await second.close()
  await server.flush()
  const reread = await createMemoryIndex({ filePath })
  t.teardown(() => reread.close())
  t.ok(await reread.get('CVE-2024-6387'), 'the server did not overwrite the newer import')
  t.ok(await server.get('CVE-2024-6387'), 'and took it in instead')
})
