// `vulnscan report` against the real app on both backends: each format to stdout or a file, the filters, and the
// refusals (unknown scan, running scan, unknown format) with their exit statuses.
import { test } from 'tap'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { backends, build, SERVICE_KEY } from '../helper'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { BIN, cleanEnv, cli, cliInPty, hasScript, listen } from '../support/cli'
import { seedScan, threeHosts } from '../support/report-scans'
import { CSV_COLUMNS } from '../../lib/findings-csv'

const T0 = Date.parse('2026-03-01T00:00:00.000Z')

test('report needs no server to explain itself', async (t) => {
  const env = { VULNSCAN_URL: 'http://127.0.0.1:9', VULNSCAN_API_KEY: 'k' }
  const help = await cli(['report', '--help'], env)
  t.equal(help.code, 0)
  t.match(help.stdout, /^Usage: vulnscan report \[options\] <scan-id>/)
  t.match(help.stdout, /--format <format>\s+json \| csv \| sarif \| html \| cyclonedx \| openvex\s+\(default:\s+html\)/)
  t.match(help.stdout, /--output <file>/)
  const overview = await cli(['--help'], env)
  t.match(overview.stdout, '\n  report <scan-id> ', 'the overview lists it')
  const bad = await cli(['report', 'x', '--format', 'pdf'], env)
  t.equal(bad.code, 2)
  t.match(bad.stderr, /--format must be one of: json, csv, sarif, html, cyclonedx, openvex \(got 'pdf'\)/)
  const none = await cli(['report'], env)
  t.equal(none.code, 2)
  t.match(none.stderr, /report needs one scan id/)
})

for (const backend of ['memory', 'redis'] as const) {
  test(`vulnscan report against a live server (${backend})`, async (t) => {
    if (!(await backends()).includes(backend)) {
      t.comment('Redis or PostgreSQL does not answer: skipped')
      return
    }
    const { app } = await build(t, backend)
    const { url } = await listen(app)
    const env = { VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY }
    await seedScan(app, { id: 'cli-report', at: T0, hosts: threeHosts() })
    const dir = mkdtempSync(join(tmpdir(), 'vulnscan-cli-report-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))

    const html = join(dir, 'r.html')
    const wrote = await cli(['report', 'cli-report', '--output', html], env)
    t.equal(wrote.code, 0, wrote.stderr)
    const page = readFileSync(html, 'utf8')
    t.match(wrote.stdout, new RegExp(`^Wrote the html report of scan cli-report to .*r\\.html \\(${Buffer.byteLength(page)} bytes\\)\\.\\n$`))
    t.match(page, /^<!DOCTYPE html>/, 'HTML by default')
    t.match(page, /<\/html>\n$/, 'whole')

    const sarif = await cli(['report', 'cli-report', '--format', 'sarif'], env)
    t.equal(sarif.code, 0, sarif.stderr)
    t.equal((JSON.parse(sarif.stdout) as { runs: Array<{ results: unknown[] }> }).runs[0].results.length, 4, 'SARIF on stdout, nothing else')

    const csv = await cli(['report', 'cli-report', '--format', 'csv', '--min-severity', 'critical'], env)
    t.equal(csv.code, 0, csv.stderr)
    const rows = csv.stdout.split('\r\n').filter((l) => l !== '')
    t.equal(rows[0], CSV_COLUMNS.join(','))
    t.ok(rows.length > 1 && rows.slice(1).every((r) => r.split(',')[4] === 'critical'), 'only critical findings', { rows })

    const json = join(dir, 'r.json')
    t.equal((await cli(['report', 'cli-report', '--format', 'json', '--output', json], env)).code, 0)
    t.equal((JSON.parse(readFileSync(json, 'utf8')) as { hosts: unknown[] }).hosts.length, 3)

    const link = await cli(['report', 'cli-report', '--link', '--expires', '120'], env)
    t.equal(link.code, 0, link.stderr)
    const linkUrl = link.stdout.split('\n')[0]
    t.match(linkUrl, /^http:\/\/.*\/app\/scan\/cli-report\/report\/shared\?token=/, 'a link on the first line')
    const opened = await fetch(linkUrl)
    t.equal(opened.status, 200, 'the link opens without a key')
    t.match(await opened.text(), /^<!DOCTYPE html>/)
    t.equal((await cli(['report', 'cli-report', '--link', '--expires', '9999'], env)).code, 2, '--expires beyond an hour is a usage error')
    const vex = await cli(['report', 'cli-report', '--format', 'openvex'], env)
    t.equal(vex.code, 0, vex.stderr)
    t.match(JSON.parse(vex.stdout), { '@context': 'https://openvex.dev/ns/v0.2.0', statements: Array })

    const missing = await cli(['report', 'no-such-scan'], env)
    t.equal(missing.code, 3)
    t.match(missing.stderr, /vulnscan answered 404: No scan with id 'no-such-scan'/)
    await seedScan(app, { id: 'cli-running', at: T0, hosts: [], status: 'running' })
    const running = await cli(['report', 'cli-running', '--output', join(dir, 'never.html')], env)
    t.equal(running.code, 3)
    t.match(running.stderr, /409: Scan 'cli-running' is running: its report is ready once it ends/)
  })
}

test('report into a closed pipe and onto a terminal', async (t) => {
  const { app } = await build(t, 'memory')
  const { url } = await listen(app)
  const env = { VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY }
  await seedScan(app, { id: 'cli-pipe', at: T0, hosts: threeHosts() })

  t.test('| head: the reader went away, no stack trace', async (t) => {
    // Our end of the pipe is closed before the CLI writes: its first write meets EPIPE, as behind `| head -1`.
    const child = spawn(process.execPath, [BIN, 'report', 'cli-pipe'], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
    child.stdout.destroy()
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    t.equal(stderr, '', 'nothing on stderr')
    t.equal(code, 0, 'exit 0, as a pipeline expects')
  })

  t.test('on a terminal the HTML goes to a file it names', { skip: hasScript() ? false : 'util-linux script is not installed' }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'vulnscan-cli-tty-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const run = cliInPty(['report', 'cli-pipe'], env, 80, [], dir)
    t.teardown(run.kill)
    t.equal(await run.done, 0, run.output())
    t.notMatch(run.output(), /<!DOCTYPE html>/, 'no markup on the terminal')
    t.match(run.output(), /Wrote the html report of scan cli-pipe to vulnscan-report-cli-pipe\.html \(\d+ bytes\)/)
    t.ok(existsSync(join(dir, 'vulnscan-report-cli-pipe.html')))
  })
})
