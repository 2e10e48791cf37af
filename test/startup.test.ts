// A service that cannot start because of its set-up says what to do in one sentence, without a stack trace:
// REDIS_URL without DATABASE_URL, and a DATABASE_URL whose role does not exist (createdb alone, without createuser).
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { databaseAnswers, DATABASE_TEST_URL, REDIS_TEST_URL } from './helper'

const ROOT = join(__dirname, '..')

function start (env: Record<string, string>): Promise<{ code: number, stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', join(ROOT, 'server.ts')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', FASTIFY_AUTOLOAD_TYPESCRIPT: '1', PORT: '0', HOST: '127.0.0.1', SERVICE_API_KEY: 'startup-test-key-0123456789', LOG_LEVEL: 'silent', ...env },
      timeout: 120_000
    }, (err, _stdout, stderr) => { resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stderr }) })
  })
}

test('set-up errors end the start with a sentence, not a stack', async (t) => {
  const noDb = await start({ REDIS_URL: REDIS_TEST_URL })
  t.equal(noDb.code, 1)
  t.match(noDb.stderr, /^vulnscan failed to start: REDIS_URL is set but DATABASE_URL is not/)
  t.notMatch(noDb.stderr, /\n\s+at /, 'no stack trace')

  if (!await databaseAnswers()) return
  const url = new URL(DATABASE_TEST_URL)
  url.username = 'vulnscan_no_such_role'
  const noRole = await start({ REDIS_URL: REDIS_TEST_URL, DATABASE_URL: url.toString(), CREDENTIALS_KEY: 'ab'.repeat(32), DATABASE_SCHEMA: 'startup_test' })
  t.equal(noRole.code, 1)
  t.match(noRole.stderr, /role "vulnscan_no_such_role" does not exist\. Create the role and a database it owns: createuser/)
  t.notMatch(noRole.stderr, /\n\s+at /, 'no stack trace')
})
