// The offline path as a user takes it, on the embedded files and on Redis: every source imported on one install,
// `data export` to a signed bundle, `data import` on a second install that never saw a feed, and the second install
// decides the same findings as the first. A bundle changed by one byte, cut short, or signed by another key is
// refused, and nothing of it is written.
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { generateKeyPairSync } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { gunzipSync, gzipSync } from 'node:zlib'
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

async function fails (p: Promise<unknown>): Promise<{ code: number, stderr: string }> {
  return await p.then(() => ({ code: 0, stderr: '' }), (err: { code: number, stderr: string }) => err)
}

const CPES: Array<[string, string[]]> = [
  ['cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*', ['--distro', 'debian:bookworm:openssh:1:9.2p1-2+deb12u2']],
  ['cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*', []],
  ['cpe:2.3:a:redis:redis:7.0.14:*:*:*:*:*:*:*', []]
]

test('data export on one install, data import on another: the same findings, and a tampered bundle refused', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vulnscan-bundle-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const signKey = path.join(dir, 'bundle.pem')
  const verifyKey = path.join(dir, 'bundle.pub.pem')
  const otherKey = path.join(dir, 'other.pub.pem')
  fs.writeFileSync(signKey, privateKey.export({ type: 'pkcs8', format: 'pem' }))
  fs.writeFileSync(verifyKey, publicKey.export({ type: 'spki', format: 'pem' }))
  fs.writeFileSync(otherKey, generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }))
  const feed = path.join(dir, 'nvdcve-2.0-fixtures.json')
  fs.writeFileSync(feed, JSON.stringify({ format: 'NVD_CVE', version: '2.0', vulnerabilities: nvdRecords().map((cve) => ({ cve })) }))

  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const install = (name: string): Record<string, string> => {
        if (backend === 'memory') return { NVD_INDEX_FILE: path.join(dir, `${backend}-${name}-nvd.json.gz`), SOURCES_FILE: path.join(dir, `${backend}-${name}-sources.ndjson.gz`) }
        const prefix = uniquePrefix(`bundle-${name}`).replace(/:/g, '.')
        t.teardown(async () => {
          const redis = new Redis(REDIS_TEST_URL)
          await deletePrefix(redis, prefix)
          redis.disconnect()
        })
        return { REDIS_URL: REDIS_TEST_URL, REDIS_PREFIX: prefix, QUEUE_PREFIX: `${prefix}-bull` }
      }
      const online = install('online')
      await command('nvd-import.ts', ['--', '--complete', feed], online)
      await command('cve-import.ts', ['--', CVE5_TREE], online)
      await command('distro-import.ts', ['--', DEBIAN_TRACKER], online)
      await command('kev-import.ts', ['--', KEV_CATALOG], online)
      await command('epss-import.ts', ['--', EPSS_SCORES], online)

      const bundle = path.join(dir, `${backend}.vsbundle`)
      const made = JSON.parse((await command('data.ts', ['--', 'export', bundle, '--sign-key', signKey, '--json'], online)).stdout)
      t.match(made, { nvdRecords: 14, signed: true, sha256: /^[0-9a-f]{64}$/ })
      t.ok(Object.keys(made.tables).length >= 4, `source tables in the bundle: ${Object.keys(made.tables).join(', ')}`)

      const offline = install('offline')
      const loaded = JSON.parse((await command('data.ts', ['--', 'import', bundle, '--verify-key', verifyKey, '--json'], offline)).stdout)
      t.match(loaded, { nvdRecords: 14, signed: true, signatureVerified: true, sha256: made.sha256 })
      t.same(loaded.tables, made.tables, 'every table whole')

      const status = async (env: Record<string, string>): Promise<unknown> =>
        (JSON.parse((await command('data.ts', ['--', 'status', '--json'], env)).stdout) as Array<{ name: string, imported: boolean, records: number, dataDate: string | null }>)
          .map((s) => ({ name: s.name, imported: s.imported, records: s.records, dataDate: s.dataDate }))
      t.same(await status(offline), await status(online), 'data status says the same on both installs')
      for (const [cpe, extra] of CPES) {
        const verdicts = async (env: Record<string, string>): Promise<unknown> => JSON.parse((await command('nvd-match.ts', ['--', cpe, ...extra, '--json'], env)).stdout).verdicts
        const a = await verdicts(online)
        t.ok(Array.isArray(a) && a.length > 0, `${cpe} ${extra.join(' ')}: ${(a as unknown[]).length} verdicts online`)
        t.same(await verdicts(offline), a, 'and the same verdicts offline')
      }

      // Tampered: one character of one record changed, the file gzip'd again.
      const text = gunzipSync(fs.readFileSync(bundle)).toString()
      const changed = path.join(dir, `${backend}-changed.vsbundle`)
      fs.writeFileSync(changed, gzipSync(text.replace('"CVE-2024-6387"', '"CVE-2024-6388"')))
      const cut = path.join(dir, `${backend}-cut.vsbundle`)
      fs.writeFileSync(cut, gzipSync(text.slice(0, text.lastIndexOf('{"end":'))))
      const third = install('refused')
      t.match(await fails(command('data.ts', ['--', 'import', changed], third)), { code: 1, stderr: /refused: its SHA-256 is not the one its end line gives/ })
      t.match(await fails(command('data.ts', ['--', 'import', cut], third)), { code: 1, stderr: /refused: no end line/ })
      t.match(await fails(command('data.ts', ['--', 'import', bundle, '--verify-key', otherKey], third)), { code: 1, stderr: /refused: the signature does not verify/ })
      const unsigned = path.join(dir, `${backend}-unsigned.vsbundle`)
      await command('data.ts', ['--', 'export', unsigned], online)
      t.match(await fails(command('data.ts', ['--', 'import', unsigned, '--verify-key', verifyKey], third)), { code: 1, stderr: /refused: not signed/ })
      const nothing = JSON.parse((await command('data.ts', ['--', 'status', '--json'], third)).stdout) as Array<{ imported: boolean }>
      t.ok(nothing.every((s) => !s.imported), 'nothing of a refused bundle was written')
      t.match((await command('data.ts', ['--', 'import', unsigned], third)).stderr, /unsigned: its checksum was verified, not who made it/)
    })
  }
})
