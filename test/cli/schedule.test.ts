// `vulnscan schedule …` against the real app on both backends: a schedule created by the CLI is the API's, update
// keeps what it is not told to change. One that fires: schedule-runs.test.ts; usage errors: schedule-webhook-usage.test.ts.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import { cli, listen } from '../support/cli'

const auth = { 'x-api-key': SERVICE_KEY }
type Json = Record<string, any>

for (const backend of ['memory', 'redis'] as const) {
  test(`schedules through the CLI (${backend})`, async (t) => {
    if (!(await backends()).includes(backend)) {
      t.comment('Redis or PostgreSQL does not answer: skipped')
      return
    }
    // No worker: nothing here is due before the test ends.
    const { app } = await build(t, backend)
    const { url } = await listen(app)
    const env = { VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY }
    const get = async (id: string): Promise<Json> => (await app.inject({ url: `/app/schedule/${id}`, headers: auth })).json()

    t.test('created by the CLI, it is the API\'s; update keeps what it is not told to change', async (t) => {
      const created = await cli(['schedule', 'create', '10.20.0.0/24', 'db.example.com', '--cron', '0 3 * * 1-5', '--tz', 'Europe/Paris', '--name', 'nightly', '--template', 'standard', '--priority', '4'], env)
      t.equal(created.code, 0, created.stderr)
      const id = /^Created schedule ([0-9a-f-]{36}) \(nightly\): 0 3 \* \* 1-5 in Europe\/Paris, enabled, next run (\S+)\.\n/.exec(created.stdout)
      t.ok(id, created.stdout)
      if (id === null) return
      const s = await get(id[1])
      t.match(s, {
        name: 'nightly',
        cron: '0 3 * * 1-5',
        timezone: 'Europe/Paris',
        enabled: true,
        scan: { targets: [{ value: '10.20.0.0/24', type: 'cidr' }, { value: 'db.example.com', type: 'dns_name' }], options: { template: 'standard' }, priority: 4 },
        lastRun: null
      }, 'the API holds what the CLI posted, target types inferred as vulnscan scan infers them')
      t.equal(s.nextRunAt, id[2], 'the next run it printed')

      const ports = await cli(['schedule', 'update', s.id, '--ports', '22,443'], env)
      t.equal(ports.code, 0, ports.stderr)
      t.match(ports.stdout, /scans: 10\.20\.0\.0\/24 db\.example\.com \(template standard, ports 22,443, p4\)/)
      t.match((await get(s.id)).scan, { targets: [{ value: '10.20.0.0/24' }, { value: 'db.example.com' }], options: { template: 'standard', ports: '22,443' }, priority: 4 }, 'targets, template and priority kept')
      const targets = await cli(['schedule', 'update', s.id, '10.30.0.1', '--cron', '30 2 * * *', '--tz', 'UTC', '--json'], env)
      t.equal(targets.code, 0, targets.stderr)
      t.match(JSON.parse(targets.stdout), { cron: '30 2 * * *', timezone: 'UTC', scan: { targets: [{ value: '10.30.0.1', type: 'single_ip' }], options: { template: 'standard', ports: '22,443' } } })
      const dropPorts = await cli(['schedule', 'update', s.id, '--ports', ''], env)
      t.equal(dropPorts.code, 0, dropPorts.stderr)
      const dropped = (await get(s.id)).scan.options as Json
      t.notOk('ports' in dropped, '--ports \'\' drops the override')
      t.equal(dropped.template, 'standard', 'and keeps the template')

      const udp = await cli(['schedule', 'create', '10.40.0.0/28', '--cron', '@daily', '--udp-ports', '53,161', '--no-discovery', '--json'], env)
      t.equal(udp.code, 0, udp.stderr)
      const u = JSON.parse(udp.stdout) as Json
      t.match(u.scan.options, { udp: true, udpPorts: '53,161', discovery: false }, 'UDP asked for outright with its ports (the API would fill in udp: false), no discovery')
      const tcpOnly = await cli(['schedule', 'update', u.id, '--no-udp', '--discovery'], env)
      t.equal(tcpOnly.code, 0, tcpOnly.stderr)
      t.match(tcpOnly.stdout, /scans: 10\.40\.0\.0\/28 \(template quick, p3\)\n$/, 'UDP off although its ports stay listed')
      t.match((await get(u.id)).scan.options, { udpPorts: '53,161', udp: false, discovery: true })
      t.equal((await cli(['schedule', 'delete', u.id], env)).code, 0)

      const off = await cli(['schedule', 'disable', s.id], env)
      t.equal(off.code, 0, off.stderr)
      t.match(off.stdout, /, disabled, no next run\.$/m)
      t.match(await get(s.id), { enabled: false, nextRunAt: null })
      const on = await cli(['schedule', 'enable', s.id, '--json'], env)
      t.match(JSON.parse(on.stdout), { id: s.id, enabled: true, nextRunAt: /^\d{4}-/ })

      const [bad, zone] = await Promise.all([cli(['schedule', 'create', '10.0.0.1', '--cron', '61 * * * *'], env), cli(['schedule', 'update', s.id, '--tz', 'Mars/Olympus'], env)])
      t.equal(bad.code, 2, 'the server\'s 400 is a usage error')
      t.match(bad.stderr, /Rejected: cron '61 \* \* \* \*' is not valid/)
      t.equal(zone.code, 2)
      t.match(zone.stderr, /timezone 'Mars\/Olympus' is not an IANA time zone/)

      const deleted = await cli(['schedule', 'delete', s.id], env)
      t.equal(deleted.code, 0, deleted.stderr)
      t.equal(deleted.stdout, `Deleted schedule ${String(s.id)}; the scans it started stay.\n`)
      t.equal((await app.inject({ url: `/app/schedule/${String(s.id)}`, headers: auth })).statusCode, 404)
      const again = await cli(['schedule', 'show', s.id], env)
      t.equal(again.code, 3)
      t.match(again.stderr, /answered 404: No schedule with id/)
    })
  })
}
