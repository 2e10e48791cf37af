// The commands beyond the first CLI's, against the real app on both backends: cancel, decide, host delete,
// keys update, audit; per-command help, --version and suggestions; --min-confidence; scan --wait on the event
// stream; and vulns/host --fail-on refusing to pass what the NVD could not check.
import { test } from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { backends, build, SERVICE_KEY } from '../helper'
import { finding, write } from '../support/results'
import { cli, listen } from '../support/cli'
import { loopbackAddress } from '../support/loopback'
import { redisServerAvailable } from '../support/redis-server'

const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }

test('help, version and suggestions need no server', async (t) => {
  const env = { VULNSCAN_URL: 'http://127.0.0.1:9', VULNSCAN_API_KEY: 'k' }
  const v = await cli(['--version'], env)
  t.equal(v.code, 0)
  t.equal(v.stdout.trim(), version, '--version prints the package version')

  const scanHelp = await cli(['scan', '--help'], env)
  t.equal(scanHelp.code, 0)
  t.match(scanHelp.stdout, /^Usage: vulnscan scan \[options\] \[target\.\.\.\]/, 'per-command help')
  t.match(scanHelp.stdout, /--min-confidence <score>/)
  t.match(scanHelp.stdout, /Global Options:[\s\S]*--url <url>/, 'with the options every command takes')
  t.notMatch(scanHelp.stdout, /--severity/, 'and not another command\'s')
  const hostDelete = await cli(['host', 'delete', '--help'], env)
  t.match(hostDelete.stdout, /^Usage: vulnscan host delete \[options\] <address>/)

  const overview = await cli(['--help'], env)
  for (const command of ['scan [target…]', 'status <scan-id>', 'cancel <scan-id>', 'scans', 'hosts', 'host <address>', 'host delete <address>', 'vulns', 'decide <finding-id> <decision>', 'cve <cve-id>', 'keys create', 'keys list', 'keys update <key-id>', 'keys revoke <key-id>', 'audit', 'health']) {
    t.match(overview.stdout, `\n  ${command} `, `the overview lists ${command}`)
  }

  const typo = await cli(['scna', '127.0.0.1'], env)
  t.equal(typo.code, 2)
  t.match(typo.stderr, /Unknown command 'scna'\n\(Did you mean scan\?\)/)
  const optionTypo = await cli(['vulns', '--hots', '192.0.2.1'], env)
  t.equal(optionTypo.code, 2)
  t.match(optionTypo.stderr, /Unknown option '--hots'\n\(Did you mean --host\?\)/)
  const misplaced = await cli(['--fail-on', 'high', 'vulns'], env)
  t.equal(misplaced.code, 2)
  t.match(misplaced.stderr, /--fail-on goes after the command it belongs to/)
  const lonely = await cli(['vulns', '--min-confidence', 'high'], env)
  t.equal(lonely.code, 2)
  t.match(lonely.stderr, /--min-confidence only applies with --fail-on/)
  const badDecision = await cli(['decide', '0123456789abcdef01234567', 'ignored'], env)
  t.equal(badDecision.code, 2)
  t.match(badDecision.stderr, /--decision must be one of: accepted, false_positive, open/)
})

for (const backend of ['memory', 'redis'] as const) {
  test(`against a live server (${backend})`, async (t) => {
    if (!(await backends()).includes(backend)) {
      t.comment('Redis does not answer: skipped')
      return
    }
    const { app } = await build(t, backend, { WORKER_ENABLED: true })
    const { url, address, port } = await listen(app)
    const env = { VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY }

    // Findings as a worker writes them, from real NVD records, on documentation addresses.
    await app.results.recordHost(write({
      address: '192.0.2.20',
      at: Date.now(),
      scanId: 'seeded-cli',
      services: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '8.9p1', distro: 'Ubuntu-3ubuntu0.1' }, { port: 6379, service: 'redis', product: 'Redis', version: '6.0.15' }],
      findings: [
        finding('192.0.2.20', 22, 'CVE-2023-51385', 'OpenSSH', '8.9p1', 'medium'),
        finding('192.0.2.20', 6379, 'CVE-2022-0543', 'Redis', '6.0.15')
      ]
    }))

    t.test('tables: the confidence note once under the table; --ids for decide', async (t) => {
      const r = await cli(['vulns', '--host', '192.0.2.20', '--ids'], env)
      t.equal(r.code, 0, r.stderr)
      t.match(r.stdout, /CVE-2023-51385 .* medium 50 \[1\] /, 'the score and a note marker beside the confidence')
      t.match(r.stdout, /\n\[1\] The banner carries a distro tag: the distro may have backported the fix\n/, 'the note under the table')
      t.match(r.stdout, /[0-9a-f]{24} .*CVE-2022-0543/, 'the finding id')
      t.match(r.stdout, /10\.0 v3\.1 .*CVE-2022-0543/, 'CVSS with its version')
    })

    t.test('--fail-on ignores findings below confidence 70 unless --min-confidence says otherwise', async (t) => {
      const all = await cli(['vulns', '--host', '192.0.2.20', '--severity', 'critical', '--fail-on', 'critical', '--min-confidence', '0'], env)
      t.equal(all.code, 1)
      t.match(all.stderr, /2 findings at or above critical with confidence 0 or more: failing/, '--min-confidence 0 counts every finding')
      const byDefault = await cli(['vulns', '--host', '192.0.2.20', '--severity', 'critical', '--fail-on', 'critical'], env)
      t.equal(byDefault.code, 1)
      t.match(byDefault.stderr, /1 finding at or above critical: failing/, 'the medium-confidence one (50) is below the default 70')
      const sure = await cli(['vulns', '--host', '192.0.2.20', '--severity', 'critical', '--fail-on', 'critical', '--min-confidence', 'high'], env)
      t.equal(sure.code, 1)
      t.match(sure.stderr, /1 finding at or above critical with confidence 80 or more: failing/, 'a label stands for its floor (high: 80)')
      const bad = await cli(['vulns', '--fail-on', 'critical', '--min-confidence', '101'], env)
      t.equal(bad.code, 2)
      t.match(bad.stderr, /--min-confidence must be a number from 0 to 100/)
      const host = await cli(['host', '192.0.2.20', '--fail-on', 'critical', '--min-confidence', 'high'], env)
      t.equal(host.code, 1, 'host takes it too')
    })

    t.test('decide: accepted, then withdrawn', async (t) => {
      const page = JSON.parse((await cli(['vulns', '--host', '192.0.2.20', '--cve', 'CVE-2022-0543', '--json'], env)).stdout) as { items: Array<{ id: string }> }
      t.equal(page.items.length, 1, '--cve filters')
      const id = page.items[0].id
      const accepted = await cli(['decide', id, 'accepted', '--comment', 'isolated lab'], env)
      t.equal(accepted.code, 0, accepted.stderr)
      t.equal(accepted.stdout, 'CVE-2022-0543 on 192.0.2.20:6379 is now accepted.\n')
      const listed = JSON.parse((await cli(['vulns', '--status', 'accepted', '--json'], env)).stdout) as { items: Array<{ id: string }> }
      t.same(listed.items.map((f) => f.id), [id])
      const gate = await cli(['vulns', '--host', '192.0.2.20', '--severity', 'critical', '--fail-on', 'critical', '--min-confidence', 'high'], env)
      t.equal(gate.code, 0, 'an accepted risk no longer fails the gate')
      const reopened = await cli(['decide', id, 'open'], env)
      t.equal(reopened.code, 0)
      t.match(reopened.stdout, /is now open\./)
      const missing = await cli(['decide', '0123456789abcdef01234567', 'accepted'], env)
      t.equal(missing.code, 3)
      t.match(missing.stderr, /answered 404/)
    })

    t.test('scan --wait follows the event stream, not a poll; then scans, status and cancel', async (t) => {
      const requests: string[] = []
      const onRequest = (req: { method?: string, url?: string }): void => { requests.push(`${req.method} ${req.url}`) }
      app.server.on('request', onRequest)
      const id = `cli-stream-${backend}`
      const r = await cli(['scan', address, '--template', 'discovery', '--ports', String(port), '--id', id, '--wait'], env)
      app.server.off('request', onRequest)
      t.equal(r.code, 0, r.stderr)
      t.match(r.stderr, new RegExp(`scan ${id}: completed\\n`))
      t.match(r.stdout, `Scan ${id} completed: 1 host up, 1 open port.`)
      const during = requests.filter((q) => q.startsWith(`GET /app/scan/${id}`))
      t.same(during, [`GET /app/scan/${id}/events`], 'one event stream, no polling of the scan')

      const list = await cli(['scans', '--status', 'completed'], env)
      t.match(list.stdout, new RegExp(`^${id} +completed +100%`, 'm'))
      const again = await cli(['cancel', id], env)
      t.equal(again.code, 3, 'a finished scan cannot be cancelled')
      t.match(again.stderr, /answered 409/)
      const timeoutAlone = await cli(['status', id, '--timeout', '5'], env)
      t.equal(timeoutAlone.code, 2)
    })

    t.test('host delete needs --yes, then forgets the host', async (t) => {
      const refused = await cli(['host', 'delete', '192.0.2.20'], env)
      t.equal(refused.code, 2)
      t.match(refused.stderr, /add --yes to confirm/)
      t.equal((await cli(['host', '192.0.2.20'], env)).code, 0, 'still there')
      const deleted = await cli(['host', 'delete', '192.0.2.20', '--yes'], env)
      t.equal(deleted.code, 0, deleted.stderr)
      t.equal(deleted.stdout, 'Deleted host 192.0.2.20 and its findings.\n')
      const gone = await cli(['host', '192.0.2.20'], env)
      t.equal(gone.code, 3)
      t.match(gone.stderr, /answered 404/)
    })

    t.test('keys update and the audit log', async (t) => {
      const created = JSON.parse((await cli(['keys', 'create', '--label', 'ci-reader', '--role', 'reader', '--scope', '10.0.0.0/8,192.168.0.0/16', '--json'], env)).stdout) as { id: string, key: string, role: string, scope: string[] }
      t.equal(created.role, 'reader')
      t.same(created.scope, ['10.0.0.0/8', '192.168.0.0/16'])
      const asReader = await cli(['scan', '10.0.0.1'], { ...env, VULNSCAN_API_KEY: created.key })
      t.equal(asReader.code, 3, 'a reader may not post scans')
      t.match(asReader.stderr, /answered 403/)
      const updated = await cli(['keys', 'update', created.id, '--role', 'operator', '--scope', '10.1.0.0/16'], env)
      t.equal(updated.code, 0, updated.stderr)
      t.equal(updated.stdout, `Key ${created.id} (ci-reader): role operator, scope 10.1.0.0/16.\n`)
      const table = await cli(['keys', 'list'], env)
      t.match(table.stdout, new RegExp(`${created.id} .*ci-reader .*operator .*10\\.1\\.0\\.0/16`))
      const nothing = await cli(['keys', 'update', created.id], env)
      t.equal(nothing.code, 2)
      t.match(nothing.stderr, /keys update needs --role or --scope/)

      const audit = await cli(['audit', '--method', 'patch', '--json'], env)
      t.equal(audit.code, 0, audit.stderr)
      const entries = (JSON.parse(audit.stdout) as { items: Array<{ method: string, route: string, targetId: string | null, status: number, keyId: string }> }).items
      t.match(entries, [{ method: 'PATCH', route: '/admin/keys/:id', targetId: created.id, status: 200, keyId: 'service' }], 'the change is in the audit log')
      const shown = await cli(['audit', '--method', 'PATCH'], env)
      t.match(shown.stdout, new RegExp(`PATCH .*/admin/keys/:id .*${created.id}`))
      const bad = await cli(['audit', '--since', 'yesterday-ish'], env)
      t.equal(bad.code, 2)

      // Requests without a valid key are counted per address, not logged: `audit refused` shows the counters.
      t.equal((await cli(['cancel', 'nope'], { ...env, VULNSCAN_API_KEY: 'not-a-key-at-all' })).code !== 0, true)
      const refused = await cli(['audit', 'refused', '--json'], env)
      t.equal(refused.code, 0, refused.stderr)
      t.match(JSON.parse(refused.stdout), { total: 1, items: [{ count: 1 }] })
      t.match((await cli(['audit', 'refused'], env)).stdout, /1 of 1 counters/)
    })
  })
}

test('--fail-on on vulns and host does not pass what the NVD could not check', { skip: redisServerAvailable() ? false : 'redis-server is not installed' }, async (t) => {
  // A Redis daemon of the test's own, the product the scan finds; the NVD is unreachable (the helper's default).
  const daemon = loopbackAddress()
  const redis = spawn('redis-server', ['--bind', daemon, '--port', '6379', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(async () => {
    redis.kill()
    if (redis.exitCode === null) await once(redis, 'exit')
  })
  let out = ''
  redis.stdout.on('data', (c: Buffer) => { out += c.toString() })
  for (let i = 0; i < 100 && !/Ready to accept connections/.test(out); i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.match(out, /Ready to accept connections/, 'redis-server started')

  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend, { WORKER_ENABLED: true })
      const { url } = await listen(app)
      const env = { VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY }
      const scanned = await cli(['scan', daemon, '--ports', '6379', '--wait'], env)
      t.equal(scanned.code, 0, scanned.stderr)
      t.match(scanned.stdout, /Not checked against the vulnerability data: redis:redis \(the NVD was unreachable/)
      // The daemon has no password, so the exposure check reports it (critical): a finding any gate fails on.
      // Accepted here, so what is left to judge is the product the NVD could not check.
      const exposed = (await app.results.listFindings({ limit: 10, offset: 0, host: daemon })).items
      t.same(exposed.map((f) => f.cveId), ['VULNSCAN-REDIS-NOAUTH'], 'the open Redis is the one finding')
      const gateBefore = await cli(['vulns', '--host', daemon, '--fail-on', 'critical'], env)
      t.equal(gateBefore.code, 1, 'a standing critical exposure fails the gate outright')
      const decided = await cli(['decide', exposed[0].id, 'accepted', '-m', 'test daemon'], env)
      t.equal(decided.code, 0, decided.stderr)

      const one = await cli(['vulns', '--host', daemon, '--fail-on', 'critical'], env)
      t.equal(one.code, 3, 'exit 3, not a pass')
      t.match(one.stderr, `--fail-on critical cannot pass the findings of ${daemon}: 1 product(s) could not be checked against the NVD (redis:redis)`)
      const all = await cli(['vulns', '--fail-on', 'low'], env)
      t.equal(all.code, 3, 'every host: the same')
      t.match(all.stderr, /cannot pass the findings: 1 product\(s\)/)
      const host = await cli(['host', daemon, '--fail-on', 'critical'], env)
      t.equal(host.code, 3)
      t.match(host.stderr, `cannot pass host ${daemon}`)
      const plain = await cli(['vulns', '--host', daemon], env)
      t.equal(plain.code, 0, 'without a gate: a list, exit 0')
      t.match(plain.stderr, /Not checked against the vulnerability data: redis:redis/, 'and the list says what was not checked')
      const hostView = await cli(['host', daemon], env)
      t.match(hostView.stdout, /Not checked against the vulnerability data: redis:redis/, 'so does the host view')
    })
  }
})
