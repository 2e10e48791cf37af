// The scaled deployment on servers of its own, for the fault suite (test/faults/): a private Redis (AOF, so what it
// acknowledged survives a SIGKILL) and a private PostgreSQL, API processes (`npm run start:api`) and workers
// (`npm run start:worker`) started as separate processes and watched for exits, and a load of scans and reads
// whose every answer is kept: status, time taken, body.
import { createServer, type Server, type Socket } from 'node:net'
import { randomBytes } from 'node:crypto'
import { startPrivateRedis, redisServerAvailable, type PrivateRedis } from './redis-server'
import { startPrivatePostgres, postgresServerAvailable, type PrivatePostgres } from './postgres-server'
import { spawnApi, spawnWorker, type WorkerProcess } from './worker-process'
import { freePort, loopbackAddress } from './loopback'

export const FAULT_KEY = 'fault-suite-service-key-0123456789'
const CREDENTIALS_KEY = randomBytes(32).toString('hex')

type Json = Record<string, any>

export interface Answer { status: number, ms: number, body: Json | null, error?: string }

export interface Deployment {
  redis: PrivateRedis
  pg: PrivatePostgres
  apis: WorkerProcess[]
  workers: WorkerProcess[]
  /** Base URLs of the API processes. */
  urls: string[]
  env: Record<string, string>
  /** A TCP port open on `target`, to scan. */
  target: { address: string, port: number }
  /** A request to API process `i` (default 0) that never waits longer than `timeoutMs`; a timeout is status 0. */
  request(path: string, init?: { method?: string, body?: unknown, api?: number, timeoutMs?: number }): Promise<Answer>
  startWorker(extra?: Record<string, string>): Promise<WorkerProcess>
  /** Every process started that exited by itself (not stopped by the test), with its stderr. */
  exits(): { pid: number, code: number | null, stderr: string }[]
}

export function faultServersAvailable (): string | null {
  if (!redisServerAvailable()) return 'no redis-server binary to run a private Redis'
  if (!postgresServerAvailable()) return 'no PostgreSQL server binaries to run a private cluster'
  return null
}

interface Tap { teardown(fn: () => unknown): void }

/** A server that accepts and closes at once, as a closed-but-answering service port does. */
async function openPort (): Promise<{ address: string, port: number, close: () => Promise<void> }> {
  const address = loopbackAddress()
  const sockets = new Set<Socket>()
  const server: Server = createServer((s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); s.on('error', () => {}); s.end() })
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(0, address, resolve) })
  return {
    address,
    port: (server.address() as { port: number }).port,
    close: async () => { for (const s of sockets) s.destroy(); await new Promise((resolve) => server.close(resolve)) }
  }
}

export async function startDeployment (t: Tap, opts: { apis?: number, workers?: number, env?: Record<string, string> } = {}): Promise<Deployment> {
  const [redis, pg, open] = await Promise.all([startPrivateRedis({ appendOnly: true }), startPrivatePostgres(), openPort()])
  t.teardown(async () => { await redis.destroy(); await pg.destroy(); await open.close() })
  const env: Record<string, string> = {
    REDIS_URL: redis.url,
    DATABASE_URL: pg.url,
    DATABASE_SCHEMA: 'faults',
    DATABASE_POOL_MAX: '4',
    REDIS_PREFIX: 'faults',
    QUEUE_PREFIX: 'faults-bull',
    SERVICE_API_KEY: FAULT_KEY,
    CREDENTIALS_KEY,
    LOG_LEVEL: 'info',
    NVD_API_URL: 'http://127.0.0.1:1/rest/json',
    NVD_ON_DEMAND: 'false',
    NVD_INDEX_FILE: '',
    SOURCES_FILE: '',
    RATE_LIMIT_MAX: '1000000',
    // Short windows: a key's window starts again during an outage, as it does in production over a longer one.
    RATE_LIMIT_WINDOW: '2 seconds',
    AUTH_FAILURE_MAX: '1000000',
    REDIS_COMMAND_TIMEOUT_MS: '1500',
    QUEUE_LOCK_MS: '4000',
    SCAN_TIMEOUT: '120',
    WORKER_CONCURRENCY: '4',
    WEBHOOK_ALLOW: '127.0.0.0/8',
    ...opts.env
  }
  const processes: WorkerProcess[] = []
  const stoppedByTest = new Set<WorkerProcess>()
  const watch = (p: WorkerProcess): WorkerProcess => {
    processes.push(p)
    const { kill, stop } = p
    p.kill = async () => { stoppedByTest.add(p); await kill() }
    p.stop = async (ms?: number) => { stoppedByTest.add(p); await stop(ms) }
    t.teardown(() => p.kill())
    return p
  }
  const apis: WorkerProcess[] = []
  const urls: string[] = []
  const starting: Promise<void>[] = []
  for (let i = 0; i < (opts.apis ?? 1); i++) {
    const host = loopbackAddress()
    const port = await freePort(host)
    const api = watch(spawnApi({ ...env, HOST: host, PORT: String(port) }))
    apis.push(api)
    urls.push(`http://${host}:${port}`)
    starting.push(api.ready(90_000))
  }
  const workers: WorkerProcess[] = []
  const startWorker = async (extra: Record<string, string> = {}): Promise<WorkerProcess> => {
    const w = watch(spawnWorker({ ...env, ...extra }))
    workers.push(w)
    await w.ready(90_000)
    return w
  }
  // The APIs first: the first one migrates the results schema, and concurrent first migrations would race.
  await starting[0]
  await Promise.all([...starting.slice(1), ...Array.from({ length: opts.workers ?? 1 }, async () => await startWorker())])
  const request = async (path: string, init: { method?: string, body?: unknown, api?: number, timeoutMs?: number } = {}): Promise<Answer> => {
    const at = Date.now()
    try {
      const res = await fetch(`${urls[init.api ?? 0]}${path}`, {
        method: init.method ?? 'GET',
        headers: { 'x-api-key': FAULT_KEY, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(init.timeoutMs ?? 30_000)
      })
      const text = await res.text()
      let body: Json | null = null
      try { body = JSON.parse(text) as Json } catch {}
      return { status: res.status, ms: Date.now() - at, body }
    } catch (err) {
      return { status: 0, ms: Date.now() - at, body: null, error: (err as Error).message }
    }
  }
  return {
    redis,
    pg,
    apis,
    workers,
    urls,
    env,
    target: { address: open.address, port: open.port },
    request,
    startWorker,
    exits: () => processes.filter((p) => p.hasExited() && !stoppedByTest.has(p)).map((p) => ({ pid: p.pid, code: null, stderr: p.stderr().slice(0, 2000) }))
  }
}

export interface Load {
  /** Scan ids the API acknowledged (200). */
  readonly acked: Set<string>
  /** Every answer, in order, with what was asked. */
  readonly answers: (Answer & { what: string, at: number })[]
  stop(): Promise<void>
}

/** Post scans and read them back on every API process, a few at a time, until stop(). */
export function startLoad (d: Deployment, opts: { prefix: string, concurrency?: number, pauseMs?: number, timeoutMs?: number }): Load {
  const acked = new Set<string>()
  const answers: Load['answers'] = []
  let n = 0
  let running = true
  const loop = async (lane: number): Promise<void> => {
    while (running) {
      const id = `${opts.prefix}-${n++}`
      const api = n % d.urls.length
      const posted = await d.request('/app/scan', {
        method: 'POST',
        api,
        timeoutMs: opts.timeoutMs,
        body: { id, targets: [{ value: d.target.address, type: 'single_ip' }], options: { template: 'discovery', ports: String(d.target.port) }, priority: 1 + (n % 5) }
      })
      answers.push({ ...posted, what: `POST ${id}`, at: Date.now() })
      if (posted.status === 200) acked.add(id)
      const read = await d.request(`/app/scan/${id}`, { api: (api + lane) % d.urls.length, timeoutMs: opts.timeoutMs })
      answers.push({ ...read, what: `GET ${id}`, at: Date.now() })
      await new Promise((resolve) => setTimeout(resolve, opts.pauseMs ?? 50))
    }
  }
  const lanes = Array.from({ length: opts.concurrency ?? 3 }, async (_, i) => await loop(i))
  return {
    acked,
    answers,
    stop: async () => {
      running = false
      await Promise.all(lanes)
    }
  }
}

/** Poll until `fn` gives a value, or throw after `ms`. */
export async function until<T> (what: string, fn: () => Promise<T | undefined | false>, ms: number, everyMs = 250): Promise<T> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const v = await fn().catch(() => undefined)
    if (v !== undefined && v !== false) return v
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
  throw new Error(`${what}: not within ${ms} ms`)
}

export const TERMINAL = ['completed', 'failed', 'cancelled']

/** Each of `ids` as GET /app/scan/{id} shows it, once every one of them is terminal (or throws after `ms`). */
export async function allTerminal (d: Deployment, ids: Iterable<string>, ms: number): Promise<Map<string, Json>> {
  const left = new Set(ids)
  const done = new Map<string, Json>()
  const deadline = Date.now() + ms
  while (left.size > 0) {
    for (const id of [...left]) {
      const r = await d.request(`/app/scan/${id}`, { timeoutMs: 10_000 })
      if (r.status === 200 && TERMINAL.includes(r.body?.status)) {
        done.set(id, r.body as Json)
        left.delete(id)
      }
    }
    if (left.size === 0) break
    if (Date.now() > deadline) {
      const sample = await Promise.all([...left].slice(0, 5).map(async (id) => `${id}: ${JSON.stringify((await d.request(`/app/scan/${id}`)).body)}`))
      throw new Error(`${left.size} acknowledged scans never ended, e.g. ${sample.join('; ')}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  return done
}
