// Exposure findings end to end, on both backends: a scan of a Redis without a password reports
// VULNSCAN-REDIS-NOAUTH beside CVE findings (severity counted in the scan summary, source, rule, evidence and
// remediation listed, in the CSV too); a re-scan after the fix marks it fixed; a discovery scan (no checks)
// leaves it as it was.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import { accepts, daemonUnavailable, startDaemon, type RunningDaemon } from '../support/debian-daemon'

const auth = { 'x-api-key': SERVICE_KEY }
const REDIS = '/usr/bin/redis-server'

async function redisOn (host: string | null, password: string | null): Promise<RunningDaemon> {
  return await startDaemon({
    pkg: 'redis-server',
    binary: REDIS,
    // Its own port, on the test's own address (the same address again for the re-scan).
    args: ({ dir, host: h }) => ['--port', '6379', '--bind', host ?? h, '--dir', dir, '--save', '', '--appendonly', 'no',
      ...(password === null ? [] : ['--requirepass', password])],
    ready: async ({ host: h }) => await accepts(host ?? h, 6379)
  })
}

for (const backend of ['memory', 'redis'] as const) {
  test(`a Redis without a password is a finding until it has one (${backend})`, { skip: daemonUnavailable(REDIS, 'redis-server') }, async (t) => {
    if (backend === 'redis' && !(await backends()).includes('redis')) return t.pass('skipped: no Redis or PostgreSQL answers (required under CI=true)')
    const { app } = await build(t, backend, { WORKER_ENABLED: true, NVD_ON_DEMAND: false })
    const scan = async (id: string, template = 'quick'): Promise<Record<string, any>> => {
      const posted = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id, targets: [{ value: address, type: 'single_ip' }], options: { template, ports: '6379' } } })
      t.equal(posted.statusCode, 200, posted.body)
      const deadline = Date.now() + 60_000
      for (;;) {
        const s = (await app.inject({ url: `/app/scan/${id}`, headers: auth })).json()
        if (['completed', 'failed', 'cancelled'].includes(s.status)) return s
        if (Date.now() > deadline) throw new Error(`scan ${id} did not end`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    const finding = async (): Promise<Record<string, any> | undefined> =>
      (await app.inject({ url: `/vulnerability?cveId=VULNSCAN-REDIS-NOAUTH&host=${address}`, headers: auth })).json().items?.[0]
    const byStatus = async (status: string): Promise<Record<string, any>[]> =>
      (await app.inject({ url: `/vulnerability?cveId=vulnscan-redis-noauth&status=${status}`, headers: auth })).json().items

    let daemon = await redisOn(null, null)
    const address = daemon.host
    t.teardown(async () => { await daemon.stop() })

    const first = await scan('exposed')
    t.equal(first.status, 'completed')
    t.ok(first.summary.findings.critical >= 1, 'the scan summary counts the critical exposure')
    const open = await finding()
    t.match(open, {
      cveId: 'VULNSCAN-REDIS-NOAUTH',
      address,
      port: 6379,
      severity: 'critical',
      cvss: null,
      source: 'vulnscan',
      rule: /^vulnscan: VULNSCAN-REDIS-NOAUTH: /,
      status: 'open',
      confidence: 'high',
      product: 'Redis',
      evidence: /INFO server answered without AUTH/,
      remediation: /requirepass/,
      reason: /CONFIG SET/
    })
    const csv = await app.inject({ url: `/vulnerability?cveId=VULNSCAN-REDIS-NOAUTH`, headers: { ...auth, accept: 'text/csv' } })
    t.equal(csv.statusCode, 200)
    t.match(csv.body, /,remediation,protocol,confidenceScore\r\n/, 'the CSV has a remediation column')
    t.match(csv.body, /VULNSCAN-REDIS-NOAUTH,critical,.*Set `requirepass`/s)

    // A discovery scan runs no checks: it says nothing of the exposure, which stays open.
    t.equal((await scan('discovery', 'discovery')).status, 'completed')
    t.equal((await finding())?.status, 'open')

    // The fix: the same address and port, now with a password.
    await daemon.stop()
    daemon = await redisOn(address, 'a-long-test-password')
    const second = await scan('fixed')
    t.equal(second.status, 'completed')
    t.equal(second.summary.findings.critical, 0)
    const fixed = await byStatus('fixed')
    t.equal(fixed.length, 1)
    t.match(fixed[0], { cveId: 'VULNSCAN-REDIS-NOAUTH', status: 'fixed', lastScanId: 'exposed' })
    t.same(await byStatus('open'), [])

    // And back: reopened.
    await daemon.stop()
    daemon = await redisOn(address, null)
    t.equal((await scan('again')).status, 'completed')
    t.match(await byStatus('reopened'), [{ cveId: 'VULNSCAN-REDIS-NOAUTH', lastScanId: 'again' }])
  })
}
