import { test } from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { join } from 'node:path'
import { backends, build, SERVICE_KEY } from '../helper'

const run = promisify(execFile)
const ROOT = join(__dirname, '..', '..')
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx')

async function keys (env: Record<string, string>, ...args: string[]): Promise<{ stdout: string, stderr: string, code: number }> {
  try {
    const { stdout, stderr } = await run(TSX, [join(ROOT, 'scripts', 'keys.ts'), ...args], { env: { PATH: process.env.PATH, ...env }, cwd: ROOT })
    return { stdout, stderr, code: 0 }
  } catch (err) {
    const e = err as { stdout: string, stderr: string, code: number }
    return { stdout: e.stdout, stderr: e.stderr, code: e.code }
  }
}

test('npm run keys: create, list and revoke, seen by a running API at once', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis answers (required under CI=true)')
  const { app, config } = await build(t, 'redis')
  const env = { REDIS_URL: config.REDIS_URL!, REDIS_PREFIX: config.REDIS_PREFIX }

  const created = await keys(env, 'create', '--label', 'ci', '--expires', '30d', '--json')
  t.equal(created.code, 0, created.stderr)
  const key = JSON.parse(created.stdout)
  t.match(key, { label: 'ci', key: /^vsk_/ })
  t.ok(Date.parse(key.expiresAt) > Date.now() + 29 * 86400_000, 'expires in 30 days')
  t.equal((await app.inject({ url: '/host', headers: { 'x-api-key': key.key } })).statusCode, 200, 'the API accepts it')

  const listed = await keys(env, 'list')
  t.equal(listed.code, 0)
  t.match(listed.stdout, key.id)
  t.notMatch(listed.stdout, key.key, 'the key itself is never listed')
  const viaApi = (await app.inject({ url: '/admin/keys', headers: { 'x-api-key': SERVICE_KEY } })).json()
  t.same(viaApi.items.map((k: { id: string }) => k.id), [key.id], 'the API lists the CLI\'s key')

  const revoked = await keys(env, 'revoke', key.id)
  t.equal(revoked.code, 0)
  t.equal((await app.inject({ url: '/host', headers: { 'x-api-key': key.key } })).statusCode, 401, 'revoked at once')
  const again = await keys(env, 'revoke', key.id)
  t.equal(again.code, 1)
  t.match(again.stderr, /No key with id/)
})

test('npm run keys: clear errors', async (t) => {
  const noRedis = await keys({}, 'list')
  t.equal(noRedis.code, 2)
  t.match(noRedis.stderr, /REDIS_URL is not set/)
  const usage = await keys({ REDIS_URL: 'redis://127.0.0.1:6379' }, 'frobnicate')
  t.equal(usage.code, 2)
  t.match(usage.stderr, /Unknown command 'frobnicate'/)
  const badLife = await keys({ REDIS_URL: 'redis://127.0.0.1:6379' }, 'create', '--label', 'x', '--expires', 'soon')
  t.equal(badLife.code, 2)
  t.match(badLife.stderr, /--expires 'soon'/)
})

test('npm run keys: roles and scopes, created and changed from the command line', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis answers (required under CI=true)')
  const { app, config } = await build(t, 'redis')
  const env = { REDIS_URL: config.REDIS_URL!, REDIS_PREFIX: config.REDIS_PREFIX }
  const created = await keys(env, 'create', '--label', 'team', '--role', 'reader', '--scope', '127.30.0.0/16', '--json')
  t.equal(created.code, 0, created.stderr)
  const key = JSON.parse(created.stdout)
  t.match(key, { role: 'reader', scope: ['127.30.0.0/16'] })
  const h = { 'x-api-key': key.key }
  const scan = { targets: [{ value: '127.30.0.1', type: 'single_ip' }] }
  t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scan })).statusCode, 403, 'a reader may not post')
  const updated = await keys(env, 'update', key.id, '--role', 'operator', '--json')
  t.equal(updated.code, 0, updated.stderr)
  t.match(JSON.parse(updated.stdout), { role: 'operator', scope: ['127.30.0.0/16'] })
  t.equal((await app.inject({ method: 'POST', url: '/app/scan', headers: h, payload: scan })).statusCode, 200, 'the running API sees the change at once')
  t.match((await keys(env, 'list')).stdout, /operator scope 127\.30\.0\.0\/16/)
  const bad = await keys(env, 'create', '--label', 'x', '--role', 'root')
  t.equal(bad.code, 2)
  t.match(bad.stderr, /--role 'root'/)
  const badScope = await keys(env, 'update', key.id, '--scope', 'nowhere')
  t.equal(badScope.code, 2)
  t.match(badScope.stderr, /--scope/)
})
