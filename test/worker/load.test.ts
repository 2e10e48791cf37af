// Load: 1,000 scans posted at once by 50 clients over HTTP are all accepted, all end, none runs twice,
// and a lone worker taking one job at a time starts them strictly by priority.
import { test } from 'tap'
import { backends, build, SERVICE_KEY } from '../helper'
import { countByScan, spawnWorker } from '../support/worker-process'
import { listenOnLoopback } from '../support/raw-http'

const auth = { 'x-api-key': SERVICE_KEY, 'content-type': 'application/json' }
const CLIENTS = 50
const PER_CLIENT = 20
type Json = Record<string, any>

test('1,000 scans from 50 concurrent clients: all accepted, all end once, higher priority first', async (t) => {
  if (!(await backends()).includes('redis')) return t.pass('skipped: no Redis answers (required under CI=true)')
  const { app, config } = await build(t, 'redis')
  const listening = await listenOnLoopback(app)
  const base = `http://${listening.host}:${listening.port}`

  const priorityOf = new Map<string, number>()
  const statuses: number[] = []
  const acked: string[] = []
  await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
    for (let i = 0; i < PER_CLIENT; i++) {
      const id = `load-${client}-${i}`
      // Every client mixes all five priorities, so the queue order is not the posting order.
      const priority = 1 + ((client + i) % 5)
      priorityOf.set(id, priority)
      const ports = i % 2 === 0 ? '6379' : '6379,1'
      const res = await fetch(`${base}/app/scan`, { method: 'POST', headers: auth, body: JSON.stringify({ id, priority, targets: [{ value: '127.0.0.1', type: 'single_ip' }], options: { template: 'discovery', ports } }) })
      statuses.push(res.status)
      const body = await res.json() as Json
      if (res.status === 200) acked.push(body.id)
    }
  }))
  t.equal(statuses.length, CLIENTS * PER_CLIENT)
  t.ok(statuses.every((s) => s === 200), `every post accepted (${statuses.filter((s) => s !== 200).length} not)`)
  t.equal(new Set(acked).size, CLIENTS * PER_CLIENT, 'each scan acknowledged under its own id')

  const listAll = async (): Promise<Json[]> => {
    const out: Json[] = []
    for (let offset = 0; ; offset += 500) {
      const page = await (await fetch(`${base}/app/scan?limit=500&offset=${offset}`, { headers: auth })).json() as Json
      out.push(...page.items)
      if (page.items.length < 500) return out
    }
  }
  const queued = await listAll()
  t.equal(queued.length, CLIENTS * PER_CLIENT)
  t.ok(queued.every((s) => s.status === 'queued'), 'nothing runs before a worker starts')

  // One job at a time, so the start order is the queue's order.
  const worker = spawnWorker({
    REDIS_URL: config.REDIS_URL,
    DATABASE_URL: config.DATABASE_URL,
    DATABASE_SCHEMA: config.DATABASE_SCHEMA,
    REDIS_PREFIX: config.REDIS_PREFIX,
    QUEUE_PREFIX: config.QUEUE_PREFIX,
    WORKER_CONCURRENCY: '1'
  })
  t.teardown(() => worker.kill())
  await worker.ready()

  const deadline = Date.now() + 100_000
  let scans: Json[] = []
  for (;;) {
    const finished = countByScan(worker.lines, 'scan finished').size + countByScan(worker.lines, 'scan failed').size
    if (finished >= CLIENTS * PER_CLIENT) {
      scans = await listAll()
      if (scans.every((s) => ['completed', 'failed', 'cancelled'].includes(s.status))) break
    }
    if (Date.now() > deadline) throw new Error(`only ${finished} scans ended in time`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  t.equal(scans.length, CLIENTS * PER_CLIENT, 'no scan lost')
  const notCompleted = scans.filter((s) => s.status !== 'completed')
  t.same(notCompleted.map((s) => `${String(s.id)}: ${String(s.status)} ${String(s.reason ?? '')}`), [], 'every scan completed')

  const finished = countByScan(worker.lines, 'scan finished')
  const planned = countByScan(worker.lines, 'scan planned')
  t.equal(finished.size, CLIENTS * PER_CLIENT, 'every scan finished')
  t.ok([...finished.values()].every((n) => n === 1), 'none finished twice')
  t.ok([...planned.values()].every((n) => n === 1) && planned.size === CLIENTS * PER_CLIENT, 'each planned once')
  // The queue's own count agrees: one planning job and one batch job per scan, each run to completion once.
  t.same(await app.scanQueue.counts(), { waiting: 0, active: 0, completed: 2 * CLIENTS * PER_CLIENT, failed: 0 })

  // Every scan of a priority starts before any scan of a lower one.
  const starts = new Map<number, number[]>()
  const wrongPriority: string[] = []
  for (const s of scans) {
    const p = priorityOf.get(s.id)
    if (p !== s.priority) wrongPriority.push(String(s.id))
    starts.set(s.priority, [...(starts.get(s.priority) ?? []), Date.parse(s.startedAt)])
  }
  t.same(wrongPriority, [], 'each scan kept the priority it was posted with')
  t.same([...starts.keys()].sort(), [1, 2, 3, 4, 5])
  for (let p = 5; p > 1; p--) {
    const latest = Math.max(...(starts.get(p) ?? []))
    const earliest = Math.min(...(starts.get(p - 1) ?? []))
    t.ok(latest <= earliest, `the last priority-${p} scan started before the first priority-${p - 1} one (${latest - earliest} ms apart)`)
  }
})
