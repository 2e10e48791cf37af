// End to end over HTTP: a quick scan of 127.0.0.1 finds the real daemons with their real versions,
// and exactly the CVEs the fixture NVD records give for those versions.
import { test } from 'tap'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { backends, build, SERVICE_KEY } from '../helper'
import { startFakeNvd } from '../support/fake-nvd'
import { localDaemons } from '../support/daemons'
import { expectedCves } from '../support/expected-cves'
import { aliasesFor } from '../../lib/cpe/aliases'
import { listenOnLoopback } from '../support/raw-http'

const ROOT = join(__dirname, '..', '..')
const auth = { 'x-api-key': SERVICE_KEY, 'content-type': 'application/json' }

async function waitForEnd (base: string, id: string, ms = 90_000): Promise<Record<string, any>> {
  const deadline = Date.now() + ms
  const percents: number[] = []
  while (Date.now() < deadline) {
    const scan = await (await fetch(`${base}/app/scan/${id}`, { headers: auth })).json() as Record<string, any>
    percents.push(scan.progress.percent)
    if (['completed', 'failed', 'cancelled'].includes(scan.status)) return { ...scan, percents }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`scan ${id} did not end within ${ms} ms`)
}

for (const mode of ['embedded', 'redis-separate-worker'] as const) {
  test(`quick scan of 127.0.0.1 end to end (${mode})`, async (t) => {
    if (mode !== 'embedded' && !(await backends()).includes('redis')) return t.pass('skipped: no Redis answers (required under CI=true)')
    const daemons = await localDaemons()
    if (daemons.length === 0) return t.pass('skipped: none of the reference daemons runs here')
    const nvd = await startFakeNvd({ rateLimit: null })
    t.teardown(() => nvd.close())
    const { app, config } = await build(t, mode === 'embedded' ? 'memory' : 'redis', {
      WORKER_ENABLED: mode === 'embedded',
      NVD_API_URL: nvd.baseUrl
    })
    const listening = await listenOnLoopback(app)
    const base = `http://${listening.host}:${listening.port}`

    if (mode !== 'embedded') {
      const worker = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'worker.ts')], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          REDIS_URL: config.REDIS_URL,
          DATABASE_URL: config.DATABASE_URL,
          DATABASE_SCHEMA: config.DATABASE_SCHEMA,
          REDIS_PREFIX: config.REDIS_PREFIX,
          QUEUE_PREFIX: config.QUEUE_PREFIX,
          NVD_API_URL: nvd.baseUrl,
          NVD_RATE_LIMIT: '1000',
          CREDENTIALS_KEY: config.CREDENTIALS_KEY,
          LOG_LEVEL: 'warn'
        },
        stdio: ['ignore', 'inherit', 'inherit']
      })
      t.teardown(() => { worker.kill('SIGKILL') })
    }

    const posted = await fetch(`${base}/app/scan`, { method: 'POST', headers: auth, body: JSON.stringify({ id: 'local-quick', targets: [{ value: '127.0.0.1', type: 'single_ip' }], options: { template: 'quick' } }) })
    t.equal(posted.status, 200)
    const scan = await waitForEnd(base, 'local-quick')
    t.equal(scan.status, 'completed', scan.reason ?? '')
    t.equal(scan.progress.percent, 100)
    t.same(scan.percents, [...scan.percents].sort((a: number, b: number) => a - b), 'percent only goes up')
    t.ok(scan.startedAt && scan.finishedAt, 'started and finished times')
    t.equal(scan.summary.hostsUp, 1)

    const host = await (await fetch(`${base}/host/127.0.0.1`, { headers: auth })).json() as Record<string, any>
    t.equal(host.address, '127.0.0.1')
    const expected = new Set<string>()
    for (const d of daemons) {
      const port = host.ports.find((p: { port: number }) => p.port === d.port)
      t.ok(port, `port ${d.port} (${d.product}) found open`)
      t.equal(port?.product, d.product, `port ${d.port} product`)
      t.equal(port?.version?.split(/[ -]/)[0], d.version, `${d.product} version is what the daemon reports`)
      for (const id of expectedCves(aliasesFor(d.product).map((a) => `${a.vendor}:${a.product}`), d.version)) expected.add(id)
    }

    const vulns = await (await fetch(`${base}/vulnerability?limit=500`, { headers: auth })).json() as { items: { cveId: string, address: string, confidence: string, port: number, source: string }[], total: number }
    // Exposure checks report beside the CVEs (this machine's Redis, PostgreSQL and Mosquitto let anyone in): their
    // own tests hold them; here only that they are told apart by their source.
    // Checks written as templates (templates/: NATS without auth, epmd's names) report with source template.
    const exposure = (f: { source: string }): boolean => f.source === 'vulnscan' || f.source === 'template'
    const cves = vulns.items.filter((f) => !exposure(f))
    t.ok(vulns.items.every((f) => exposure(f) === f.cveId.startsWith('VULNSCAN-')), 'exposure findings carry a check id and source vulnscan (or template)')
    t.same([...new Set(cves.map((f) => f.cveId))].sort(), [...expected].sort(), 'exactly the CVEs the fixture records give for these versions')
    t.ok(vulns.items.every((f) => f.address === '127.0.0.1'))
    t.equal(scan.summary.findings.critical + scan.summary.findings.high + scan.summary.findings.medium + scan.summary.findings.low + scan.summary.findings.none + scan.summary.findings.unknown, vulns.total, 'the summary counts the findings')

    // The same scan again: nothing duplicated, findings stay open.
    await fetch(`${base}/app/scan`, { method: 'POST', headers: auth, body: JSON.stringify({ id: 'local-quick-2', targets: [{ value: '127.0.0.1', type: 'single_ip' }], options: { template: 'quick' } }) })
    t.equal((await waitForEnd(base, 'local-quick-2')).status, 'completed')
    const again = await (await fetch(`${base}/vulnerability?limit=500`, { headers: auth })).json() as { total: number, items: { status: string }[] }
    t.equal(again.total, vulns.total, 'a re-scan duplicates no finding')
    t.ok(again.items.every((f) => f.status === 'open'))
    t.equal((await (await fetch(`${base}/host`, { headers: auth })).json() as { total: number }).total, 1, 'one host per address')
  })
}
