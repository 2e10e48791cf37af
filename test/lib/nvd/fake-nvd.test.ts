import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { FIXTURE_CVES_DIR, startFakeNvd } from '../../support/fake-nvd'

const fixtureIds = readdirSync(FIXTURE_CVES_DIR).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort()

interface Envelope {
  resultsPerPage: number
  startIndex: number
  totalResults: number
  format: string
  version: string
  timestamp: string
  vulnerabilities: Array<{ cve: { id: string, lastModified: string } }>
}

async function get (base: string, qs: string, headers: Record<string, string> = {}): Promise<{ status: number, message: string | null, body: Envelope | null, text: string }> {
  const res = await fetch(`${base}/cves/2.0${qs === '' ? '' : '?' + qs}`, { headers })
  const text = await res.text()
  return { status: res.status, message: res.headers.get('message'), body: res.ok ? JSON.parse(text) as Envelope : null, text }
}

test('serves every fixture record byte for byte inside the real envelope', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const r = await get(nvd.baseUrl, '')
  t.equal(r.status, 200)
  const body = r.body!
  t.same(Object.keys(body), ['resultsPerPage', 'startIndex', 'totalResults', 'format', 'version', 'timestamp', 'vulnerabilities'],
    'envelope keys in NVD order')
  t.equal(body.format, 'NVD_CVE')
  t.equal(body.version, '2.0')
  t.match(body.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$/)
  t.equal(body.totalResults, fixtureIds.length)
  t.same(body.vulnerabilities.map((v) => v.cve.id).sort(), fixtureIds)
  for (const id of fixtureIds) {
    const file = readFileSync(path.join(FIXTURE_CVES_DIR, id + '.json'), 'utf8')
    t.ok(r.text.includes('{"cve":' + file + '}'), `${id} served verbatim`)
  }
})

test('pages by startIndex and resultsPerPage, capping pages at 2000', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const seen: string[] = []
  for (let start = 0; start < fixtureIds.length; start += 10) {
    const r = await get(nvd.baseUrl, `resultsPerPage=10&startIndex=${start}`)
    t.equal(r.body!.startIndex, start)
    t.equal(r.body!.resultsPerPage, Math.min(10, fixtureIds.length - start), 'resultsPerPage echoes the count returned')
    seen.push(...r.body!.vulnerabilities.map((v) => v.cve.id))
  }
  t.same(seen, nvd.ids(), 'pages cover the listing once, in order')
  const beyond = await get(nvd.baseUrl, 'startIndex=500')
  t.equal(beyond.body!.vulnerabilities.length, 0)
  t.equal(beyond.body!.totalResults, fixtureIds.length)
  const many = await get(nvd.baseUrl, 'resultsPerPage=5000')
  t.equal(many.status, 200)
  const bad = await get(nvd.baseUrl, 'startIndex=-1')
  t.equal(bad.status, 404)
  t.match(bad.message, /startIndex/)
})

test('lastMod windows: both bounds required, at most 120 days, inclusive', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const one = await get(nvd.baseUrl, 'lastModStartDate=2024-01-01T00:00:00.000')
  t.equal(one.status, 404)
  t.match(one.message, /lastModEndDate/)
  t.equal(one.text, '', 'NVD sends no body with a 404')
  const long = await get(nvd.baseUrl, 'lastModStartDate=2024-01-01T00:00:00.000&lastModEndDate=2024-05-01T00:00:00.001')
  t.equal(long.status, 404)
  t.match(long.message, /120 days/)
  const exact = await get(nvd.baseUrl, 'lastModStartDate=2024-01-01T00:00:00.000&lastModEndDate=2024-04-30T00:00:00.000')
  t.equal(exact.status, 200, '120 days exactly is allowed')
  const inWindow = exact.body!.vulnerabilities.map((v) => v.cve.id).sort()
  t.ok(inWindow.length > 0)
  for (const v of exact.body!.vulnerabilities) {
    const lm = Date.parse(v.cve.lastModified + 'Z')
    t.ok(lm >= Date.parse('2024-01-01T00:00:00Z') && lm <= Date.parse('2024-04-30T00:00:00Z'), `${v.cve.id} lies in the window`)
  }
  t.ok(inWindow.includes('CVE-2023-25690') && inWindow.includes('CVE-2024-0985'))
  // Bounds are inclusive and offsets are honoured: CVE-2024-0985 was modified at 2024-02-08T13:44:11.750 UTC.
  const tight = await get(nvd.baseUrl, 'lastModStartDate=' + encodeURIComponent('2024-02-08T14:44:11.750+01:00') +
    '&lastModEndDate=' + encodeURIComponent('2024-02-08T13:44:11.750Z'))
  t.same(tight.body!.vulnerabilities.map((v) => v.cve.id), ['CVE-2024-0985'])
  const garbage = await get(nvd.baseUrl, 'lastModStartDate=yesterday&lastModEndDate=today')
  t.equal(garbage.status, 404)
  t.ok(garbage.message)
})

test('cveId, noRejected and unknown parameters', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const one = await get(nvd.baseUrl, 'cveId=CVE-2024-6387')
  t.same(one.body!.vulnerabilities.map((v) => v.cve.id), ['CVE-2024-6387'])
  const none = await get(nvd.baseUrl, 'cveId=CVE-1999-99999')
  t.equal(none.status, 200)
  t.equal(none.body!.totalResults, 0)
  const rejected = await get(nvd.baseUrl, 'cveId=CVE-2021-44457')
  t.equal(rejected.body!.totalResults, 1)
  const hidden = await get(nvd.baseUrl, 'cveId=CVE-2021-44457&noRejected')
  t.equal(hidden.body!.totalResults, 0, 'noRejected (a bare flag) hides rejected records')
  const all = await get(nvd.baseUrl, 'noRejected')
  t.equal(all.body!.totalResults, fixtureIds.length - 1)
  const bad = await get(nvd.baseUrl, 'cveId=not-a-cve')
  t.equal(bad.status, 404)
  t.match(bad.message, /cveId/)
  const unknown = await get(nvd.baseUrl, 'keywordSearchh=redis')
  t.equal(unknown.status, 404)
  t.match(unknown.message, /Invalid parameter/)
})

test('virtualMatchString matches CPE prefixes against the match criteria', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  const ids = async (vms: string): Promise<string[]> =>
    (await get(nvd.baseUrl, 'virtualMatchString=' + encodeURIComponent(vms))).body!.vulnerabilities.map((v) => v.cve.id).sort()
  t.same(await ids('cpe:2.3:*:redis:redis'),
    ['CVE-2021-32675', 'CVE-2022-0543', 'CVE-2022-24834', 'CVE-2022-35951', 'CVE-2023-22458', 'CVE-2023-28856'])
  t.same(await ids('cpe:2.3:a:f5:nginx'), ['CVE-2021-23017'], 'nginx records without configurations are not found')
  t.same(await ids('cpe:2.3:*:broadcom:rabbitmq_server'), ['CVE-2022-31008'])
  t.same(await ids('cpe:2.3:*:vmware:rabbitmq'), ['CVE-2021-22116', 'CVE-2022-31008'])
  t.same(await ids('cpe:2.3:o:microsoft:windows_server_2003:r2'), ['CVE-2017-7269'], 'non-vulnerable platform entries count too')
  t.same(await ids('cpe:2.3:*:nosuchvendor:nosuchproduct'), [])
  t.same(await ids('cpe:2.3:a:oracle:mysql:5.1.52'), ['CVE-2012-2122'], 'an exact version matches its own criterion')
  t.same(await ids('cpe:2.3:a:oracle:mysql:8.0.1'), [], 'and no other exact version')
  t.same(await ids('cpe:2.3:a:redis:redis:-'),
    ['CVE-2021-32675', 'CVE-2022-0543', 'CVE-2022-24834', 'CVE-2022-35951', 'CVE-2023-22458', 'CVE-2023-28856'],
    'NA matches the NA criterion and the version-less ranges')
  t.same(await ids('CPE:2.3:A:REDIS:REDIS'), await ids('cpe:2.3:a:redis:redis'), 'case-insensitive')
  const bad = await get(nvd.baseUrl, 'virtualMatchString=redis')
  t.equal(bad.status, 404)
})

test('apiKey header: an invalid key gets 404 with a message, a valid one raises the limit', async (t) => {
  const nvd = await startFakeNvd({ apiKeys: ['good-key'], rateLimit: { requests: 2, windowMs: 60_000 }, keyedRateLimit: { requests: 4, windowMs: 60_000 } })
  t.teardown(nvd.close)
  const bad = await get(nvd.baseUrl, 'cveId=CVE-2024-6387', { apiKey: 'wrong' })
  t.equal(bad.status, 404)
  t.equal(bad.message, 'Invalid apiKey.')
  const anon = []
  for (let i = 0; i < 3; i++) anon.push((await get(nvd.baseUrl, 'cveId=CVE-2024-6387')).status)
  t.same(anon, [200, 200, 403], 'without a key the third request in the window is throttled')
  const keyed = []
  for (let i = 0; i < 5; i++) keyed.push((await get(nvd.baseUrl, 'cveId=CVE-2024-6387', { apiKey: 'good-key' })).status)
  t.same(keyed, [200, 200, 200, 200, 403], 'a valid key gets its own, higher limit')
  t.ok(nvd.requests.every((r) => !JSON.stringify(r).includes('good-key')), 'the server never records key values')
  t.equal(nvd.requests.filter((r) => r.withKey).length, 6)
})

test('the throttle window rolls', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: { requests: 1, windowMs: 200 } })
  t.teardown(nvd.close)
  t.equal((await get(nvd.baseUrl, 'cveId=CVE-2024-6387')).status, 200)
  t.equal((await get(nvd.baseUrl, 'cveId=CVE-2024-6387')).status, 403)
  await new Promise((resolve) => setTimeout(resolve, 250))
  t.equal((await get(nvd.baseUrl, 'cveId=CVE-2024-6387')).status, 200)
})

test('injected failures: 503 bursts with Retry-After, hard down, dropped connections', async (t) => {
  const nvd = await startFakeNvd({ rateLimit: null })
  t.teardown(nvd.close)
  nvd.failNext(2, { retryAfter: '3' })
  const a = await fetch(nvd.baseUrl + '/cves/2.0')
  t.equal(a.status, 503)
  t.equal(a.headers.get('retry-after'), '3')
  t.equal((await get(nvd.baseUrl, '')).status, 503)
  t.equal((await get(nvd.baseUrl, '')).status, 200, 'the burst is over')
  nvd.setDown({ status: 500 })
  t.equal((await get(nvd.baseUrl, '')).status, 500)
  t.equal((await get(nvd.baseUrl, '')).status, 500)
  nvd.setDown('reset')
  await t.rejects(fetch(nvd.baseUrl + '/cves/2.0'), 'connection dropped')
  nvd.setDown(false)
  t.equal((await get(nvd.baseUrl, '')).status, 200)
})

test('records can be added and modified between requests', async (t) => {
  const extra = { id: 'CVE-2099-0001', sourceIdentifier: 'test', published: '2099-01-01T00:00:00.000', lastModified: '2099-01-02T00:00:00.000', vulnStatus: 'Received', descriptions: [{ lang: 'en', value: 'synthetic' }], metrics: {}, references: [] }
  const nvd = await startFakeNvd({ rateLimit: null, records: [extra] })
  t.teardown(nvd.close)
  t.equal((await get(nvd.baseUrl, '')).body!.totalResults, fixtureIds.length + 1)
  t.equal(nvd.rawRecord('CVE-2099-0001'), JSON.stringify(extra))
  const before = nvd.rawRecord('CVE-2023-51385')!
  nvd.touch('CVE-2023-51385', '2026-11-01T10:00:00.000')
  const after = nvd.rawRecord('CVE-2023-51385')!
  t.equal(after.length, before.length, 'touch changes only the timestamp text')
  t.equal(after.replace('2026-11-01T10:00:00.000', '2023-12-22T14:15:06.983'), before)
  const r = await get(nvd.baseUrl, 'lastModStartDate=2026-10-30T00:00:00.000&lastModEndDate=2026-11-02T00:00:00.000')
  t.same(r.body!.vulnerabilities.map((v) => v.cve.id), ['CVE-2023-51385'])
  nvd.modify('CVE-2022-0543', (cve) => { cve.vulnStatus = 'Rejected' })
  const hidden = await get(nvd.baseUrl, 'cveId=CVE-2022-0543&noRejected')
  t.equal(hidden.body!.totalResults, 0)
})
