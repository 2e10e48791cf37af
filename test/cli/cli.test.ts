// The `vulnscan` CLI as a CI job runs it: a child process against a live server, judged by its output
// and its exit status (0 ok, 1 findings at or above --fail-on, 2 usage error, 3 API or network error).
import { test } from 'tap'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { build, SERVICE_KEY } from '../helper'
import { finding, write } from '../support/results'
import { startFakeNvd } from '../support/fake-nvd'
import { rawFixture } from '../support/nvd-fixtures'
import { listen } from '../support/cli'
import { loopbackAddress } from '../support/loopback'

const BIN = join(__dirname, '..', '..', 'bin', 'vulnscan.js')

interface Run { code: number, stdout: string, stderr: string }

function cli (args: string[], env: Record<string, string | undefined> = {}): Promise<Run> {
  return new Promise((resolve) => {
    // The child runs as a user's shell would start it: without the runner's VULNSCAN_* settings, colour
    // forcing, or the loader hooks tap puts in NODE_OPTIONS.
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VULNSCAN_') && !k.startsWith('TAP') && k !== 'FORCE_COLOR' && k !== 'NODE_OPTIONS'))
    execFile(process.execPath, [BIN, ...args], { env: { ...base, NO_COLOR: '1', ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1
      resolve({ code, stdout, stderr })
    })
  })
}

// Where a port nothing listens on is found: bound, then released.
const DEAD_HOST = loopbackAddress()

/** A port nothing listens on: bound, then released. */
async function deadPort (): Promise<number> {
  const s = createServer()
  await new Promise<void>((resolve) => s.listen(0, DEAD_HOST, resolve))
  const { port } = s.address() as AddressInfo
  await new Promise((resolve) => s.close(resolve))
  return port
}

test('usage errors exit 2 with a message, before any request', async (t) => {
  const env = { VULNSCAN_URL: `http://${DEAD_HOST}:${await deadPort()}`, VULNSCAN_API_KEY: 'k' }
  const help = await cli(['--help'], env)
  t.equal(help.code, 0)
  t.match(help.stdout, /Usage: vulnscan <command>/)
  // Wrapped to the terminal's width: the words, whatever line they fall on.
  t.match(help.stdout, new RegExp(/Exit status: 0 ok, 1 findings at or above --fail-on, 2 usage error, 3 API or network error/.source.replace(/ /g, '\\s+')))
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
  const url = `http://${DEAD_HOST}:${await deadPort()}`
  const r = await cli(['hosts', '--url', url, '--key', 'k'])
  t.equal(r.code, 3)
  t.match(r.stderr, `Cannot reach vulnscan at ${url}: ECONNREFUSED`)
})

test('against a live server', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(() => nvd.close())
  const { app } = await build(t, 'memory', { WORKER_ENABLED: true, NVD_API_URL: nvd.baseUrl, NVD_RATE_LIMIT: 1000 })
  const { url } = await listen(app)
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
    t.match(r.stdout, /^ok \(version \S+; store memory: ok; queue memory: ok; NVD index: \d+ CVEs, last sync \S+\)/)
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

  // Results as a worker would have written them, from the real NVD fixture records, on documentation-only
  // addresses that no scan in this file ever touches.
  const now = Date.now()
  await app.results.recordHost(write({
    address: '192.0.2.10',
    at: now,
    scanId: 'seeded-1',
    hostnames: ['lab.example.test'],
    services: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '8.9p1' }, { port: 6379, service: 'redis', product: 'Redis', version: '6.0.15' }, { port: 80, service: 'http', product: 'httpd', version: '2.4.49' }],
    findings: [
      finding('192.0.2.10', 22, 'CVE-2023-51385', 'OpenSSH', '8.9p1'),
      finding('192.0.2.10', 22, 'CVE-2018-15473', 'OpenSSH', '8.9p1'),
      finding('192.0.2.10', 6379, 'CVE-2022-0543', 'Redis', '6.0.15'),
      finding('192.0.2.10', 80, 'CVE-2021-44457', 'httpd', '2.4.49')
    ]
  }))
  await app.results.recordHost(write({
    address: '192.0.2.11',
    at: now,
    scanId: 'seeded-1',
    services: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '7.2p2' }],
    findings: [finding('192.0.2.11', 22, 'CVE-2016-6210', 'OpenSSH', '7.2p2'), finding('192.0.2.11', 22, 'CVE-2023-51385', 'OpenSSH', '7.2p2')]
  }))

  // The CVE record behind a seeded finding, in the local index as a scan's on-demand fetch would leave it.
  await app.nvd.index.upsertRaw([rawFixture('CVE-2022-0543')])

  t.test('hosts: a table of every host', async (t) => {
    const r = await cli(['hosts'], env)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /192\.0\.2\.10 .*lab\.example\.test .*up .*22\/ssh, 80\/http, 6379\/redis .*4 .*CRITICAL/)
    t.match(r.stdout, /192\.0\.2\.11 /)
    t.match(r.stdout, /\d+ of \d+ hosts/)
  })

  t.test('vulns: a findings table, severity coloured, KEV marked; filters', async (t) => {
    const plain = await cli(['vulns', '--host', '192.0.2.10'], env)
    t.equal(plain.code, 0, plain.stderr)
    t.match(plain.stdout, /CRITICAL .*10\.0 .*CVE-2022-0543 .*KEV .*192\.0\.2\.10 .*6379\/tcp .*Redis 6\.0\.15 .*high .*open/, 'a KEV row')
    t.match(plain.stdout, /CRITICAL .*9\.8 .*CVE-2023-51385 .* 192\.0\.2\.10/)
    t.match(plain.stdout, /UNKNOWN .*n\/a .*CVE-2021-44457/, 'no CVSS: shown as n/a, not 0')
    t.match(plain.stdout, /^4 findings: 2 critical, 1 medium, 1 unknown$/m, 'counted as the summary and reports count')
    t.notMatch(plain.stdout, /\x1b\[/, 'no colour codes when piped')
    const coloured = await cli(['vulns', '--host', '192.0.2.10'], { ...env, NO_COLOR: undefined, FORCE_COLOR: '1' })
    t.match(coloured.stdout, /\x1b\[1m\x1b\[35mCRITICAL/, 'critical in bold magenta when colour is on')
    t.match(coloured.stdout, /\x1b\[31mKEV/, 'KEV in red')
    const kev = await cli(['vulns', '--kev', '--json'], env)
    t.equal(kev.code, 0)
    const page = JSON.parse(kev.stdout) as { items: Array<{ cveId: string, kev: unknown }> }
    t.same(page.items.map((f) => f.cveId), ['CVE-2022-0543'], '--kev: only known exploited')
    const medium = await cli(['vulns', '--severity', 'medium', '--json'], env)
    t.same((JSON.parse(medium.stdout) as typeof page).items.map((f) => f.cveId).sort(), ['CVE-2016-6210', 'CVE-2018-15473'])
    const csv = await cli(['vulns', '--csv', '--host', '192.0.2.11'], env)
    t.equal(csv.code, 0)
    const rows = csv.stdout.trim().split(/\r?\n/)
    t.equal(rows.length, 3, 'the server\'s CSV: a header and two rows')
    t.match(rows[0], /cve/i)
  })

  t.test('--fail-on: exit 1 when a standing finding is at or above the level', async (t) => {
    const critical = await cli(['vulns', '--fail-on', 'critical'], env)
    t.equal(critical.code, 1)
    t.match(critical.stderr, /3 findings at or above critical: failing \(exit 1\)/)
    const mediumOnly = await cli(['vulns', '--severity', 'medium', '--fail-on', 'high'], env)
    t.equal(mediumOnly.code, 0, 'judges what the filters select')
    const host = await cli(['host', '192.0.2.11', '--fail-on', 'critical'], env)
    t.equal(host.code, 1)
    t.match(host.stdout, /192\.0\.2\.11: up/)
    t.match(host.stdout, /22\/tcp .*open .*ssh .*OpenSSH .*7\.2p2/)
    t.match(host.stdout, /CVE-2023-51385/)

    const list = JSON.parse((await cli(['vulns', '--host', '192.0.2.11', '--severity', 'critical', '--json'], env)).stdout) as { items: Array<{ id: string }> }
    const decided = await app.inject({ method: 'PATCH', url: `/vulnerability/finding/${list.items[0].id}`, headers: { 'x-api-key': SERVICE_KEY }, payload: { status: 'accepted', comment: 'isolated lab' } })
    t.equal(decided.statusCode, 200)
    const accepted = await cli(['host', '192.0.2.11', '--fail-on', 'critical'], env)
    t.equal(accepted.code, 0, 'an accepted risk does not fail the job')
    t.match(accepted.stdout, /accepted/)
    const medium = await cli(['host', '192.0.2.11', '--fail-on', 'medium', '--json'], env)
    t.equal(medium.code, 1, 'the medium one still does')
    t.equal(medium.stderr, '', '--json keeps stderr quiet')
    t.match(JSON.parse(medium.stdout), { host: { address: '192.0.2.11' }, findings: Array })
    const unknownOnly = await cli(['vulns', '--severity', 'unknown', '--fail-on', 'low'], env)
    t.equal(unknownOnly.code, 0, 'a finding without a CVSS score never trips --fail-on (as the usage text says)')
  })

  t.test('cve: the record and the hosts it affects', async (t) => {
    const r = await cli(['cve', 'CVE-2022-0543'], env)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /^CVE-2022-0543 {2}CRITICAL {2}CVSS 10\.0 \(3\.1\) {2}KEV since \d{4}-\d{2}-\d{2}/)
    t.match(r.stdout, /Affected hosts \(1\): 192\.0\.2\.10/)
    t.match(r.stdout, /Lua/, 'the description')
    const json = JSON.parse((await cli(['cve', 'CVE-2022-0543', '--json'], env)).stdout) as { id: string, affectedHosts: string[] }
    t.same(json.affectedHosts, ['192.0.2.10'])
    const bad = await cli(['cve', 'CVE-12'], env)
    t.equal(bad.code, 2, 'a malformed id: the server\'s 400 is a usage error')
  })

  t.test('host: an unknown address is an API error (404)', async (t) => {
    const r = await cli(['host', '192.0.2.99'], env)
    t.equal(r.code, 3)
    t.match(r.stderr, /answered 404/)
  })

  t.test('scan --wait: follows the scan to the end, then a findings table; --fail-on judges this scan', async (t) => {
    const r = await cli(['scan', '127.0.0.1', '--wait', '--id', 'cli-wait', '--priority', '5', '--timeout', '100'], env)
    const findings = (await app.inject({ method: 'GET', url: '/vulnerability?host=127.0.0.1&limit=500', headers: { 'x-api-key': SERVICE_KEY } })).json<{ items: Array<{ cveId: string, severity: string, status: string, lastScanId: string }> }>().items
    const fromScan = findings.filter((f) => f.lastScanId === 'cli-wait')
    t.equal(r.code, 0, 'no --fail-on: exit 0 whatever was found')
    t.match(r.stderr, /Scan cli-wait queued\.\n(scan cli-wait: queued\n)?(scan cli-wait: running\n)?scan cli-wait: completed\n/, 'state changes on stderr when it is not a terminal')
    t.match(r.stdout, /^Scan cli-wait completed: 1 host up, \d+ open ports?\./)
    for (const f of fromScan) t.match(r.stdout, f.cveId, `${f.cveId} is in the table`)
    t.match(r.stdout, fromScan.length === 0 ? /No findings\./ : new RegExp(`${fromScan.length} findings?: `))

    // The verdict follows from what the API holds for this scan, whichever daemons this machine runs.
    const worst = Math.max(0, ...fromScan.map((f) => ['low', 'medium', 'high', 'critical'].indexOf(f.severity) + 1))
    const levels = ['low', 'medium', 'high', 'critical']
    if (worst > 0) {
      const trip = await cli(['status', 'cli-wait', '--wait', '--fail-on', levels[worst - 1]], env)
      t.equal(trip.code, 1, `--fail-on ${levels[worst - 1]}: the worst finding of the scan trips it`)
      t.match(trip.stderr, new RegExp(`at or above ${levels[worst - 1]}: failing \\(exit 1\\)`))
    }
    if (worst < 4) {
      const pass = await cli(['status', 'cli-wait', '--wait', '--fail-on', levels[worst]], env)
      t.equal(pass.code, 0, `--fail-on ${levels[worst]}: nothing that severe, exit 0`)
    }
    // On a terminal the wait shows a progress bar instead of state lines; `script` gives the child a pty.
    if (existsSync('/usr/bin/script')) {
      const tty = await new Promise<string>((resolve) => {
        const command = [process.execPath, BIN, 'status', 'cli-wait', '--wait'].map((a) => `'${a}'`).join(' ')
        execFile('/usr/bin/script', ['-qec', command, '/dev/null'], { env: { ...process.env, ...env, NO_COLOR: '1' }, timeout: 60_000 }, (_err, stdout) => resolve(stdout))
      })
      t.match(tty, /cli-wait \[█+\] 100% \| completed \| hosts 1\/1 \| ports \d+\/\d+/, 'a progress bar on a terminal')
      t.notMatch(tty, /scan cli-wait: completed/, 'and no state lines')
    }
    const json = await cli(['status', 'cli-wait', '--wait', '--json'], env)
    const out = JSON.parse(json.stdout) as { scan: { status: string, progress: { percent: number } }, findings: unknown[] }
    t.equal(out.scan.status, 'completed')
    t.equal(out.scan.progress.percent, 100)
    t.equal(out.findings.length, fromScan.length, '--json: the scan and its findings')
  })

  t.test('a scan that is cancelled while waited for: exit 3 with the reason', async (t) => {
    const waiting = cli(['scan', '127.0.0.1', '--template', 'full', '--priority', '1', '--id', 'cli-cancel', '--wait'], env)
    let cancelled = false
    for (let i = 0; i < 100 && !cancelled; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      cancelled = (await app.inject({ method: 'DELETE', url: '/app/scan/cli-cancel', headers: { 'x-api-key': SERVICE_KEY } })).statusCode === 200
    }
    t.ok(cancelled, 'cancelled through the API')
    const r = await waiting
    t.equal(r.code, 3)
    t.match(r.stderr, /Scan cli-cancel cancelled: cancelled by the infrastructure key/)
  })

  t.test('--fail-on does not pass a scan whose products could not be checked against the NVD', async (t) => {
    // A second server whose NVD is unreachable (the helper's default): the scan completes, unchecked.
    const { app: offline } = await build(t, 'memory', { WORKER_ENABLED: true })
    const offlineEnv = { ...env, VULNSCAN_URL: (await listen(offline)).url }
    const plain = await cli(['scan', '127.0.0.1', '--ports', '6379', '--wait', '--id', 'cli-unchecked'], offlineEnv)
    t.equal(plain.code, 0, 'without a gate: exit 0')
    // A Redis without a password is also an exposure finding (critical), which fails any gate on its own: accepted
    // here, so what the gate has left to judge is the product the NVD could not check.
    const exposures = (await offline.results.listFindings({ limit: 50, offset: 0, host: '127.0.0.1' })).items.filter((f) => f.source === 'vulnscan')
    for (const f of exposures) t.equal((await cli(['decide', f.id, 'accepted'], offlineEnv)).code, 0, `${f.cveId} accepted`)
    const gated = await cli(['status', 'cli-unchecked', '--wait', '--fail-on', 'critical'], offlineEnv)
    t.equal(gated.code, 3, 'exit 3, not a pass')
    t.match(gated.stderr, /--fail-on critical cannot pass scan cli-unchecked: 1 product\(s\) could not be checked against the NVD \(redis:redis\)/)
    t.match(plain.stdout, /Not checked against the vulnerability data: redis:redis/, 'with a warning')
  })

  t.test('scan without --wait prints the id and exits 0', async (t) => {
    const r = await cli(['scan', '127.0.0.1', '--template', 'discovery', '--id', 'cli-nowait', '--priority', '1', '--json'], env)
    t.equal(r.code, 0, r.stderr)
    t.same(JSON.parse(r.stdout), { status: 'Message sent successfully', id: 'cli-nowait' })
  })
})
