import { test } from 'tap'
import { createNvdClient, type CvePage, formatNvdDate, NvdApiError, splitWindows } from '../../../lib/nvd/client'
import { type Clock, createRateLimiter } from '../../../lib/nvd/rate-limiter'
import { startFakeNvd } from '../../support/fake-nvd'

function captureLogger (): { info: (m: string) => void, warn: (m: string) => void, lines: string[] } {
  const lines: string[] = []
  return { info: (m) => lines.push('info ' + m), warn: (m) => lines.push('warn ' + m), lines }
}

/** Real time for the limiter, recorded near-instant sleeps for backoff so tests stay fast. */
function recordingClock (): Clock & { sleeps: number[] } {
  const sleeps: number[] = []
  return {
    sleeps,
    now: () => Date.now(),
    sleep: async (ms, signal) => {
      sleeps.push(ms)
      await new Promise((resolve) => setTimeout(resolve, Math.min(ms, 5)))
      if (signal?.aborted) throw new Error('aborted')
    }
  }
}

async function collect (it: AsyncIterable<CvePage>): Promise<CvePage[]> {
  const pages: CvePage[] = []
  for await (const p of it) pages.push(p)
  return pages
}

const ids = (pages: CvePage[]): string[] => pages.flatMap((p) => p.cves.map((c) => (c as { id: string }).id))

test('formats dates as NVD wants and splits long spans into 120-day windows', async (t) => {
  t.equal(formatNvdDate(new Date('2024-04-01T13:00:00Z')), '2024-04-01T13:00:00.000+00:00')
  const w = splitWindows(new Date('2024-01-01T00:00:00Z'), new Date('2024-12-31T00:00:00Z'))
  t.equal(w.length, 4)
  t.same(w[0].start, new Date('2024-01-01T00:00:00Z'))
  t.same(w[0].end, new Date('2024-04-30T00:00:00Z'))
  for (let i = 1; i < w.length; i++) t.same(w[i].start, w[i - 1].end, 'windows are contiguous')
  t.same(w[w.length - 1].end, new Date('2024-12-31T00:00:00Z'))
  t.ok(w.every((x) => x.end.getTime() - x.start.getTime() <= 120 * 86_400_000))
  t.same(splitWindows(new Date(0), new Date(0)).length, 1, 'an empty span is one window')
  t.throws(() => splitWindows(new Date(1), new Date(0)))
})

test('pages through every record with a small page size', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000, resultsPerPage: 7 })
  const pages = await collect(client.cvePages())
  t.equal(pages.length, Math.ceil(nvd.ids().length / 7))
  t.same(ids(pages), nvd.ids(), 'every record once, in order')
  t.same(pages.map((p) => p.startIndex), pages.map((_, i) => i * 7))
  t.equal(pages[pages.length - 1].nextStartIndex, null)
  t.equal(pages[0].nextStartIndex, 7)
  t.ok(nvd.requests.every((r) => r.params.resultsPerPage === '7'))
  const resumed = await collect(client.cvePages({ startIndex: 28 }))
  t.same(ids(resumed), nvd.ids().slice(28), 'starts where asked')
})

test('follows totalResults when it grows or shrinks between pages', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000, resultsPerPage: 10 })
  const seen: string[] = []
  let n = 0
  for await (const page of client.cvePages()) {
    seen.push(...ids([page]))
    if (++n === 1) {
      nvd.addRecord({ id: 'CVE-2099-1000', published: '2099-01-01T00:00:00.000', lastModified: '2099-01-01T00:00:00.000', vulnStatus: 'Received', descriptions: [], references: [] })
    }
  }
  t.ok(seen.includes('CVE-2099-1000'), 'a record added mid-way is reached')
  t.same([...new Set(seen)].sort(), nvd.ids().sort())

  // A record leaving a lastMod window mid-paging shifts the later ones forward; none may be lost.
  const windowed = { lastModStartDate: '2020-01-01T00:00:00.000', lastModEndDate: '2020-04-01T00:00:00.000' }
  const inWindow = ['CVE-2023-22458', 'CVE-2022-3602', 'CVE-2020-28017', 'CVE-2021-22116', 'CVE-2021-34432', 'CVE-2022-24450', 'CVE-2022-35951']
  for (const id of inWindow) nvd.touch(id, '2020-02-01T00:00:00.000')
  const seen2: string[] = []
  n = 0
  for await (const page of client.cvePages({ ...windowed, resultsPerPage: 3 })) {
    seen2.push(...ids([page]))
    if (++n === 1) nvd.touch(ids([page])[0], '2026-11-20T00:00:00.000')
  }
  t.same([...new Set(seen2)].sort(), [...inWindow].sort(), 'every record of the window still arrived')
})

test('splits a long lastMod span into windows of at most 120 days', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000 })
  const pages = await collect(client.cvePages({ lastModStartDate: new Date('2023-01-01T00:00:00Z'), lastModEndDate: new Date('2024-12-31T00:00:00Z') }))
  t.equal(pages.length, 7, 'one page per window')
  t.ok(pages.every((p, i) => p.windowIndex === i && p.windowCount === 7))
  for (const r of nvd.requests) {
    const s = Date.parse(r.params.lastModStartDate)
    const e = Date.parse(r.params.lastModEndDate)
    t.ok(e - s <= 120 * 86_400_000, 'no request spans more than 120 days')
  }
  t.ok(nvd.requests.every((r) => r.status === 200), 'the server accepted every window')
  const expected = nvd.ids().filter((id) => {
    const lm = Date.parse((JSON.parse(nvd.rawRecord(id)!) as { lastModified: string }).lastModified + 'Z')
    return lm >= Date.parse('2023-01-01T00:00:00Z') && lm <= Date.parse('2024-12-31T00:00:00Z')
  })
  t.same([...new Set(ids(pages))].sort(), expected.sort())
  await t.rejects(client.cvePages({ lastModStartDate: new Date() }).next(), RangeError, 'one bound alone is refused before sending')
})

test('passes cveId, virtualMatchString, cpeName and noRejected; getCve', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000 })
  const cve = await client.getCve('CVE-2024-6387') as { id: string, lastModified: string }
  t.equal(cve.id, 'CVE-2024-6387')
  t.same(cve, JSON.parse(nvd.rawRecord('CVE-2024-6387')!), 'the raw record, untouched')
  t.equal(await client.getCve('CVE-1999-99999'), null)
  await t.rejects(client.getCve('CVE-2024'), RangeError)
  const redis = ids(await collect(client.cvePages({ virtualMatchString: 'cpe:2.3:*:redis:redis' })))
  t.equal(redis.length, 6)
  const mysql = ids(await collect(client.cvePages({ cpeName: 'cpe:2.3:a:oracle:mysql:5.1.52:*:*:*:*:*:*:*' })))
  t.same(mysql, ['CVE-2012-2122'])
  const all = ids(await collect(client.cvePages({ noRejected: true })))
  t.notOk(all.includes('CVE-2021-44457'))
  t.ok(nvd.requests.some((r) => 'noRejected' in r.params))
})

test('sends the apiKey header, never logs or reports it; an invalid key fails with the message', async (t) => {
  const secret = 'f3c1e0d2-0000-4a5b-9c8d-secretsecret'
  const nvd = await startFakeNvd({ apiKeys: [secret], rateLimit: { requests: 1, windowMs: 60_000 }, keyedRateLimit: { requests: 100, windowMs: 60_000 } })
  t.teardown(nvd.close)
  const logger = captureLogger()
  const client = createNvdClient({ baseUrl: nvd.baseUrl, apiKey: secret, logger, resultsPerPage: 5 })
  t.equal(client.limiter.requestsPerWindow, 50, 'a key raises the default limit to 50')
  t.equal(createNvdClient({ baseUrl: nvd.baseUrl }).limiter.requestsPerWindow, 5)
  const pages = await collect(client.cvePages())
  t.ok(pages.length > 1, 'more requests than the keyless limit allows all succeeded')
  t.ok(nvd.requests.every((r) => r.withKey && r.status === 200))
  const bad = createNvdClient({ baseUrl: nvd.baseUrl, apiKey: 'not-' + secret, logger, maxRetries: 3 })
  const err = await bad.getCve('CVE-2024-6387').catch((e: unknown) => e)
  t.type(err, NvdApiError)
  t.equal((err as NvdApiError).status, 404)
  t.equal((err as NvdApiError).nvdMessage, 'Invalid apiKey.')
  t.equal((err as NvdApiError).attempts, 1, '404 is not retried')
  t.match((err as Error).message, /404: Invalid apiKey\./)
  const everything = logger.lines.join('\n') + String((err as Error).message) + String((err as Error).stack) + JSON.stringify(err)
  t.notOk(everything.includes(secret), 'the key appears in no log line or error')
  t.ok(logger.lines.length > 0, 'the client did log')
})

test('403 throttle: backs off, then succeeds', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: { requests: 2, windowMs: 300 } })
  t.teardown(nvd.close)
  const logger = captureLogger()
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 100, retryBaseMs: 100, maxRetries: 8, resultsPerPage: 10, logger })
  const pages = await collect(client.cvePages())
  t.same(ids(pages), nvd.ids(), 'all records despite the throttle')
  t.ok(nvd.requests.some((r) => r.status === 403), 'the server did throttle')
  t.ok(logger.lines.some((l) => /^warn NVD API 403/.test(l)), 'each retry is logged')
})

test('a client limiter matching the server limit avoids 403s entirely', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: { requests: 3, windowMs: 400 } })
  t.teardown(nvd.close)
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 3, windowMs: 400, resultsPerPage: 6 })
  const started = Date.now()
  const pages = await collect(client.cvePages())
  t.equal(pages.length, 7)
  t.ok(nvd.requests.every((r) => r.status === 200), 'never throttled')
  t.ok(Date.now() - started >= 800, 'seven requests at 3 per 400 ms take at least two windows')
})

test('503 bursts: honours Retry-After and retries with growing jittered backoff', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const clock = recordingClock()
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000, clock, retryBaseMs: 1000, retryMaxMs: 8000, maxRetries: 5 })
  nvd.failNext(2, { retryAfter: '7' })
  const cve = await client.getCve('CVE-2022-0543')
  t.ok(cve)
  t.same(clock.sleeps, [7000, 7000], 'waited exactly what Retry-After said')
  clock.sleeps.length = 0
  nvd.failNext(4, { status: 502 })
  t.ok(await client.getCve('CVE-2022-0543'))
  t.equal(clock.sleeps.length, 4)
  const caps = [1000, 2000, 4000, 8000]
  clock.sleeps.forEach((ms, i) => t.ok(ms >= caps[i] / 2 && ms <= caps[i], `retry ${i + 1} waited ${ms} within [${caps[i] / 2}, ${caps[i]}]`))
  clock.sleeps.length = 0
  nvd.failNext(10, { status: 503, message: 'Service is under maintenance' })
  const err = await client.getCve('CVE-2022-0543').catch((e: unknown) => e) as NvdApiError
  t.type(err, NvdApiError)
  t.equal(err.status, 503)
  t.equal(err.attempts, 6, 'gives up after maxRetries')
  t.equal(err.nvdMessage, 'Service is under maintenance')
  t.ok(err.retryable)
})

test('404 for bad parameters surfaces NVD\'s message header', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000 })
  const err = await client.fetchPage({ lastModStartDate: '2020-01-01T00:00:00.000', lastModEndDate: '2021-01-01T00:00:00.000' }).catch((e: unknown) => e) as NvdApiError
  t.type(err, NvdApiError)
  t.equal(err.status, 404)
  t.match(err.nvdMessage, /120 days/)
  t.match(err.message, /120 days/)
  t.notOk(err.retryable)
  t.equal(nvd.requests.length, 1, 'not retried')
})

test('network errors and timeouts are retried; unreachable ends in a clear error', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const clock = recordingClock()
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000, clock, maxRetries: 2, timeoutMs: 300 })
  nvd.setDown('reset')
  const err = await client.getCve('CVE-2022-0543').catch((e: unknown) => e) as NvdApiError
  t.type(err, NvdApiError)
  t.equal(err.status, null)
  t.equal(err.attempts, 3)
  t.match(err.message, /unreachable/)
  nvd.setDown(false)
  nvd.setDelay(1000)
  const slow = await client.getCve('CVE-2022-0543').catch((e: unknown) => e) as NvdApiError
  t.match(slow.message, /no answer within 300 ms/)
  nvd.setDelay(0)

  const closed = await startFakeNvd({ rateLimit: null })
  const deadUrl = closed.baseUrl
  await closed.close()
  const dead = createNvdClient({ baseUrl: deadUrl, requestsPerWindow: 1000, clock, maxRetries: 1 })
  const refused = await dead.getCve('CVE-2022-0543').catch((e: unknown) => e) as NvdApiError
  t.equal(refused.status, null)
  t.match(refused.message, /ECONNREFUSED/)
})

test('abort stops waiting for the limiter, a backoff or a response', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const limiter = createRateLimiter({ requestsPerWindow: 1, windowMs: 60_000 })
  const client = createNvdClient({ baseUrl: nvd.baseUrl, limiter })
  await client.getCve('CVE-2022-0543')
  const ac = new AbortController()
  setTimeout(() => ac.abort(), 50)
  const t0 = Date.now()
  await t.rejects(client.getCve('CVE-2022-0543', { signal: ac.signal }), { name: 'AbortError' })
  t.ok(Date.now() - t0 < 1000, 'did not wait out the 60 s window')

  const slowClient = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 100 })
  nvd.setDelay(2000)
  const ac2 = new AbortController()
  setTimeout(() => ac2.abort(), 50)
  await t.rejects(slowClient.getCve('CVE-2022-0543', { signal: ac2.signal }), { name: 'AbortError' })
  nvd.setDelay(0)

  const backoffClient = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 100, retryBaseMs: 60_000 })
  nvd.failNext(1)
  const ac3 = new AbortController()
  setTimeout(() => ac3.abort(), 100)
  await t.rejects(backoffClient.getCve('CVE-2022-0543', { signal: ac3.signal }), { name: 'AbortError' })
})

test('a response over the size bound is refused', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000, maxResponseBytes: 10_000, maxRetries: 0 })
  const err = await client.fetchPage({}).catch((e: unknown) => e) as NvdApiError
  t.type(err, NvdApiError)
  t.match(err.message, /limit/)
})

test('refuses a key that cannot travel in a header without echoing it, and bad paging values', async (t) => {
  const err = (() => { try { createNvdClient({ baseUrl: 'http://127.0.0.1:9/rest/json', apiKey: 'abc\r\nX-Evil: 1' }) } catch (e) { return e as Error } })()
  t.type(err, RangeError)
  t.notMatch(err!.message, /abc|Evil/)
  const client = createNvdClient({ baseUrl: 'http://127.0.0.1:9/rest/json' })
  await t.rejects(client.fetchPage({ resultsPerPage: 0 }), RangeError)
  await t.rejects(client.fetchPage({ startIndex: -5 }), RangeError)
})

test('asks for at most 2000 results per page whatever the caller says', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const client = createNvdClient({ baseUrl: nvd.baseUrl, requestsPerWindow: 1000 })
  await client.fetchPage({ resultsPerPage: 5000 })
  await collect(client.cvePages({ resultsPerPage: 9000 }))
  t.ok(nvd.requests.every((r) => r.params.resultsPerPage === '2000'))
})
