// Offline scans benchmark (not a test): the same scan three times in a row with the NVD unreachable.
// Before the shared back-off each scan retried every product the index lacked against the NVD's rate
// budget, and scans grew slower (3.1 s, 30.4 s, 59.1 s); now every later scan should take about what the
// first took or less. Beside it, the same three scans with NVD_ON_DEMAND=false (an air-gapped install).
//
//   npx tsx bench/offline.ts [--ports 6379,5672,1883,4222,5432,3306] [--target 127.0.0.1]
//
// The NVD is a listener on a loopback address that reads each request and drops the connection (as a
// failing proxy or a restarting server does; a silent one costs the client's timeout once). The index
// holds the real fixture records of test/fixtures (vmware:rabbitmq, eclipse:mosquitto, …), so some
// aliases of the products found are known and the others are not: the case that used to slow down.
import net from 'node:net'
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import app, { serverOptions } from '../app'
import { loadConfig } from '../lib/config'
import { nvdRecords } from '../test/support/sources'
import { loopbackAddress } from './support/loopback'

const KEY = 'bench-offline-key-0123456789abcdef'
const auth = { 'x-api-key': KEY, 'content-type': 'application/json' }

async function dropper (): Promise<{ url: string, connections: () => number, close: () => Promise<void> }> {
  let n = 0
  const server = net.createServer((s) => {
    n++
    s.once('data', () => s.destroy())
  })
  const host = loopbackAddress()
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const { port } = server.address() as net.AddressInfo
  return { url: `http://${host}:${port}/rest/json`, connections: () => n, close: async () => await new Promise((resolve) => server.close(() => resolve())) }
}

async function threeScans (onDemand: boolean, target: string, ports: string): Promise<{ seconds: number[], nvdConnections: number[] }> {
  const nvd = await dropper()
  const config = loadConfig({
    SERVICE_API_KEY: KEY, LOG_LEVEL: 'silent', NVD_INDEX_FILE: '', SOURCES_FILE: '', NVD_API_URL: nvd.url, NVD_ON_DEMAND: onDemand, RATE_LIMIT_MAX: 100000
  }, {})
  const fastify = Fastify(serverOptions(config))
  await fastify.register(app, { config })
  await fastify.ready()
  await fastify.backends.indexes.cve.upsertRaw(nvdRecords())
  const seconds: number[] = []
  const nvdConnections: number[] = []
  try {
    for (let i = 1; i <= 3; i++) {
      const before = nvd.connections()
      const started = performance.now()
      const id = `offline-${onDemand ? 'on' : 'off'}-${i}`
      await fastify.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id, targets: [{ value: target, type: 'single_ip' }], options: { ports } } })
      for (;;) {
        const scan = (await fastify.inject({ url: `/app/scan/${id}`, headers: auth })).json()
        if (['completed', 'failed', 'cancelled'].includes(scan.status)) {
          if (scan.status !== 'completed') throw new Error(`scan ${id} ${scan.status}: ${scan.reason ?? ''}`)
          break
        }
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      seconds.push((performance.now() - started) / 1000)
      nvdConnections.push(nvd.connections() - before)
    }
  } finally {
    await fastify.close()
    await nvd.close()
  }
  return { seconds, nvdConnections }
}

async function main (): Promise<void> {
  const { values } = parseArgs({ options: { ports: { type: 'string', default: '6379,5672,1883,4222,5432,3306' }, target: { type: 'string', default: '127.0.0.1' } } })
  process.stdout.write(`Offline scans of ${values.target} ports ${values.ports}, embedded backend, NVD unreachable\n\n`)
  process.stdout.write('| on-demand | scan 1 | scan 2 | scan 3 | worst / first (target ≤ 1.20) | NVD connections per scan |\n|---|---|---|---|---|---|\n')
  for (const onDemand of [true, false]) {
    const r = await threeScans(onDemand, values.target!, values.ports!)
    const worst = Math.max(...r.seconds.slice(1)) / r.seconds[0]
    process.stdout.write(`| ${onDemand ? 'on (NVD_BACKOFF)' : 'off'} | ${r.seconds.map((s) => `${s.toFixed(2)} s`).join(' | ')} | ${worst.toFixed(2)} | ${r.nvdConnections.join(', ')} |\n`)
  }
}

main().catch((err) => {
  process.stderr.write(`bench/offline failed: ${(err as Error).stack ?? String(err)}\n`)
  process.exitCode = 1
})
