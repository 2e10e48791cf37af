import { randomBytes, randomInt } from 'node:crypto'
import * as http from 'node:http'
import * as net from 'node:net'
import { test } from 'tap'
import Redis from 'ioredis'
import { runScan, scanHosts, type ScanStages } from '../../../lib/scanner/engine'
import { parseScope } from '../../../lib/scanner/targets'
import { getTemplate } from '../../../lib/scanner/templates'
import type { HostResult } from '../../../lib/domain/hosts'
import type { ScanProgress } from '../../../lib/scanner/types'
import type { ServiceInfo } from '../../../lib/domain/services'

/** A random /29 in 127/8, away from 127.0.0.0/24 where the machine's daemons listen. */
function randomBlock29 (): { cidr: string, addresses: string[] } {
  const a = randomInt(1, 255)
  const b = randomInt(0, 256)
  const c = randomInt(0, 32) * 8
  return { cidr: `127.${a}.${b}.${c}/29`, addresses: Array.from({ length: 8 }, (_, i) => `127.${a}.${b}.${c + i}`) }
}

async function listen (server: net.Server, host: string, port: number): Promise<() => Promise<void>> {
  const sockets = new Set<net.Socket>()
  server.on('connection', (s: net.Socket) => { sockets.add(s); s.on('close', () => sockets.delete(s)); s.on('error', () => {}) })
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen({ host, port }, resolve) })
  return async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

const sshServer = (): net.Server => net.createServer((s) => { s.write('SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n') })
const silentServer = (): net.Server => net.createServer(() => {})
const garbageServer = (): net.Server => net.createServer((s) => { s.write(randomBytes(48)); s.on('data', () => s.write(randomBytes(16))) })
const httpServer = (): http.Server => http.createServer((_req, res) => {
  res.setHeader('Server', 'nginx/1.22.1')
  res.end('<html><body>hello</body></html>')
})

test('a CIDR scan of a /29 finds exactly the hosts and ports the test opened, with their services', async (t) => {
  const block = randomBlock29()
  const [a, b, c] = [block.addresses[1], block.addresses[4], block.addresses[7]]
  const closers = [
    await listen(sshServer(), a, 22),
    await listen(silentServer(), a, 8080),
    await listen(httpServer(), b, 80),
    await listen(garbageServer(), c, 6379)
  ]
  t.teardown(async () => { await Promise.all(closers.map((x) => x())) })

  const progress: ScanProgress[] = []
  const reported: string[] = []
  const stages: ScanStages[] = []
  const template = getTemplate('quick', '21,22,80,443,6379,8080')
  const { hosts, excluded } = await runScan([{ type: 'cidr', value: block.cidr }], {
    maxHosts: 16,
    template,
    detectTimeoutMs: 4000,
    onProgress: (p) => progress.push({ ...p }),
    onHost: (h) => reported.push(h.address),
    onStages: (st) => stages.push(st)
  })
  t.same(excluded, [])
  t.equal(stages.length, 1, 'the stages are told once, at the end')
  t.ok(stages[0].discoveryMs > 0 && stages[0].portScanMs > 0 && stages[0].detectionMs > 0, `each stage took its time: ${JSON.stringify(stages[0])}`)
  t.same(hosts.map((h) => h.address), block.addresses, 'every address of the block, in order')
  const withOpen = hosts.filter((h) => h.ports.some((p) => p.state === 'open'))
  t.same(withOpen.map((h) => h.address), [a, b, c], 'exactly the hosts the test opened')
  const openOf = (h: HostResult | undefined): number[] => (h?.ports ?? []).filter((p) => p.state === 'open').map((p) => p.port)
  t.same(openOf(hosts[1]), [22, 8080])
  t.same(openOf(hosts[4]), [80])
  t.same(openOf(hosts[7]), [6379])
  t.equal(hosts[1].closedCount, 4)
  t.ok(hosts.every((h) => h.up), 'loopback addresses answer (refuse), so all are up')

  const ssh = hosts[1].ports.find((p) => p.port === 22)?.service
  t.equal(ssh?.service, 'ssh')
  t.equal(ssh?.product, 'OpenSSH')
  t.equal(ssh?.version, '9.2p1')
  t.ok(ssh?.cpe.some((x) => x.startsWith('cpe:2.3:a:openbsd:openssh:')))
  const web = hosts[4].ports.find((p) => p.port === 80)?.service
  t.equal(web?.service, 'http')
  t.equal(web?.product, 'nginx')
  t.equal(web?.version, '1.22.1')
  const silent = hosts[1].ports.find((p) => p.port === 8080)?.service
  t.ok(silent !== undefined, 'a silent port still gets a (possibly unknown) service entry')
  t.ok(hosts[7].ports[0].service !== undefined, 'garbage replies do not break detection')

  t.same([...reported].sort(), [...block.addresses].sort(), 'onHost once per host')
  for (let i = 1; i < progress.length; i++) {
    t.ok(progress[i].portsDone >= progress[i - 1].portsDone && progress[i].hostsDone >= progress[i - 1].hostsDone)
  }
  t.same(progress.at(-1), { hostsTotal: 8, hostsDone: 8, portsTotal: 48, portsDone: 48 })
})

test('discovery runs no service detection', async (t) => {
  const host = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`
  const close = await listen(sshServer(), host, 22)
  t.teardown(close)
  let calls = 0
  const [h] = await scanHosts([{ address: host, hostnames: ['box.test'] }], {
    template: getTemplate('discovery', '22,23'),
    detect: async () => { calls++; return { service: 'x', cpe: [] } }
  })
  t.equal(calls, 0)
  t.same(h, { address: host, hostnames: ['box.test'], up: true, ports: [{ port: 22, protocol: 'tcp', state: 'open' }], closedCount: 1, rttMs: h.rttMs })
})

test('detections are bounded in number and each open port is detected once', async (t) => {
  const host = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`
  const ports = [7001, 7002, 7003, 7004, 7005, 7006, 7007]
  const closers = await Promise.all(ports.map(async (p) => await listen(silentServer(), host, p)))
  t.teardown(async () => { await Promise.all(closers.map((x) => x())) })
  let active = 0
  let most = 0
  const seen: number[] = []
  const [h] = await scanHosts([{ address: host, hostnames: [] }], {
    template: getTemplate('standard', ports.join(',')),
    detectConcurrency: 3,
    detect: async (o) => {
      active++
      most = Math.max(most, active)
      seen.push(o.port)
      t.equal(o.level, 'full')
      await new Promise((resolve) => setTimeout(resolve, 30))
      active--
      return { service: 'test', product: `p${o.port}`, cpe: [] } satisfies ServiceInfo
    }
  })
  t.equal(most, 3)
  t.same([...seen].sort(), ports)
  t.same(h.ports.map((p) => p.service?.product), ports.map((p) => `p${p}`))
})

test('scans the real Redis on this machine and reports the version it reports about itself', async (t) => {
  const redis = new Redis({ host: '127.0.0.1', port: 6379, lazyConnect: true, maxRetriesPerRequest: 1 })
  try {
    await redis.connect()
  } catch {
    t.comment('no Redis on 127.0.0.1:6379: nothing to compare with')
    return
  }
  const info = await redis.info('server')
  await redis.quit()
  const version = /redis_version:(\S+)/.exec(info)?.[1]
  const { hosts } = await runScan([{ type: 'dns_name', value: 'localhost' }], { maxHosts: 4, template: getTemplate('quick', '6379') })
  const v4 = hosts.find((h) => h.address === '127.0.0.1')
  t.ok(v4, 'localhost resolves to 127.0.0.1')
  t.same(v4?.hostnames, ['localhost'])
  const svc = v4?.ports.find((p) => p.port === 6379)?.service
  t.equal(svc?.service, 'redis')
  t.equal(svc?.product, 'Redis')
  t.equal(svc?.version, version)
})

test('cancellation stops the scan during detection within a second', async (t) => {
  const host = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`
  const close = await listen(silentServer(), host, 9999)
  t.teardown(close)
  const ac = new AbortController()
  const started = performance.now()
  setTimeout(() => ac.abort(), 300)
  await t.rejects(scanHosts([{ address: host, hostnames: [] }], { template: getTemplate('full', '9999'), signal: ac.signal }), { name: 'AbortError' })
  const took = performance.now() - started
  t.ok(took < 1300, `rejected ${Math.round(took)} ms after the start (abort at 300 ms)`)
})

test('runScan refuses bad targets and reports out-of-scope addresses as excluded', async (t) => {
  await t.rejects(runScan([{ type: 'single_ip', value: '127.0.0.300' }], { maxHosts: 4, template: getTemplate('quick') }), /not a valid IPv4/)
  const { hosts, excluded } = await runScan([{ type: 'dns_name', value: 'localhost' }], {
    maxHosts: 4, template: getTemplate('discovery', '1'), scope: parseScope('127.0.0.0/8', ''), resolve: async () => ['127.0.0.1', '10.1.2.3']
  })
  t.same(hosts.map((h) => h.address), ['127.0.0.1'])
  t.same(excluded, [{ address: '10.1.2.3', reason: '10.1.2.3 is outside the allowed scope' }])
})
