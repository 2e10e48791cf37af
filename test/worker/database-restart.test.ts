// Faults of the results database: PostgreSQL crashes and comes back while a worker writes a scan's hosts and
// findings. The batch that met the outage fails and is retried, the writes are idempotent, and nothing the
// service acknowledged (the scan, a finding already listed) is lost or doubled.
import { test } from 'tap'
import { createServer, type Server, type Socket } from 'node:net'
import { randomInt } from 'node:crypto'
import { backends, build, SERVICE_KEY } from '../helper'
import { startFakeNvd } from '../support/fake-nvd'
import { expectedCves } from '../support/expected-cves'
import { postgresServerAvailable, startPrivatePostgres } from '../support/postgres-server'
import { countByScan, spawnWorker } from '../support/worker-process'
import { aliasesFor } from '../../lib/cpe/aliases'

const auth = { 'x-api-key': SERVICE_KEY, 'content-type': 'application/json' }
type Json = Record<string, any>

async function until<T> (what: string, fn: () => Promise<T | undefined | false>, ms: number): Promise<T> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const v = await fn().catch(() => undefined)
    if (v !== undefined && v !== false) return v
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${what}: not within ${ms} ms`)
}

const ended = (s: Json): boolean => ['completed', 'failed', 'cancelled'].includes(s.status)

/** SSH servers that greet with an old OpenSSH banner after a pause, one per address, all on one port. */
async function sshBanners (addresses: string[], delayMs: number): Promise<{ port: number, close: () => Promise<void> }> {
  const servers: Server[] = []
  const sockets = new Set<Socket>()
  let port = 0
  for (const address of addresses) {
    const s = createServer((sock) => {
      sockets.add(sock)
      sock.on('close', () => sockets.delete(sock))
      sock.on('error', () => {})
      sock.resume()
      const timer = setTimeout(() => sock.end('SSH-2.0-OpenSSH_7.2p2\r\n'), delayMs)
      sock.on('close', () => clearTimeout(timer))
    })
    await new Promise<void>((resolve, reject) => { s.once('error', reject); s.listen(port, address, resolve) })
    port = (s.address() as { port: number }).port
    servers.push(s)
  }
  return {
    port,
    close: async () => {
      for (const sock of sockets) sock.destroy()
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
    }
  }
}

test('PostgreSQL crashes and restarts while a scan writes its results: no acknowledged scan or finding lost', async (t) => {
  if (!postgresServerAvailable()) return t.pass('skipped: no PostgreSQL server binaries to run a private cluster')
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis or PostgreSQL answers (required under CI=true)')
  const pg = await startPrivatePostgres()
  t.teardown(() => pg.destroy())

  const base = `127.${randomInt(1, 255)}.${randomInt(0, 256)}`
  const addresses = Array.from({ length: 24 }, (_, i) => `${base}.${10 + i}`)
  const ssh = await sshBanners(addresses, 400)
  t.teardown(() => ssh.close())
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(() => nvd.close())
  const expected = expectedCves(aliasesFor('OpenSSH').map((a) => `${a.vendor}:${a.product}`), '7.2p2').sort()
  t.ok(expected.length > 0, 'the fixture records give OpenSSH 7.2p2 CVEs to find')

  const { app, config } = await build(t, 'redis', { DATABASE_URL: pg.url, NVD_API_URL: nvd.baseUrl })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const get = async (path: string): Promise<Json> => {
    const res = await fetch(`${url}${path}`, { headers: auth })
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`)
    return await res.json() as Json
  }

  const worker = spawnWorker({
    REDIS_URL: config.REDIS_URL,
    DATABASE_URL: pg.url,
    DATABASE_SCHEMA: config.DATABASE_SCHEMA,
    REDIS_PREFIX: config.REDIS_PREFIX,
    QUEUE_PREFIX: config.QUEUE_PREFIX,
    NVD_API_URL: nvd.baseUrl,
    NVD_RATE_LIMIT: '1000',
    QUEUE_LOCK_MS: '2000',
    SCAN_BATCH_HOSTS: '2',
    WORKER_CONCURRENCY: '2'
  })
  t.teardown(() => worker.kill())
  await worker.ready()

  const targets = addresses.map((value) => ({ value, type: 'single_ip' }))
  const posted = await fetch(`${url}/app/scan`, { method: 'POST', headers: auth, body: JSON.stringify({ id: 'pg-restart', targets, options: { template: 'standard', ports: String(ssh.port) } }) })
  t.equal(posted.status, 200, 'the scan is acknowledged')

  // The first findings are listed (acknowledged to a reader), then the database goes down mid-scan.
  const before = await until('findings written', async () => { const v = await get('/vulnerability?limit=500'); return v.total > 0 ? v : undefined }, 60_000)
  const seen = before.items.map((f: Json) => f.id as string)
  t.equal((await get('/app/scan/pg-restart')).status, 'running', 'the scan is still running when the database crashes')
  await pg.crash()
  // While it is down, the API says so with a 503 rather than a 500.
  const down = await fetch(`${url}/vulnerability`, { headers: auth })
  t.equal(down.status, 503, 'results unavailable: 503')
  t.match(await down.json(), { code: 'VULNSCAN_RESULTS_UNAVAILABLE', error: /PostgreSQL/ })
  await new Promise((resolve) => setTimeout(resolve, 1500))
  await pg.start()

  const scan = await until('the scan ends', async () => { const s = await get('/app/scan/pg-restart'); return ended(s) ? s : undefined }, 120_000)
  t.equal(scan.status, 'completed', scan.reason ?? '')
  t.equal(scan.progress.hostsDone, addresses.length)
  t.equal(scan.summary.hostsUp, addresses.length)
  t.equal(countByScan(worker.lines, 'scan finished').get('pg-restart'), 1, 'finished once')
  t.ok(worker.lines.some((l) => l.msg === 'PostgreSQL unavailable'), 'the worker met the outage (its batch was put off and run again)')

  const hosts = await get('/host?limit=100')
  t.same(hosts.items.map((h: Json) => h.address).sort(), [...addresses].sort(), 'every host is there, once')
  const vulns = await get('/vulnerability?limit=500')
  const keys = vulns.items.map((f: Json) => `${String(f.address)}|${String(f.port)}|${String(f.cveId)}`)
  t.equal(vulns.total, new Set(keys).size, 'no finding is duplicated')
  t.equal(vulns.items.length, vulns.total)
  // Every host runs the same server: each must have the same findings, the fixture CVEs for that version among them.
  const perHost = addresses.map((a) => vulns.items.filter((f: Json) => f.address === a).map((f: Json) => f.cveId as string).sort().join(' '))
  t.same(new Set(perHost).size, 1, `every host has the same findings (${perHost[0]})`)
  t.ok(expected.every((c) => perHost[0].split(' ').includes(c)), `among them the fixture CVEs for 7.2p2 (${expected.join(' ')})`)
  const ids = new Set(vulns.items.map((f: Json) => f.id as string))
  t.ok(seen.every((id: string) => ids.has(id)), `the ${seen.length} findings listed before the crash are all still there`)
  t.ok(vulns.items.every((f: Json) => f.status === 'open'), 'each written once as new: none fixed or reopened by a retry')
})
