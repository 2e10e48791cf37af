// `vulnscan tags …`, `--tag` on hosts and vulns, and `--tag`/`--target-tag` on scan, against the real app on both backends.
import { test } from 'tap'
import { createServer } from 'node:net'
import { backends, build, SERVICE_KEY } from '../helper'
import { finding, write } from '../support/results'
import { cli, listen } from '../support/cli'
import { freePort, loopbackAddress } from '../support/loopback'

test('tags commands need a valid tag before anything is sent', async (t) => {
  const env = { VULNSCAN_URL: 'http://127.0.0.1:9', VULNSCAN_API_KEY: 'k' }
  for (const args of [['tags', 'set', '192.0.2.1', 'Prod'], ['hosts', '--tag', 'a b'], ['vulns', '--tag', '-x'], ['scan', '--target-tag', 'UP']]) {
    const r = await cli(args, env)
    t.equal(r.code, 2, args.join(' '))
    t.match(r.stderr, /is not a tag: lower-case letters, digits/)
  }
  const none = await cli(['scan'], env)
  t.equal(none.code, 2)
  t.match(none.stderr, /scan needs at least one target or --target-tag/)
  const help = await cli(['--help'], env)
  for (const command of ['tags <address>', 'tags set <address> <tag…>', 'tags add <address> <tag…>', 'tags remove <address> <tag…>', 'tags clear <address>']) {
    t.match(help.stdout, `\n  ${command} `, `the overview lists ${command}`)
  }
  t.match(help.stdout, /--target-tag <tag>/)
})

for (const backend of ['memory', 'redis'] as const) {
  test(`tags against a live server (${backend})`, async (t) => {
    if (!(await backends()).includes(backend)) return t.pass('skipped: Redis does not answer')
    const { app } = await build(t, backend, { WORKER_ENABLED: true })
    const { url } = await listen(app)
    const env = { VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY }
    const a = '192.0.2.30'
    const b = '192.0.2.31'
    await app.results.recordHost(write({ address: a, at: Date.now(), services: [{ port: 6379, service: 'redis', product: 'Redis', version: '6.0.15' }], findings: [finding(a, 6379, 'CVE-2022-0543', 'Redis', '6.0.15')] }))
    await app.results.recordHost(write({ address: b, at: Date.now() - 1000, services: [{ port: 22, service: 'ssh', product: 'OpenSSH', version: '8.9p1' }], findings: [finding(b, 22, 'CVE-2023-51385', 'OpenSSH', '8.9p1')] }))

    const run = async (...args: string[]): Promise<string> => {
      const r = await cli(args, env)
      t.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
      return r.stdout
    }
    t.equal(await run('tags', a), `${a} has no tags.\n`)
    t.equal(await run('tags', 'set', a, 'prod', 'team:cache'), `${a}: prod team:cache\n`)
    t.equal(await run('tags', 'add', a, 'pci', 'prod'), `${a}: pci prod team:cache\n`)
    t.equal(await run('tags', 'remove', a, 'team:cache'), `${a}: pci prod\n`)
    t.same(JSON.parse(await run('tags', 'show', a, '--json')), { address: a, tags: ['pci', 'prod'] })
    t.same((await app.results.getHost(a))!.tags, ['pci', 'prod'], 'on the server')
    t.equal(await run('tags', 'set', b, 'staging'), `${b}: staging\n`)

    const hosts = await run('hosts', '--tag', 'prod')
    t.match(hosts, a)
    t.notMatch(hosts, b)
    t.match(hosts, /│ tags\s*│/, 'a tags column when hosts have tags')
    t.match(hosts, /1 of 1 hosts/)
    const vulns = await run('vulns', '--tag', 'staging')
    t.match(vulns, /CVE-2023-51385/)
    t.notMatch(vulns, /CVE-2022-0543/)
    const csv = await run('vulns', '--tag', 'prod', '--csv')
    t.equal(csv.trim().split(/\r?\n/).length, 2, 'the CSV export filtered too')
    t.match(await run('host', a), /\ntags: pci prod\n/, 'host shows its tags')

    const missing = await cli(['tags', 'set', '192.0.2.99', 'prod'], env)
    t.equal(missing.code, 3, 'an API error')
    t.match(missing.stderr, /No host with address '192\.0\.2\.99'/)
    t.equal(await run('tags', 'clear', a), `${a} has no tags.\n`)

    // A scan of the hosts tagged lab that tags what it finds: a listener on a loopback address of its own.
    const host = loopbackAddress()
    const port = await freePort(host)
    const server = createServer((s) => { s.on('error', () => {}); s.end() })
    await new Promise<void>((resolve) => server.listen(port, host, resolve))
    t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
    await app.results.recordHost(write({ address: host, at: Date.now(), services: [] }))
    await app.results.setHostTags(host, ['lab'])
    const scanned = await cli(['scan', '--target-tag', 'lab', '--tag', 'seen,cli', '--tag', 'x', '-t', 'discovery', '-p', String(port), '--wait', '--json'], env)
    t.equal(scanned.code, 0, scanned.stderr)
    t.match(JSON.parse(scanned.stdout), { scan: { status: 'completed', targetTags: ['lab'], tags: ['cli', 'seen', 'x'], progress: { hostsTotal: 1 } } })
    t.same((await app.results.getHost(host))!.tags, ['cli', 'lab', 'seen', 'x'])
    t.match(await run('scans'), / tag:lab\n/, 'scans names the target tags beside the targets')

    // A schedule that follows a tag, from the CLI; an update of another option keeps its tags.
    const created = JSON.parse(await run('schedule', 'create', '--cron', '0 3 * * *', '--target-tag', 'lab', '--tag', 'nightly', '--json'))
    t.match(created.scan, { targetTags: ['lab'], tags: ['nightly'] })
    t.notOk('targets' in created.scan, 'no targets needed')
    const updated = JSON.parse(await run('schedule', 'update', created.id, '--ports', '22', '--json'))
    t.match(updated.scan, { targetTags: ['lab'], tags: ['nightly'], options: { ports: '22' } }, 'kept by an update of the ports')
    t.match(await run('schedule', 'show', created.id), /tag:lab \(.*tags nightly/)
    const dropped = JSON.parse(await run('schedule', 'update', created.id, '--tag', '', '--json'))
    t.notOk('tags' in dropped.scan, "--tag '' drops them")
  })
}
