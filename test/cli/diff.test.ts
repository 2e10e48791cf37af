// `vulnscan diff` against the real app on both backends, from results written as a worker writes them.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import { finding, write } from '../support/results'
import { cli, listen } from '../support/cli'
import { newScanRecord } from '../../lib/scans'

const T0 = Date.parse('2026-05-01T00:00:00.000Z')
const H = 3600_000
const SSH = { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1' }
const REDIS = { port: 6379, service: 'redis', product: 'Redis', version: '6.0.5' }
const PORTS = [22, 6379]

test('diff help needs no server', async (t) => {
  const env = { VULNSCAN_URL: 'http://127.0.0.1:9', VULNSCAN_API_KEY: 'k' }
  const overview = await cli(['--help'], env)
  t.match(overview.stdout, '\n  diff <scan-id> ', 'the overview lists diff')
  const help = await cli(['diff', '--help'], env)
  t.equal(help.code, 0)
  t.match(help.stdout, /^Usage: vulnscan diff \[options\] <scan-id>/)
  t.match(help.stdout, /--against <scan-id>/)
  const missing = await cli(['diff'], env)
  t.equal(missing.code, 2)
  t.match(missing.stderr, /diff needs one scan id/)
  const badLimit = await cli(['diff', 'x', '--limit', '5000'], env)
  t.equal(badLimit.code, 2)
  t.match(badLimit.stderr, /--limit must be an integer from 1 to 1000/)
})

for (const backend of ['memory', 'redis'] as const) {
  test(`vulnscan diff against a live server (${backend})`, async (t) => {
    if (!(await backends()).includes(backend)) {
      t.comment('Redis does not answer: skipped')
      return
    }
    const { app } = await build(t, backend)
    const { url } = await listen(app)
    const env = { VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY }
    const a = '192.0.2.30'
    const targets = [{ value: a, type: 'single_ip' as const }]
    const redisF = finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')
    const sshF = finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1')
    for (const [id, at] of [['cli-mon', T0], ['cli-tue', T0 + H]] as const) {
      await app.store.createScan(newScanRecord({ id, targets }, 'service', new Date(at)))
      await app.store.updateScan(id, { status: 'completed', finishedAt: new Date(at + 60_000).toISOString() })
    }
    await app.results.recordHost(write({ address: a, at: T0, scanId: 'cli-mon', services: [SSH, REDIS], scannedPorts: PORTS, findings: [sshF, redisF] }))
    await app.results.recordHost(write({ address: a, at: T0 + H, scanId: 'cli-tue', services: [{ ...SSH, version: '9.6p1' }], scannedPorts: PORTS, settledPorts: PORTS }))

    const r = await cli(['diff', 'cli-tue'], env)
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /^Scan cli-tue compared with cli-mon\n/)
    t.match(r.stdout, /findings: 0 new, 2 fixed, 0 unchanged; ports: 0 opened, 1 closed; services changed: 1; hosts: 0 appeared, 0 down/)
    t.match(r.stdout, /Fixed findings[\s\S]*CRITICAL .*10\.0 .*CVE-2022-0543 .*192\.0\.2\.30 .*6379 .*Redis 6\.0\.5 .*fixed/, 'the most severe fixed finding first')
    t.match(r.stdout, /192\.0\.2\.30 .*6379 .*closed .*redis Redis 6\.0\.5/)
    t.match(r.stdout, /192\.0\.2\.30 .*22 .*ssh OpenSSH 9\.2p1 .*ssh OpenSSH 9\.6p1/)
    t.notMatch(r.stdout, /New findings/, 'an empty list has no section')

    const paged = await cli(['diff', 'cli-tue', '--limit', '1'], env)
    t.match(paged.stdout, /Fixed findings \(1-1 of 2: --offset 1 for more\)/)

    const json = JSON.parse((await cli(['diff', 'cli-mon', '--against', 'cli-tue', '--json'], env)).stdout) as { totals: Record<string, number>, findings: { new: Array<{ cveId: string }> } }
    t.same([json.totals.newFindings, json.totals.portsOpened], [2, 1], 'the other way round, as JSON')
    t.same(json.findings.new.map((f) => f.cveId), ['CVE-2022-0543', 'CVE-2024-6387'])

    const none = await cli(['diff', 'cli-mon'], env)
    t.equal(none.code, 3)
    t.match(none.stderr, /No completed scan of the same targets before scan 'cli-mon' to compare with; name one with \?against=/)
    const unknown = await cli(['diff', 'cli-nope'], env)
    t.equal(unknown.code, 3)
    t.match(unknown.stderr, /No scan with id 'cli-nope'/)
  })
}
