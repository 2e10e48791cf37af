// The import commands and nvd:match as a user runs them, on the embedded files and on Redis: every source
// imported from real records, then one product matched against all of them at once.
import { test } from 'tap'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import { backends, deletePrefix, REDIS_TEST_URL, uniquePrefix } from '../helper'
import { CVE5_TREE } from '../support/cve5-fixtures'
import { DEBIAN_TRACKER, EPSS_SCORES, KEV_CATALOG, nvdRecords } from '../support/sources'

const ROOT = path.join(__dirname, '..', '..')
const run = promisify(execFile)

async function command (script: string, args: string[], env: Record<string, string>): Promise<{ stdout: string, stderr: string }> {
  return await run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', script), ...args],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env }, maxBuffer: 1 << 24 })
}

interface Verdict { id: string, source: string, status: string, confidence: string, rule: string }

test('import every source, then nvd:match answers from all of them', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-sources-cli-'))
      t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
      let env: Record<string, string>
      if (backend === 'redis') {
        const prefix = uniquePrefix('sources-cli').replace(/:/g, '.')
        env = { REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: prefix, QUEUE_PREFIX: `${prefix}-bull` }
        t.teardown(async () => {
          const redis = new Redis(REDIS_TEST_URL)
          await deletePrefix(redis, prefix)
          await deletePrefix(redis, `${prefix}-bull`)
          redis.disconnect()
        })
      } else {
        env = { NVD_INDEX_FILE: path.join(dir, 'nvd-index.json.gz'), SOURCES_FILE: path.join(dir, 'sources.ndjson.gz') }
      }
      const feed = path.join(dir, 'nvdcve-2.0-fixtures.json')
      fs.writeFileSync(feed, JSON.stringify({ format: 'NVD_CVE', version: '2.0', vulnerabilities: nvdRecords().map((cve) => ({ cve })) }))

      t.match((await command('nvd-import.ts', ['--', '--complete', feed], env)).stderr, /14 records, 14 new or updated[\s\S]*complete as of/)
      t.match((await command('cve-import.ts', ['--', CVE5_TREE], env)).stdout, /\(directory\): \d+ read, \d+ added/)
      t.match((await command('distro-import.ts', ['--', DEBIAN_TRACKER], env)).stdout, /Debian security tracker: \d+ CVE verdicts/)
      t.match((await command('kev-import.ts', ['--', KEV_CATALOG], env)).stderr, /12 CVEs stored/)
      t.match((await command('epss-import.ts', ['--', EPSS_SCORES], env)).stderr, /43 CVEs stored/)

      const ssh = JSON.parse((await command('nvd-match.ts', ['--', 'cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*',
        '--distro', 'debian:bookworm:openssh:1:9.2p1-2+deb12u10', '--json'], env)).stdout)
      const by = Object.fromEntries((ssh.verdicts as Verdict[]).map((v) => [v.id, v]))
      t.match(by['CVE-2023-51385'], { source: 'distribution', status: 'fixed_by_distribution', rule: /1:9\.2p1-2\+deb12u10 >= 1:9\.2p1-2\+deb12u2/ })
      t.match(by['CVE-2024-6387'], { source: 'distribution', status: 'fixed_by_distribution' })
      t.match(by['CVE-2025-61985'], { source: 'cna', status: 'open', confidence: 'medium' }, 'the NVD has not analysed it: the CNA decides')
      t.match(ssh.matchedAgainst, { nvd: { cves: 14, authoritativeAsOf: String }, cve5: { records: Number }, distributions: { debian: { packages: Number } }, kev: { count: 12 }, epss: { count: 43 } })

      const older = JSON.parse((await command('nvd-match.ts', ['--', 'cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*',
        '--distro', 'debian:bookworm:openssh:1:9.2p1-2+deb12u2', '--json'], env)).stdout)
      t.match((older.verdicts as Verdict[]).find((v) => v.id === 'CVE-2024-6387'), { status: 'open', source: 'distribution', confidence: 'high' }, 'an older revision: open')

      const redis = JSON.parse((await command('nvd-match.ts', ['--', 'cpe:2.3:a:redis:redis:7.0.14:*:*:*:*:*:*:*', '--json'], env)).stdout)
      t.match((redis.verdicts as Verdict[]).find((v) => v.id === 'CVE-2024-31449'), { status: 'open', source: /^(cna|adp)$/, confidence: 'medium' })
      // 7.0.15 is the upstream version Debian 12 patched in 5:7.0.15-1~deb12u2: without a revision, a lead.
      const shipped = JSON.parse((await command('nvd-match.ts', ['--', 'cpe:2.3:a:redis:redis:7.0.15:*:*:*:*:*:*:*', '--json'], env)).stdout)
      t.match((shipped.verdicts as Verdict[]).find((v) => v.id === 'CVE-2024-31449'), { status: 'potential', source: 'distribution', confidence: 'low', confidenceScore: 40 })

      const bad = await command('nvd-match.ts', ['--', 'cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*', '--distro', 'arch:x'], env).catch((err: { code: number, stdout: string }) => err)
      t.match(bad, { code: 2, stdout: /--distro must start with debian: or ubuntu:/ }, 'a malformed --distro is a usage error')
    })
  }
})
