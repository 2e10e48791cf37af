// The HTML report opened in a real Chromium, as a person opens the downloaded file: it renders with nothing
// fetched, the banner's markup stays text, the chart is drawn, its numbers are the API's, and it prints to PDF.
import { test } from 'tap'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { chromium, type Browser } from 'playwright-core'
import { build, SERVICE_KEY } from '../helper'
import { seedScan, threeHosts } from '../support/report-scans'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic']
const auth = { 'x-api-key': SERVICE_KEY }
const SEVERITIES = ['critical', 'high', 'medium', 'low', 'none', 'unknown'] as const

// Without a browser the test is skipped and says why, except under CI, where that is a failure.
const missing = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM}: install Debian's chromium package or set CHROMIUM_PATH`
if (missing !== false && process.env.CI === 'true') throw new Error(`CI=true and ${missing}`)

test('the HTML report in Chromium: renders offline, inert banner, chart drawn, API numbers, prints to PDF', { skip: missing }, async (t) => {
  const { app } = await build(t)
  const scan = await seedScan(app, { id: 'html-1', at: Date.parse('2026-03-01T00:00:00.000Z'), hosts: threeHosts() })
  const res = await app.inject({ url: '/app/scan/html-1/report?format=html', headers: auth })
  t.equal(res.statusCode, 200)
  const dir = mkdtempSync(join(tmpdir(), 'vulnscan-report-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'report.html')
  writeFileSync(file, res.body)

  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
  t.teardown(() => browser.close())
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  const fetched: string[] = []
  await page.route('**/*', async (route) => {
    if (route.request().url() === pathToFileURL(file).href) return await route.continue()
    fetched.push(route.request().url())
    await route.abort()
  })
  const errors: string[] = []
  page.on('pageerror', (err) => errors.push(err.message))
  const dialogs: string[] = []
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss() })
  await page.goto(pathToFileURL(file).href)

  t.equal(await page.title(), 'Scan report html-1', 'it rendered, and nothing rewrote the title')
  t.same(fetched, [], 'nothing fetched: no script, font, image or stylesheet')
  t.same(errors, [])
  t.same(dialogs, [])
  t.equal(await page.locator('script').count(), 0, 'no script element, the banner\'s included')
  t.equal(await page.locator('img').count(), 0, 'no image element either')
  t.match(await page.locator('#findings').innerText(), '<script>document.title="pwned"</script>', 'the banner shows as text')
  t.equal(await page.locator('h1').evaluate((h) => (globalThis as unknown as { getComputedStyle: (e: unknown) => { fontSize: string } }).getComputedStyle(h).fontSize), '24px', 'the inline style applies under the CSP')

  const chart = await page.locator('#severity-chart svg').boundingBox()
  t.ok(chart !== null && chart.width > 100 && chart.height > 50, 'the chart has a size', { chart })
  const listed = (await app.inject({ url: '/vulnerability?status=open&limit=500', headers: auth })).json<{ items: Array<{ severity: string }> }>().items
  for (const s of SEVERITIES) {
    const shown = Number(await page.locator(`#severity-counts tr[data-severity="${s}"] td.num`).innerText())
    const api = listed.filter((f) => f.severity === s).length
    t.equal(shown, api, `${s}: the table shows what GET /vulnerability lists`)
    t.equal(shown, scan.summary?.findings[s], `${s}: and what the scan summary counts`)
    t.equal(Number(await page.locator(`#severity-chart g[data-severity="${s}"]`).getAttribute('data-count')), api, `${s}: the chart's bar says the same`)
    const bar = await page.locator(`#severity-chart g[data-severity="${s}"] rect`).boundingBox()
    if (api > 0) t.ok(bar !== null && bar.width > 0 && bar.height > 0, `${s}: its bar is drawn`, { bar })
    else t.equal(bar?.width ?? 0, 0, `${s}: no bar for none`)
  }
  t.equal(await page.locator('#hosts tbody tr').count(), 4, 'hosts and their open ports: two ports, one port, one without a finding')
  t.equal(await page.locator('article.host').count(), 2, 'findings grouped under the two hosts that have some')
  t.match(await page.locator('#findings').innerText(), /Upgrade|No fixed version known/, 'each finding says what to do')
  t.match(await page.locator('#sources').innerText(), /NVD\s+38 CVEs for 21 products/, 'and what it was matched against')

  const pdf = await page.pdf({ format: 'A4', printBackground: true })
  t.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-', 'it prints to PDF')
  t.ok(pdf.length > 10_000, `a PDF with content (${pdf.length} bytes)`)
})
