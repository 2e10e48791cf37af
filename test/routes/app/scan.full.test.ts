import { test } from 'tap'
import { getTemplate } from '../../../lib/scanner/templates'
import { Queue } from 'bullmq'
import { backends, build, SERVICE_KEY } from '../../helper'

const auth = { 'x-api-key': SERVICE_KEY }
const CONTRACT_BODY = { id: 'scan-1', targets: [{ value: '10.0.0.1', type: 'single_ip' }], options: { template: 'quick' }, priority: 3 }

test('POST /app/scan keeps the contract and queues the scan', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app, config } = await build(t, backend)
      const res = await app.inject({ method: 'POST', url: '/app/scan', headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify(CONTRACT_BODY) })
      t.equal(res.statusCode, 200)
      t.same(res.json(), { status: 'Message sent successfully', id: 'scan-1' })

      const scan = await app.inject({ url: '/app/scan/scan-1', headers: auth })
      t.equal(scan.statusCode, 200)
      t.match(scan.json(), { id: 'scan-1', status: 'queued', template: 'quick', priority: 3, targets: CONTRACT_BODY.targets })
      t.notOk('requestHash' in scan.json(), 'internal fields stay inside')
      t.same((await app.inject({ url: '/app/scan/nope', headers: auth })).json().code, 'VULNSCAN_NOT_FOUND')
      t.equal((await app.inject({ url: '/app/scan/nope', headers: auth })).statusCode, 404)

      const counts = await app.scanQueue.counts()
      t.equal(counts.waiting, 1, 'one job waits on the queue')
      if (backend === 'redis') {
        const q = new Queue('scans', { connection: { url: config.REDIS_URL }, prefix: config.QUEUE_PREFIX })
        t.teardown(() => q.close())
        const job = await q.getJob('scan-1')
        t.ok(job, 'the job id is the scan id')
        t.equal(job?.opts.priority, 3, 'API priority 3 is BullMQ priority 3')
      }
    })
  }
})

test('priority 5 is served first', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app, config } = await build(t, backend)
      for (const [id, priority] of [['low', 1], ['mid', 3], ['urgent', 5]] as const) {
        const res = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id, targets: [{ value: '10.0.0.1', type: 'single_ip' }], priority } })
        t.equal(res.statusCode, 200)
      }
      if (backend === 'redis') {
        const q = new Queue('scans', { connection: { url: config.REDIS_URL }, prefix: config.QUEUE_PREFIX })
        t.teardown(() => q.close())
        const order = (await q.getJobs(['prioritized'], 0, -1, true)).map((j) => j.id)
        t.same(order, ['urgent', 'mid', 'low'])
      } else {
        const seen: string[] = []
        await new Promise<void>((resolve) => { void app.scanQueue.process(async (job) => { seen.push(job.id); if (seen.length === 3) resolve() }, { concurrency: 1, lockDurationMs: 1000 }) })
        t.same(seen, ['urgent', 'mid', 'low'])
      }
    })
  }
})

test('re-posting the same id: same body is a no-op 200, another body is a 409', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      const first = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: CONTRACT_BODY })
      const again = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: CONTRACT_BODY })
      t.equal(again.statusCode, 200)
      t.same(again.json(), first.json())
      const list = await app.inject({ url: '/app/scan', headers: auth })
      t.equal(list.json().total, 1, 'nothing new was created')
      t.equal((await app.scanQueue.counts()).waiting, 1, 'nothing new was queued')
      const other = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { ...CONTRACT_BODY, priority: 4 } })
      t.equal(other.statusCode, 409)
      t.equal(other.json().code, 'VULNSCAN_CONFLICT')
      t.match(other.json().error, /scan-1/)
    })
  }
})

test('defaults: a generated UUID id, template quick, priority 3', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { targets: [{ value: '::1', type: 'single_ip' }] } })
  t.equal(res.statusCode, 200)
  const { id } = res.json()
  t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  t.match((await app.inject({ url: `/app/scan/${id}`, headers: auth })).json(), { template: 'quick', priority: 3 })
})

test('udpPorts alone asks for UDP: no default udp: false is filled in over it', async (t) => {
  const { app } = await build(t)
  const posted = async (options: Record<string, unknown>): Promise<{ udp?: boolean, udpPorts?: string }> => {
    const res = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { targets: [{ value: '10.0.0.1', type: 'single_ip' }], options } })
    t.equal(res.statusCode, 200, res.body)
    return (await app.inject({ url: `/app/scan/${res.json<{ id: string }>().id}`, headers: auth })).json()
  }
  const withPorts = await posted({ udpPorts: '53,161' })
  t.not(withPorts.udp, false, 'udp is not set to false')
  t.equal(getTemplate('quick', undefined, withPorts).udp, true, 'the worker scans UDP')
  t.same(getTemplate('quick', undefined, withPorts).udpPorts, [53, 161])
  t.equal(getTemplate('quick', undefined, await posted({})).udp, false, 'no UDP unless asked for')
  t.equal(getTemplate('quick', undefined, await posted({ udpPorts: '53', udp: false })).udp, false, 'udp: false wins')
})

test('invalid scans are refused with a 400 that names the field, and nothing is queued', async (t) => {
  const { app } = await build(t, 'memory', { MAX_TARGETS: 3, MAX_HOSTS: 256, SCAN_DENY: '192.0.2.0/24' })
  const target = (value: string, type = 'single_ip') => ({ targets: [{ value, type }] })
  const cases: [unknown, RegExp][] = [
    [{}, /^targets: a scan needs at least one target, or targetTags/],
    [{ targets: [] }, /^targets: a scan needs at least one target, or targetTags/],
    [{ targets: Array(4).fill({ value: '10.0.0.1', type: 'single_ip' }) }, /targets has 4 items, more than the limit of 3/],
    [target('10.0.0.1', 'hostname'), /targets\[0\]\.type must be one of: single_ip, ip_range, cidr, dns_name/],
    [target('10.0.0.300'), /targets\[0\]\.value/],
    [target('not-an-ip'), /targets\[0\]\.value/],
    [target('10.0.0.9-10.0.0.1', 'ip_range'), /targets\[0\]\.value/],
    [target('10.0.0.1-10.0.0', 'ip_range'), /targets\[0\]\.value/],
    [target('10.0.0.0/8', 'cidr'), /targets\[0\]\.value/],
    [target('10.0.0.0/33', 'cidr'), /targets\[0\]\.value/],
    [target('-bad-.example', 'dns_name'), /targets\[0\]\.value/],
    [target('192.0.2.7'), /targets\[0\]\.value/],
    [{ ...target('10.0.0.1'), options: { template: 'huge' } }, /options\.template must be one of: quick, standard, full, discovery/],
    [{ ...target('10.0.0.1'), options: { ports: '0,22' } }, /options\.ports/],
    [{ ...target('10.0.0.1'), options: { ports: '22,70000' } }, /options\.ports/],
    [{ ...target('10.0.0.1'), options: { ports: 'ssh' } }, /options\.ports/],
    [{ ...target('10.0.0.1'), priority: 0 }, /priority must be >= 1/],
    [{ ...target('10.0.0.1'), priority: 6 }, /priority must be <= 5/],
    [{ ...target('10.0.0.1'), priority: 2.5 }, /priority must be an integer/],
    [{ ...target('10.0.0.1'), priority: '3' }, /priority must be an integer/],
    [{ ...target('10.0.0.1'), id: 'has space' }, /id has an invalid format/],
    [{ ...target('10.0.0.1'), id: 'x'.repeat(129) }, /id must be at most 128 characters/],
    [{ ...target('10.0.0.1'), surprise: true }, /unknown field 'surprise'/],
    [{ targets: [{ value: '10.0.0.1', type: 'single_ip', port: 22 }] }, /targets\[0\] has unknown field 'port'/],
    [{ ...target('10.0.0.1'), options: { template: 'quick', depth: 2 } }, /options has unknown field 'depth'/]
  ]
  for (const [payload, message] of cases) {
    const res = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: payload as object })
    t.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 80))
    t.match(res.json().error, message)
    t.type(res.json().code, 'string')
  }
  t.equal((await app.scanQueue.counts()).waiting, 0, 'nothing was queued')
  t.equal((await app.inject({ url: '/app/scan', headers: auth })).json().total, 0, 'nothing was stored')
})

test('valid target forms are accepted', async (t) => {
  const { app } = await build(t, 'memory', { MAX_HOSTS: 256 })
  for (const target of [
    { value: '10.0.0.1', type: 'single_ip' }, { value: '2001:db8::1', type: 'single_ip' },
    { value: '10.0.0.1-10.0.0.20', type: 'ip_range' }, { value: '10.0.0.0/24', type: 'cidr' },
    { value: 'localhost', type: 'dns_name' }, { value: 'scanme.example.org', type: 'dns_name' }
  ]) {
    const res = await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { targets: [target], options: { template: 'discovery', ports: '22,80,8000-8100' } } })
    t.equal(res.statusCode, 200, `${target.type} ${target.value}: ${res.body}`)
  }
})

test('GET /app/scan lists newest first, filters by status and pages', async (t) => {
  for (const backend of await backends()) {
    t.test(backend, async (t) => {
      const { app } = await build(t, backend)
      for (let i = 0; i < 5; i++) {
        await app.inject({ method: 'POST', url: '/app/scan', headers: auth, payload: { id: `s${i}`, targets: [{ value: '10.0.0.1', type: 'single_ip' }] } })
        await new Promise((resolve) => setTimeout(resolve, 2))
      }
      const page = (await app.inject({ url: '/app/scan?limit=2&offset=1', headers: auth })).json()
      t.equal(page.total, 5)
      t.equal(page.limit, 2)
      t.equal(page.offset, 1)
      t.same(page.items.map((s: { id: string }) => s.id), ['s3', 's2'])
      t.equal((await app.inject({ url: '/app/scan?status=queued', headers: auth })).json().total, 5)
      t.equal((await app.inject({ url: '/app/scan?status=completed', headers: auth })).json().total, 0)
      const bad = await app.inject({ url: '/app/scan?status=done', headers: auth })
      t.equal(bad.statusCode, 400)
      t.match(bad.json().error, /querystring\.status must be one of/)
      t.equal((await app.inject({ url: '/app/scan?limit=0', headers: auth })).statusCode, 400)
    })
  }
})
