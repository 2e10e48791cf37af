// The `vulnscan` CLI as a CI job runs it: a child process against a live server, judged by its output
// and its exit status (0 ok, 1 findings at or above --fail-on, 2 usage error, 3 API or network error).
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { build, SERVICE_KEY } from '../helper'

const BIN = join(__dirname, '..', '..', 'bin', 'vulnscan.js')

interface Run { code: number, stdout: string, stderr: string }

function cli (args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve) => {
    // The child must not inherit the runner's VULNSCAN_* settings or colour forcing.
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VULNSCAN_') && k !== 'FORCE_COLOR'))
    execFile(process.execPath, [BIN, ...args], { env: { ...base, NO_COLOR: '1', ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1
      resolve({ code, stdout, stderr })
    })
  })
}

/** A port nothing listens on: bound, then released. */
async function deadPort (): Promise<number> {
  const s = createServer()
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  const { port } = s.address() as AddressInfo
  await new Promise((resolve) => s.close(resolve))
  return port
}

test('usage errors exit 2 with a message, before any request', async (t) => {
  const env = { VULNSCAN_URL: `http://127.0.0.1:${await deadPort()}`, VULNSCAN_API_KEY: 'k' }
  const help = await cli(['--help'], env)
  t.equal(help.code, 0)
  t.match(help.stdout, /Usage: vulnscan <command>/)
  t.match(help.stdout, /Exit status: 0 ok, 1 findings at or above --fail-on, 2 usage error, 3 API or network error/)
  const cases: Array<[string[], RegExp]> = [
    [[], /No command given/],
    [['frobnicate'], /Unknown command 'frobnicate'/],
    [['scan'], /scan needs at least one target/],
    [['scan', '127.0.0.1', '--priority', '9'], /--priority must be an integer from 1 to 5/],
    [['scan', '127.0.0.1', '--template', 'huge'], /--template must be one of: quick, standard, full, discovery/],
    [['scan', '127.0.0.1', '--timeout', '5'], /--timeout only applies with --wait/],
    [['hosts', '--severity', 'high'], /'hosts' does not take --severity/],
    [['vulns', '--fail-on', 'extreme'], /--fail-on must be one of: critical, high, medium, low/],
    [['vulns', '--bogus'], /Unknown option '--bogus'/],
    [['host'], /host needs one address/],
    [['keys'], /keys needs create, list or revoke/],
    [['keys', 'create'], /keys create needs --label/],
    [['hosts', '--url', 'ftp://example'], /--url must be an http/]
  ]
  for (const [args, message] of cases) {
    const r = await cli(args, env)
    t.equal(r.code, 2, `vulnscan ${args.join(' ')} exits 2`)
    t.match(r.stderr, message, `and says why: ${String(message)}`)
    t.equal(r.stdout, '', 'nothing on stdout')
  }
  const noKey = await cli(['hosts'], { VULNSCAN_URL: env.VULNSCAN_URL })
  t.equal(noKey.code, 2, 'no key: usage error')
  t.match(noKey.stderr, /No API key: pass --key <key> or set VULNSCAN_API_KEY/)
})

test('network errors exit 3 and name the URL', async (t) => {
  const url = `http://127.0.0.1:${await deadPort()}`
  const r = await cli(['hosts', '--url', url, '--key', 'k'])
  t.equal(r.code, 3)
  t.match(r.stderr, `Cannot reach vulnscan at ${url}: ECONNREFUSED`)
})

test('against a live server', async (t) => {
  const { app } = await build(t, 'memory')
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const env = { VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY }

  t.test('a wrong key: a clear message and exit 3', async (t) => {
    const r = await cli(['hosts'], { ...env, VULNSCAN_API_KEY: 'not-the-key-0123456789' })
    t.equal(r.code, 3)
    t.match(r.stderr, /The API key was refused \(401 Invalid API key\)\. Pass a valid key with --key or VULNSCAN_API_KEY\./)
    t.notMatch(r.stderr, /not-the-key/, 'the key is not echoed')
    const flag = await cli(['hosts', '--key', 'also-wrong-0123456789', '--url', url])
    t.equal(flag.code, 3, '--key and --url work like the environment')
  })

  t.test('health needs no key', async (t) => {
    const r = await cli(['health', '--url', url])
    t.equal(r.code, 0)
    t.match(r.stdout, /^ok \(version \S+; store memory: ok; queue memory: ok\)/)
  })

  t.test('a target the server refuses is a usage error with the server\'s words', async (t) => {
    const r = await cli(['scan', '999.1.2.3'], env)
    t.equal(r.code, 2)
    t.match(r.stderr, /Rejected: .*999\.1\.2\.3/)
  })

  t.test('keys create, list, revoke', async (t) => {
    const created = await cli(['keys', 'create', '--label', 'ci-runner', '--expires', '30d', '--json'], env)
    t.equal(created.code, 0, created.stderr)
    const key = JSON.parse(created.stdout) as { id: string, key: string, label: string }
    t.equal(key.label, 'ci-runner')
    const table = await cli(['keys', 'list'], env)
    t.equal(table.code, 0)
    t.match(table.stdout, key.id)
    t.match(table.stdout, 'ci-runner')
    t.notMatch(table.stdout, key.key, 'the list never shows a key')
    const asUser = await cli(['hosts', '--json'], { ...env, VULNSCAN_API_KEY: key.key })
    t.equal(asUser.code, 0, 'the new key works')
    const forbidden = await cli(['keys', 'list'], { ...env, VULNSCAN_API_KEY: key.key })
    t.equal(forbidden.code, 3, 'a dynamic key may not manage keys')
    t.match(forbidden.stderr, /answered 403/)
    const revoked = await cli(['keys', 'revoke', key.id], env)
    t.equal(revoked.code, 0)
    t.match(revoked.stdout, `Revoked key ${key.id}.`)
    const after = await cli(['hosts'], { ...env, VULNSCAN_API_KEY: key.key })
    t.equal(after.code, 3, 'the revoked key is refused')
    const again = await cli(['keys', 'revoke', key.id], env)
    t.equal(again.code, 3)
    t.match(again.stderr, /answered 404: No API key/)
  })

  t.test('scan without --wait prints the id and exits 0', async (t) => {
    const r = await cli(['scan', '127.0.0.1', '--template', 'discovery', '--id', 'cli-nowait', '--priority', '1', '--json'], env)
    t.equal(r.code, 0, r.stderr)
    t.same(JSON.parse(r.stdout), { status: 'Message sent successfully', id: 'cli-nowait' })
  })
})
