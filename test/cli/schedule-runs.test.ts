// `vulnscan schedule …` against the real app on both backends: a schedule created by the CLI fires (every second, on a
// loopback port nothing listens on), and list and show give its last run, its scan and the scans it started.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import { cli, listen } from '../support/cli'
import { freePort, loopbackAddress } from '../support/loopback'

const auth = { 'x-api-key': SERVICE_KEY }
type Json = Record<string, any>
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

for (const backend of ['memory', 'redis'] as const) {
  test(`a schedule from the CLI that fires (${backend})`, async (t) => {
    if (!(await backends()).includes(backend)) {
      t.comment('Redis or PostgreSQL does not answer: skipped')
      return
    }
    const { app } = await build(t, backend, { WORKER_ENABLED: true, SCHEDULE_MIN_INTERVAL: 1 })
    const { url } = await listen(app)
    const env = { VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY }
    const get = async (id: string): Promise<Json> => (await app.inject({ url: `/app/schedule/${id}`, headers: auth })).json()

    t.test('a schedule that fires: list shows its last run and scan, show its scans', async (t) => {
      const host = loopbackAddress()
      const port = await freePort(host)
      const created = await cli(['schedule', 'create', host, '--cron', '* * * * * *', '--template', 'discovery', '--ports', String(port), '--name', 'every second', '--json'], env)
      t.equal(created.code, 0, created.stderr)
      const id = (JSON.parse(created.stdout) as Json).id as string
      let s: Json = {}
      for (let i = 0; i < 100 && (s.runs ?? 0) < 2; i++) {
        await sleep(100)
        s = await get(id)
      }
      t.ok(s.runs >= 2, `it ran (${String(s.runs)} runs)`)
      const off = await cli(['schedule', 'disable', id], env)
      t.equal(off.code, 0, off.stderr)
      // A due time taken just before the change may still start its scan; then let the scans end, so what the CLI shows is settled.
      await sleep(1500)
      for (let i = 0; i < 100; i++) {
        const scans = ((await app.inject({ url: '/app/scan?limit=100', headers: auth })).json() as Json).items.filter((x: Json) => x.scheduleId === id)
        if (scans.every((x: Json) => ['completed', 'failed', 'cancelled'].includes(x.status))) break
        await sleep(100)
      }
      s = await get(id)

      // Four reads at once: each CLI run is a process of its own that spends most of its time starting.
      const [table, listJson, show, showJson] = await Promise.all([['schedule', 'list'], ['schedule', 'list', '--json'], ['schedule', 'show', id], ['schedule', 'show', id, '--json']].map((args) => cli(args, env)))
      t.equal(table.code, 0, table.stderr)
      t.match(table.stdout, 'every second', 'its name')
      t.match(table.stdout, s.lastRun.scanId, 'the last run\'s scan id')
      t.match(table.stdout, s.lastRun.dueAt, 'the last run\'s due time')
      t.match(table.stdout, /\n1 of 1 schedules\n$/)
      const json = JSON.parse(listJson.stdout) as Json
      t.match(json, { total: 1, items: [{ id, lastRun: s.lastRun, runs: s.runs }] })

      t.equal(show.code, 0, show.stderr)
      t.match(show.stdout, new RegExp(`^Schedule ${id} \\(every second\\): \\* \\* \\* \\* \\* \\* in UTC, disabled, no next run\\.\\n`))
      t.match(show.stdout, `  scans: ${host} (template discovery, ports ${port}, p3)`, 'with the priority the server filled in')
      t.match(show.stdout, `  last run: due ${String(s.lastRun.dueAt)}, scan ${String(s.lastRun.scanId)}`)
      t.match(show.stdout, new RegExp(`Recent scans \\(\\d+ of ${String(s.runs)} among the 500 newest scans\\):\\n {2}${String(s.lastRun.scanId).replace(/\./g, '\\.')} +completed `), 'its scans, newest first')
      const shown = JSON.parse(showJson.stdout) as Json
      t.equal(shown.schedule.id, id)
      t.equal(shown.scans.length, s.runs, 'every scan it started')
      t.ok(shown.scans.every((x: Json) => x.scheduleId === id && x.id.startsWith(`schedule.${id}.`)), 'each carrying scheduleId, in the reserved namespace of run ids')
    })
  })
}
