// `vulnscan scan --wait` must always end on Ctrl-C and on --timeout, even when the garbage collector runs while it
// waits: an abort that reaches the request only through weakly held signals (AbortSignal.any, a Request's follower
// signal) is lost once they are collected, and the command then waits for ever. The CLI runs on a pseudo-terminal
// with a full collection every 20 ms; the API has no worker, so the scan stays queued and the stream stays silent.
import { test } from 'tap'
import { build, SERVICE_KEY } from '../helper'
import { cliInPty, GC_PRESSURE, hasScript, listen, screenLines } from '../support/cli'

/** The exit status, or -1 when the command is still running after `ms` (the timer is cleared either way). */
async function within (done: Promise<number>, ms: number): Promise<number> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([done, new Promise<number>((resolve) => { timer = setTimeout(() => resolve(-1), ms) })])
  } finally {
    clearTimeout(timer)
  }
}

test('the wait ends under garbage collection', { skip: hasScript() ? false : 'util-linux script is not installed' }, async (t) => {
  const { app } = await build(t, 'memory', { WORKER_ENABLED: false })
  const { url, address } = await listen(app)

  for (let round = 1; round <= 2; round++) {
    t.test(`--timeout ends the command (round ${round})`, async (t) => {
      const id = `gc-timeout-${round}`
      const started = Date.now()
      const run = cliInPty(['scan', address, '--id', id, '--wait', '--timeout', '3', '--url', url], { VULNSCAN_API_KEY: SERVICE_KEY }, 80, GC_PRESSURE)
      t.teardown(run.kill)
      const code = await within(run.done, 60_000)
      t.equal(code, 3, `exit 3 (the documented timeout status), not a hang: ${JSON.stringify(run.output())}`)
      t.ok(Date.now() - started < 60_000, 'within a minute of a 3 s timeout')
      t.match(screenLines(run.output()).join('\n'), `Scan ${id} did not finish within 3 s`)
    })

    t.test(`Ctrl-C ends the command (round ${round})`, async (t) => {
      const id = `gc-ctrl-c-${round}`
      const run = cliInPty(['scan', address, '--id', id, '--wait', '--url', url], { VULNSCAN_API_KEY: SERVICE_KEY }, 80, GC_PRESSURE)
      t.teardown(run.kill)
      await run.waitFor(/0% \| queued \| hosts 0\/\d/)
      // Long enough for several collections after the stream opened.
      await new Promise((resolve) => setTimeout(resolve, 1000))
      run.type('\x03')
      const code = await within(run.done, 60_000)
      t.equal(code, 130, `exit 130, not a hang: ${JSON.stringify(run.output())}`)
      t.match(screenLines(run.output()).join('\n'), `Interrupted. Scan ${id} goes on on the server`)
    })
  }
})
