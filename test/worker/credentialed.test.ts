// Credentialed scans end to end, on both backends, against Debian's real sshd reading this machine's own dpkg
// database: POST /admin/credentials, a scan with options.credentials, and the package findings at
// GET /vulnerability?host=…&source=distribution; the banner finding of the same package moving from open (medium)
// to fixed_by_distribution once the host is scanned with credentials; a failed login on another host said in the
// summary while the scan goes on; and the secret never in a response, a log line or the audit log.
import { test } from 'tap'
import { PassThrough } from 'node:stream'
import { backends, build, SERVICE_KEY } from '../helper'
import { startFakeNvd } from '../support/fake-nvd'
import { startFakeTracker } from '../support/fake-tracker'
import { listenOnLoopback } from '../support/raw-http'
import { silentServers } from '../support/silent-servers'
import { loopbackAddress } from '../support/loopback'
import { createScanUser, keyPair, sshLabUnavailable, startLabSshd } from '../support/ssh-lab'
import { installedSources, trackerFromChangelogs } from '../support/changelog-tracker'
import { syncDebianTracker } from '../../lib/distro/sync'

const skip = sshLabUnavailable()
const BANNER_CVE = 'CVE-2023-51385'
// Fixed above the installed revision in the fake tracker: the package list says open.
const ABOVE_CVE = 'CVE-2026-99901'
// Listed with no fix yet.
const OPEN_CVE = 'CVE-2026-99902'

for (const backend of ['memory', 'redis'] as const) {
  test(`a credentialed scan decides a host's packages (${backend})`, { skip }, async (t) => {
    if (!(await backends()).includes(backend)) return t.pass(`skipped: no ${backend} backend here (required under CI=true)`)
    const user = createScanUser()
    t.teardown(user.remove)
    const key = keyPair()
    const sshd = await startLabSshd({ user: user.name, authorizedKeys: [key.publicKey], familyOnlyBanner: true })
    t.teardown(sshd.stop)
    // A second host that accepts on the same port and never speaks SSH: its login times out, the scan goes on.
    const silentHost = loopbackAddress()
    const silent = await silentServers([{ address: silentHost, port: sshd.port }])
    t.teardown(silent.close)

    const installed = installedSources()
    const openssh = installed.get('openssh')
    if (openssh === undefined) return t.fail('openssh is not installed')
    const tracker = trackerFromChangelogs('bookworm', '12')
    tracker.json.openssh[ABOVE_CVE] = { scope: 'remote', releases: { bookworm: { status: 'resolved', repositories: { bookworm: openssh.version }, fixed_version: `${openssh.version}+deb12u99`, urgency: 'high' } } }
    tracker.json.openssh[OPEN_CVE] = { scope: 'remote', releases: { bookworm: { status: 'open', repositories: { bookworm: openssh.version }, urgency: 'low' } } }
    const trackerServer = await startFakeTracker(Buffer.from(JSON.stringify(tracker.json)))
    t.teardown(trackerServer.close)
    const nvd = await startFakeNvd({ rateLimit: null })
    t.teardown(() => nvd.close())

    const logs: string[] = []
    const logStream = new PassThrough()
    logStream.on('data', (d: Buffer) => logs.push(d.toString()))
    const { app } = await build(t, backend, { WORKER_ENABLED: true, NVD_API_URL: nvd.baseUrl, LOG_LEVEL: 'trace', SSH_CONNECT_TIMEOUT_MS: 3000 }, { logStream })
    const sync = await syncDebianTracker(app.backends.indexes.sources, { url: trackerServer.url, releases: ['bookworm'] })
    t.ok((sync.imported?.packages ?? 0) > 10, `tracker built from ${Object.keys(tracker.json).length} changelogs imported (${sync.imported?.cves ?? 0} CVEs)`)
    const listening = await listenOnLoopback(app)
    const base = `http://${listening.host}:${listening.port}`
    const responses: string[] = []
    const call = async (method: string, path: string, body?: unknown): Promise<{ status: number, json: any }> => {
      const res = await fetch(`${base}${path}`, { method, headers: { 'x-api-key': SERVICE_KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) })
      const text = await res.text()
      responses.push(text)
      return { status: res.status, json: text === '' ? null : JSON.parse(text) }
    }
    const waitForEnd = async (id: string): Promise<any> => {
      const deadline = Date.now() + 120_000
      for (;;) {
        const { json } = await call('GET', `/app/scan/${id}`)
        if (['completed', 'failed', 'cancelled'].includes(json.status)) return json
        if (Date.now() > deadline) throw new Error(`scan ${id} did not end`)
        await new Promise((resolve) => setTimeout(resolve, 300))
      }
    }

    const created = await call('POST', '/admin/credentials', { name: 'lab', type: 'ssh', username: user.name, privateKey: key.privateKey, port: sshd.port, description: 'test host' })
    t.equal(created.status, 201)
    t.same(Object.keys(created.json).sort(), ['auth', 'createdAt', 'description', 'hostKeys', 'id', 'name', 'port', 'scope', 'secretUpdatedAt', 'type', 'updatedAt', 'username'])
    t.equal(created.json.auth, 'privateKey')
    t.equal((await call('GET', '/admin/credentials')).json.total, 1)
    t.equal((await call('GET', '/admin/credentials/lab')).json.id, created.json.id, 'read by name too')
    t.equal((await call('POST', '/admin/credentials', { name: 'lab', type: 'ssh', username: 'x', password: 'another-secret' })).status, 409, 'names are unique')
    t.equal((await call('POST', '/app/scan', { targets: [{ value: sshd.host, type: 'single_ip' }], options: { credentials: ['nope'] } })).status, 400, 'an unknown credential is a 400')

    // 1. Without credentials: the banner shows Debian but no package revision, so the CVE stays open at medium.
    const banner = await call('POST', '/app/scan', { id: `banner-${backend}`, targets: [{ value: sshd.host, type: 'single_ip' }], options: { ports: String(sshd.port) } })
    t.equal(banner.status, 200)
    t.equal((await waitForEnd(banner.json.id)).status, 'completed')
    const before = (await call('GET', `/vulnerability?host=${sshd.host}&cveId=${BANNER_CVE}`)).json.items
    t.equal(before.length, 1, 'the banner finding')
    t.match(before[0], { port: sshd.port, status: 'open', confidence: 'medium', source: 'nvd' })

    // 2. With credentials (by name): the package list decides.
    const scan = await call('POST', '/app/scan', {
      id: `creds-${backend}`,
      targets: [{ value: sshd.host, type: 'single_ip' }, { value: silentHost, type: 'single_ip' }],
      options: { ports: String(sshd.port), credentials: ['lab'] }
    })
    t.equal(scan.status, 200)
    const done = await waitForEnd(scan.json.id)
    t.equal(done.status, 'completed')
    t.same(done.credentials, [created.json.id], 'the scan keeps the credential by id')
    t.match(done.summary.credentialed, { attempted: 2, succeeded: 1, failed: { timeout: 1 }, hosts: [{ address: silentHost, reason: 'timeout' }] })

    const after = (await call('GET', `/vulnerability?host=${sshd.host}&cveId=${BANNER_CVE}&status=fixed_by_distribution`)).json.items
    const moved = after.find((f: any) => f.id === before[0].id)
    t.ok(moved, 'the same banner finding')
    t.match(moved, { port: sshd.port, status: 'fixed_by_distribution', source: 'distribution' })
    t.equal((await call('GET', `/vulnerability?host=${sshd.host}&cveId=${BANNER_CVE}`)).json.total, 0, 'no open finding of it is left on the host')

    const pkgs = (await call('GET', `/vulnerability?host=${sshd.host}&source=distribution&limit=500`)).json
    const above = pkgs.items.find((f: any) => f.cveId === ABOVE_CVE)
    t.match(above, { port: 0, status: 'open', source: 'distribution', rule: 'package', confidence: 'high' })
    t.match(above.package, { name: 'openssh-client', source: 'openssh', installed: openssh.version, fixed: `${openssh.version}+deb12u99`, tracker: 'Debian security tracker' })
    t.ok(above.package.binaries.includes('openssh-server'), 'lists the binaries built from the source')
    t.match(pkgs.items.find((f: any) => f.cveId === OPEN_CVE)?.package, { fixed: 'no fix yet' })
    t.ok(pkgs.items.every((f: any) => f.source === 'distribution'), 'the source filter')
    const fixedPkgs = (await call('GET', `/vulnerability?host=${sshd.host}&source=distribution&status=fixed_by_distribution&limit=500`)).json
    const update = tracker.fixedByUpdate.find((f) => f.source === 'openssh' && f.cve === BANNER_CVE)
    t.ok(update !== undefined && fixedPkgs.items.some((f: any) => f.port === 0 && f.cveId === BANNER_CVE && f.package?.installed === openssh.version), 'the package finding of the same CVE is fixed_by_distribution')
    t.ok(fixedPkgs.total >= Math.min(50, tracker.fixedByUpdate.length) / 2, `${fixedPkgs.total} package findings fixed by release updates`)
    const csv = await fetch(`${base}/vulnerability?host=${sshd.host}&source=distribution`, { headers: { 'x-api-key': SERVICE_KEY, accept: 'text/csv' } })
    const csvText = await csv.text()
    responses.push(csvText)
    t.match(csvText, ABOVE_CVE, 'the CSV export takes the source filter')
    const report = await fetch(`${base}/app/scan/${scan.json.id}/report?format=sarif&source=distribution`, { headers: { 'x-api-key': SERVICE_KEY } })
    const sarif = await report.text()
    responses.push(sarif)
    t.match(sarif, `host://${sshd.host}`, 'SARIF names the host itself for port 0')
    const diff = await call('GET', `/app/scan/${scan.json.id}/diff?against=${banner.json.id}&limit=500`)
    t.equal(diff.status, 200)
    t.ok(diff.json.findings.new.some((f: any) => f.port === 0 && f.cveId === ABOVE_CVE) || diff.json.totals.newFindings > 500, 'the diff lists the new package findings')

    // A rotated secret, then a removed credential: the next scan says so per host.
    const rotated = await call('PATCH', '/admin/credentials/lab', { privateKey: keyPair().privateKey })
    t.equal(rotated.status, 200)
    t.not(rotated.json.secretUpdatedAt, created.json.secretUpdatedAt)
    const again = await call('POST', '/app/scan', { id: `rotated-${backend}`, targets: [{ value: sshd.host, type: 'single_ip' }], options: { ports: String(sshd.port), credentials: [created.json.id] } })
    t.match((await waitForEnd(again.json.id)).summary.credentialed, { attempted: 1, succeeded: 0, failed: { auth: 1 } }, 'the new key is not authorized on the host')
    t.equal((await call('GET', `/vulnerability?host=${sshd.host}&source=distribution&cveId=${ABOVE_CVE}`)).json.items[0]?.status, 'open', 'a failed login fixes nothing')
    t.equal((await call('DELETE', '/admin/credentials/lab')).status, 204)
    t.equal((await call('GET', '/admin/credentials/lab')).status, 404)

    const audit = (await call('GET', '/admin/audit?limit=500')).json
    t.ok(audit.items.some((e: any) => e.route === '/admin/credentials' && e.method === 'POST'), 'credential changes are audited')
    const secretLines = key.privateKey.split('\n').filter((l) => l.length >= 20)
    const everything = [...responses, ...logs, JSON.stringify(audit)].join('\n')
    t.ok(logs.length > 10, `${logs.length} log lines read`)
    for (const line of secretLines) t.notOk(everything.includes(line), 'no line of the private key in any response, log line or audit entry')
    t.notOk(everything.includes('another-secret'), 'nor a password')
  })
}
