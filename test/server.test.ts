// The README's first command: the service starts on the embedded default and answers /health; with no
// SERVICE_API_KEY it generates one, prints it once, and that key works.
import { test } from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'

const ROOT = join(__dirname, '..')

test('npm start without Redis or a key: embedded default, a printed key, /health answers', async (t) => {
  // As `npm start` runs it: the tsx command (under which @fastify/autoload loads the .ts plugins).
  const child = spawn(join(ROOT, 'node_modules', '.bin', 'tsx'), [join(ROOT, 'server.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'info', NVD_INDEX_FILE: '', SOURCES_FILE: '' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  // SIGTERM, which tsx passes on to the server process it starts.
  t.teardown(() => { child.kill('SIGTERM') })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  const deadline = Date.now() + 30_000
  let url: string | undefined
  while (url === undefined && Date.now() < deadline) {
    url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1]
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.ok(url, 'the server listens')
  const key = /Generated a key for this run only:\s+(\S+)/.exec(stderr)?.[1]
  t.ok(key, 'a generated key is printed on stderr')
  t.equal(stderr.split(key ?? '∅').length - 1, 1, 'printed once')
  t.notOk(stdout.includes(key ?? '∅'), 'never in the log')
  t.match(stdout, /REDIS_URL is not set: running on the embedded in-memory store and queue/, 'one clear warning')
  t.equal(stdout.split('REDIS_URL is not set').length - 1, 1, 'only once')

  const health = await fetch(`${url}/health`)
  t.equal(health.status, 200)
  t.equal((await health.json() as { status: string }).status, 'ok')
  t.equal((await fetch(`${url}/host`, { headers: { 'x-api-key': key ?? '' } })).status, 200, 'the printed key works')
  t.equal((await fetch(`${url}/host`, { headers: { 'x-api-key': 'not-it' } })).status, 401)

  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
  t.pass('stops on SIGTERM')
})
