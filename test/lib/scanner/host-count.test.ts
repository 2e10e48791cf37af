// The host cap is decided at POST time by counting (overlaps merged), and expansion never holds up the process.
import { test } from 'tap'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { countHosts, expandTargets, parseScope } from '../../../lib/scanner/targets'
import { scanLimits, scanRequestProblem } from '../../../lib/scans'
import type { Target } from '../../../lib/scanner/types'
import { build, SERVICE_KEY } from '../../helper'

const copies = (n: number, t: Target): Target[] => Array.from({ length: n }, () => ({ ...t }))

test('countHosts merges duplicates and overlaps, IPv4 and IPv6, without expanding', async (t) => {
  t.equal(countHosts(copies(256, { type: 'cidr', value: '127.1.0.0/20' })), 4096n)
  t.equal(countHosts([
    { type: 'cidr', value: '127.1.0.0/24' },
    { type: 'ip_range', value: '127.1.0.200-127.1.1.9' },
    { type: 'single_ip', value: '127.1.0.7' },
    { type: 'single_ip', value: '::ffff:127.1.0.8' }
  ]), 266n, 'a /24 plus the 10 addresses the range adds past it')
  t.equal(countHosts([{ type: 'cidr', value: 'fd00::/120' }, { type: 'ip_range', value: 'fd00::80-fd00::1ff' }, { type: 'single_ip', value: 'fd00::1' }]), 512n)
  t.equal(countHosts([{ type: 'cidr', value: '127.0.0.0/8' }, { type: 'cidr', value: '2001:db8::/32' }]), (1n << 24n) + (1n << 96n), 'huge blocks are counted, not walked')
  t.equal(countHosts([{ type: 'dns_name', value: 'localhost' }, { type: 'dns_name', value: 'LOCALHOST.' }]), 1n)
})

test('a request over MAX_HOSTS is refused when posted, naming the count and the cap', async (t) => {
  const limits = scanLimits({ MAX_TARGETS: 256, MAX_HOSTS: 4096, SCAN_ALLOW: '', SCAN_DENY: '' })
  t.equal(scanRequestProblem({ targets: copies(256, { type: 'cidr', value: '127.1.0.0/20' }) }, limits), null, 'duplicates fit')
  t.match(scanRequestProblem({ targets: [{ type: 'cidr', value: '127.1.0.0/20' }, { type: 'single_ip', value: '127.2.0.1' }] }, limits),
    { message: /4097 hosts.*limit of 4096/ })

  const { app } = await build(t, 'memory', { MAX_HOSTS: 100 })
  const res = await app.inject({
    method: 'POST',
    url: '/app/scan',
    headers: { 'x-api-key': SERVICE_KEY, 'content-type': 'application/json' },
    payload: { targets: [{ type: 'cidr', value: '127.1.0.0/26' }, { type: 'cidr', value: '127.1.0.64/26' }] }
  })
  t.equal(res.statusCode, 400)
  t.match(res.json(), { code: 'VULNSCAN_SCAN_INVALID_TARGET', error: /128 hosts.*limit of 100/ })
  t.equal((await app.scanQueue.counts()).waiting, 0, 'nothing queued')
})

test('expanding 256 copies of a /20 is linear and leaves the event loop free', async (t) => {
  const h = monitorEventLoopDelay({ resolution: 10 })
  h.enable()
  const started = process.hrtime.bigint()
  const { hosts } = await expandTargets(copies(256, { type: 'cidr', value: '127.1.0.0/20' }), { maxHosts: 4096, scope: parseScope('', '') })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  h.disable()
  t.equal(hosts.length, 4096)
  t.equal(hosts[0].address, '127.1.0.0')
  t.ok(ms < 1500, `took ${ms.toFixed(0)} ms`)
  t.ok(h.max / 1e6 < 100, `longest event-loop stall ${(h.max / 1e6).toFixed(0)} ms`)
})
