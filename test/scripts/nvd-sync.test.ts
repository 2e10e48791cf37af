import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { test } from 'tap'
import { createMemoryIndex } from '../../lib/nvd/memory/cve-index'
import { startFakeNvd } from '../support/fake-nvd'

const ROOT = path.join(__dirname, '..', '..')

interface Run { code: number | null, stderr: string }

/** Runs the CLI as `npm run nvd:sync` would; `onStderr` may act on what it prints (e.g. interrupt it). */
function runSync (env: Record<string, string>, args: string[] = [], onStderr?: (text: string, kill: () => void) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const childEnv: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }
    const child = spawn(process.execPath, ['--import', 'tsx', path.join('scripts', 'nvd-sync.ts'), ...args], { cwd: ROOT, env: childEnv })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString()
      onStderr?.(stderr, () => child.kill('SIGINT'))
    })
    child.stdout.resume()
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stderr }))
  })
}

test('nvd:sync: full, then incremental, against the fake NVD with the embedded index file', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vulnscan-nvd-sync-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const indexFile = path.join(dir, 'index.ndjson.gz')
  const env = { NVD_API_URL: nvd.baseUrl, NVD_INDEX_FILE: indexFile, NVD_RATE_LIMIT: '100', NVD_API_KEY: '' }

  const first = await runSync(env)
  t.equal(first.code, 0, first.stderr)
  t.match(first.stderr, /full: 38 of 38 CVEs \(100\.0%\)/)
  t.match(first.stderr, /full sync done: 38 records in 1 page,/)
  const second = await runSync(env)
  t.equal(second.code, 0, second.stderr)
  t.match(second.stderr, /incremental sync done: 0 records/)
  const forced = await runSync(env, ['--full'])
  t.match(forced.stderr, /full sync done: 38 records/)

  const index = await createMemoryIndex({ filePath: indexFile })
  t.teardown(() => index.close())
  t.equal((await index.stats()).cves, 38, 'the index file holds every record')
  t.ok(await index.getMeta('syncWatermark'))
})

test('nvd:sync: an interrupted run exits 130 and the next run resumes', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null, delayMs: 1500 })
  t.teardown(nvd.close)
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vulnscan-nvd-sync-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const env = { NVD_API_URL: nvd.baseUrl, NVD_INDEX_FILE: path.join(dir, 'index.ndjson.gz'), NVD_RATE_LIMIT: '100' }
  let sent = false
  const interrupted = await runSync(env, [], (text, kill) => {
    if (!sent && text.includes('index: file')) {
      sent = true
      setTimeout(kill, 300)
    }
  })
  t.equal(interrupted.code, 130, interrupted.stderr)
  t.match(interrupted.stderr, /run nvd:sync again to resume/)
  nvd.setDelay(0)
  const resumed = await runSync(env)
  t.equal(resumed.code, 0, resumed.stderr)
  t.match(resumed.stderr, /full sync \(resumed\) done: 38 records/)
})

test('nvd:sync: NVD refusing the key fails with NVD\'s message and exit code 1', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null, apiKeys: ['the-right-key'] })
  t.teardown(nvd.close)
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vulnscan-nvd-sync-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const r = await runSync({ NVD_API_URL: nvd.baseUrl, NVD_INDEX_FILE: path.join(dir, 'i.gz'), NVD_API_KEY: 'a-wrong-key-1234' })
  t.equal(r.code, 1)
  t.match(r.stderr, /404: Invalid apiKey\./)
  t.notMatch(r.stderr, /a-wrong-key-1234/, 'the key is never printed')
})

test('nvd:sync: bad arguments exit 2 with the usage', async (t) => {
  const r = await runSync({ NVD_API_URL: 'http://127.0.0.1:9/rest/json' }, ['--fulll'])
  t.equal(r.code, 2)
  t.match(r.stderr, /Usage: npm run nvd:sync/)
  const s = await runSync({ NVD_API_URL: 'http://127.0.0.1:9/rest/json' }, ['--since', 'whenever'])
  t.equal(s.code, 2)
  t.match(s.stderr, /not an ISO time/)
})

test('nvd:sync: with REDIS_URL the index and the NVD rate window live in Redis', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const prefix = `vulnscan-test-nvd-sync-${randomBytes(6).toString('hex')}`
  const redis = new Redis({ host: '127.0.0.1', port: 6379, maxRetriesPerRequest: 1 })
  t.teardown(async () => {
    const keys = await redis.keys(prefix + ':*')
    if (keys.length > 0) await redis.del(...keys)
    redis.disconnect()
  })
  const r = await runSync({ NVD_API_URL: nvd.baseUrl, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: prefix, NVD_RATE_LIMIT: '100' })
  t.equal(r.code, 0, r.stderr)
  t.match(r.stderr, /index: redis/)
  t.match(r.stderr, /shared through Redis/)
  t.equal(await redis.hlen(`${prefix}:nvd:lm`), 38, 'every record is in the Redis index')
  t.ok(await redis.hget(`${prefix}:nvd:meta`, 'syncWatermark'))
  t.equal(await redis.zcard(`${prefix}:nvd:ratelimit`), 1, 'the one request was counted in the shared window')
})
