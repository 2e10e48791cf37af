// Ten reports (every format) and ten diffs of a 4,096-finding scan at once, over real HTTP: the abuse pass saw /health
// wait 2-5 s behind them (each report or diff ran in long turns of the event loop), and on PostgreSQL the exports took
// every pooled connection, so that reports waiting for one were cut after 5 s. Now each is read and written in short
// turns and at most half the pool streams at once: every answer arrives whole, and no turn of the event loop holds
// much work. The turn is measured in CPU time (what runs between two ticks of a 1 ms timer), not wall time, so that a
// busy machine does not fail it.
import t0, { test } from 'tap'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { request } from 'node:http'
import { backends, build, SERVICE_KEY } from '../../helper'
import { finding, write } from '../../support/results'
import { listenOnLoopback } from '../../support/raw-http'
import { fileTimeout } from '../../support/file-timeout'

t0.setTimeout(fileTimeout(420_000))

/** The CPU a turn of the event loop may hold: before the change, 560-950 ms on the embedded store. */
const TURN_CPU_MS = 400
const CVES = readdirSync(join(__dirname, '..', '..', 'fixtures', 'nvd', 'cves')).map((f) => f.replace(/\.json$/, '')).slice(0, 16)

function get (where: { host: string, port: number }, path: string): Promise<{ status: number, bytes: number, ms: number }> {
  const started = Date.now()
  return new Promise((resolve, reject) => {
    const req = request({ host: where.host, port: where.port, path, headers: { 'x-api-key': SERVICE_KEY } }, (res) => {
      let bytes = 0
      res.on('data', (d: Buffer) => { bytes += d.length })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, ms: Date.now() - started }))
      res.on('aborted', () => reject(new Error(`${path}: the answer was cut after ${bytes} bytes`)))
    })
    req.on('error', reject)
    req.end()
  })
}

/** The most CPU spent between two ticks of a 1 ms timer while `work` runs, and the slowest /health meanwhile. */
async function measured<T> (where: { host: string, port: number }, work: () => Promise<T>): Promise<{ result: T, turnMs: number, healthMs: number }> {
  let turnMs = 0
  let last = process.cpuUsage()
  let ticking = true
  const tick = (): void => {
    const c = process.cpuUsage(last)
    turnMs = Math.max(turnMs, (c.user + c.system) / 1000)
    last = process.cpuUsage()
    if (ticking) setTimeout(tick, 1)
  }
  setTimeout(tick, 1)
  let healthMs = 0
  let stop = false
  const pinger = (async () => {
    while (!stop) {
      healthMs = Math.max(healthMs, (await get(where, '/health')).ms)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  try {
    return { result: await work(), turnMs, healthMs }
  } finally {
    stop = true
    ticking = false
    await pinger
  }
}

test('ten reports and ten diffs of a 4,096-finding scan at once arrive whole and leave the event loop short turns', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const writes = []
      for (let h = 0; h < 256; h++) {
        const address = `10.70.0.${h}`
        writes.push(write({ address, at: Date.now(), scanId: 'big', services: CVES.map((_, i) => ({ port: 1000 + i, service: 'http', product: 'x', version: '1' })), findings: CVES.map((c, i) => finding(address, 1000 + i, c, 'x', '1')) }))
      }
      for (let i = 0; i < writes.length; i += 32) await app.results.recordHosts(writes.slice(i, i + 32))
      for (const id of ['big', 'before']) {
        await app.inject({ method: 'POST', url: '/app/scan', headers: { 'x-api-key': SERVICE_KEY }, payload: { id, targets: [{ value: '10.70.0.0/24', type: 'cidr' }] } })
        await app.store.updateScan(id, { status: 'completed', finishedAt: new Date().toISOString() })
      }
      t.equal((await app.results.listFindings({ scanId: 'big', limit: 1, offset: 0 })).total, 4096, 'the scan observed 4,096 findings')
      const where = await listenOnLoopback(app)
      for (const path of ['/app/scan/big/report?format=json', '/app/scan/big/report?format=html', '/app/scan/big/report?format=csv',
        '/app/scan/big/report?format=sarif', '/app/scan/big/diff?against=before&limit=1000']) {
        const { result, turnMs, healthMs } = await measured(where, async () => await Promise.all(Array.from({ length: 10 }, async () => await get(where, path))))
        t.ok(result.every((r) => r.status === 200 && r.bytes === result[0].bytes && r.bytes > 100_000), `${path}: ten whole answers of ${result[0].bytes} bytes`)
        t.ok(turnMs < TURN_CPU_MS, `${path}: the longest turn of the event loop held ${Math.round(turnMs)} ms of CPU (under ${TURN_CPU_MS}); /health answered within ${healthMs} ms`)
      }
    })
  }
})
