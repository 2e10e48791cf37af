// `vulnscan scan --wait` on a terminal of 80 columns, through a pseudo-terminal (util-linux `script`): the progress
// line follows the scan's event stream and fits the width; Ctrl-C leaves the scan running, says how to cancel it,
// and that command works. On both backends: the stream is fed by the store's change events.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import { cli, cliInPty, hasScript, listen, screenLines } from '../support/cli'

test('on a terminal', { skip: hasScript() ? false : 'util-linux script is not installed' }, async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      t.test('the progress line fits 80 columns and keeps percentage, state and hosts', async (t) => {
        const { app } = await build(t, backend, { WORKER_ENABLED: true })
        const { url, address, port } = await listen(app)
        // A scan id longer than the line: it is the part that gets shortened.
        const id = `nightly-inventory-${backend}-${'x'.repeat(60)}`
        const run = cliInPty(['scan', address, '--template', 'discovery', '--ports', String(port), '--id', id, '--wait'], { VULNSCAN_URL: url, VULNSCAN_API_KEY: SERVICE_KEY })
        t.teardown(run.kill)
        const code = await run.done
        t.equal(code, 0, run.output())
        const progress = screenLines(run.output()).filter((l) => /\d+% \| /.test(l))
        t.ok(progress.length > 0, 'progress lines were drawn')
        for (const line of progress) {
          t.ok(line.length <= 79, `at most 79 columns: ${JSON.stringify(line)}`)
          t.match(line, /\d+% \| (queued|running|completed) \| hosts \d+\/(\d+|\?)/)
        }
        const last = progress[progress.length - 1]
        t.match(last, /^nightly-inven\S*… .*100% \| completed \| hosts 1\/1/, 'the last state: the id shortened, 100%, completed, the host')
        t.match(run.output(), `Scan ${id} completed: 1 host up, 1 open port.`)
      })

      t.test('Ctrl-C: the scan goes on, the message says how to cancel it, exit 130', async (t) => {
        // No worker: the scan stays queued for as long as the test needs.
        const { app } = await build(t, backend, { WORKER_ENABLED: false })
        const { url, address } = await listen(app)
        const id = `cli-ctrl-c-${backend}`
        const run = cliInPty(['scan', address, '--id', id, '--wait', '--url', url], { VULNSCAN_API_KEY: SERVICE_KEY })
        t.teardown(run.kill)
        await run.waitFor(/0% \| queued \| hosts 0\/\d/)
        run.type('\x03')
        const code = await run.done
        t.equal(code, 130, 'exit 130, as a shell reports an interrupted command')
        const out = screenLines(run.output()).join('\n')
        t.match(out, `Interrupted. Scan ${id} goes on on the server (queued, 0%).`)
        t.notMatch(out, SERVICE_KEY, 'the key is not printed')
        t.match(out, `follow it again: vulnscan status ${id} --wait --url ${url}`)
        const cancel = /cancel it: +vulnscan (cancel .*)$/m.exec(out)
        t.ok(cancel, 'names the cancel command')
        t.equal(cancel?.[1], `cancel ${id} --url ${url}`, 'with the --url that was typed, never the key')

        const still = await app.inject({ method: 'GET', url: `/app/scan/${id}`, headers: { 'x-api-key': SERVICE_KEY } })
        t.equal(still.json<{ status: string }>().status, 'queued', 'the scan was left alone')

        const cancelled = await cli(cancel?.[1].split(' ') ?? [], { VULNSCAN_API_KEY: SERVICE_KEY })
        t.equal(cancelled.code, 0, cancelled.stderr)
        t.match(cancelled.stdout, `Scan ${id} cancelled at 0%`)
        const after = await app.inject({ method: 'GET', url: `/app/scan/${id}`, headers: { 'x-api-key': SERVICE_KEY } })
        t.equal(after.json<{ status: string }>().status, 'cancelled', 'the printed command cancelled it')
      })
    })
  }
})
