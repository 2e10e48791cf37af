// The HTML report: one self-contained file a person reads on screen or prints. No script, font, image or
// stylesheet is fetched: the CSS is inline (allowed by its hash in the document's own Content-Security-Policy)
// and the chart is SVG drawn here. Everything that came from the network (banners, evidence, hostnames,
// product names) or from users (comments) is escaped.
import { FindingCounter } from '../finding-counts'
import { turn } from '../event-loop'
import { createHash } from 'node:crypto'
import escapeHtml from 'escape-html'
import { sourceLines, type DataSources } from '../sources/registry'
import type { FindingRecord } from '../domain/findings'
import type { HostRecord } from '../domain/hosts'
import { dataSourcesOf, kevCatalogueNames, nvdUrl, remediation, reportFindings, reportHosts, reportMeta, SEVERITY_ORDER, type ReportSource, type SeverityCounts } from './gather'
import type { FindingSeverity } from '../domain/severity'

/** How many findings the HTML lists at most (the most severe first); the JSON, CSV and SARIF reports list all. */
export const HTML_FINDINGS_MAX = 1000

const COLORS: Record<FindingSeverity, string> = {
  critical: '#7f1d1d', high: '#c62828', medium: '#e65100', low: '#f9a825', none: '#757575', unknown: '#546e7a'
}

const CSS = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #1a1a1a; margin: 0 auto; max-width: 1200px; padding: 24px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 12px; border-bottom: 2px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 24px 0 8px; }
.meta { color: #555; margin: 0 0 16px; }
.partial { border: 2px solid #e65100; background: #fff3e0; padding: 10px 14px; margin: 16px 0; font-weight: 600; }
.note { border-left: 4px solid #546e7a; background: #eceff1; padding: 8px 12px; margin: 12px 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0 0 16px; }
dl.facts dt { font-weight: 600; color: #333; }
dl.facts dd { margin: 0; }
.overview { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
.chart svg { display: block; width: 520px; max-width: 100%; height: auto; }
.chart text { font: 13px system-ui, sans-serif; fill: #1a1a1a; }
table { border-collapse: collapse; width: 100%; margin: 0 0 12px; }
th, td { border: 1px solid #d0d0d0; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.num, th.num { text-align: right; }
table.counts { width: auto; min-width: 240px; }
.sev { display: inline-block; min-width: 68px; padding: 1px 6px; border-radius: 3px; color: #fff; font-weight: 600; text-align: center; }
.sev-critical { background: ${COLORS.critical}; } .sev-high { background: ${COLORS.high}; } .sev-medium { background: ${COLORS.medium}; }
.sev-low { background: ${COLORS.low}; color: #1a1a1a; } .sev-none { background: ${COLORS.none}; } .sev-unknown { background: ${COLORS.unknown}; }
code, pre { font: 12px/1.35 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre.evidence { white-space: pre-wrap; word-break: break-all; margin: 0; background: #f7f7f7; padding: 4px; max-height: 12em; overflow: auto; }
.muted { color: #666; }
a { color: #0b57d0; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  @page { margin: 14mm 12mm; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  h2 { break-after: avoid; page-break-after: avoid; }
  h3 { break-after: avoid; page-break-after: avoid; }
  #hosts, #findings, #sources { break-before: page; page-break-before: always; }
  thead { display: table-header-group; }
  tr, .partial, .note, .chart { break-inside: avoid; page-break-inside: avoid; }
  pre.evidence { max-height: none; overflow: visible; }
  a { color: inherit; text-decoration: none; }
}
`

const STYLE_HASH = createHash('sha256').update(CSS).digest('base64')

/**
 * The Content-Security-Policy the report holds itself to: nothing loads, nothing runs; only its own style element
 * applies. The route sends it as a header too.
 */
export const HTML_CSP = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src data:; base-uri 'none'; form-action 'none'`

const e = (value: unknown): string => escapeHtml(value === null || value === undefined ? '' : String(value))

function sev (s: FindingSeverity): string {
  return `<span class="sev sev-${s}">${s}</span>`
}

/** A horizontal bar per severity, drawn server-side; the numbers are written beside the bars. */
export function severityChart (counts: SeverityCounts): string {
  const width = 520
  const labelW = 80
  const numberW = 60
  const barH = 24
  const gap = 10
  const max = Math.max(1, ...SEVERITY_ORDER.map((s) => counts[s]))
  const height = SEVERITY_ORDER.length * (barH + gap) + gap
  const rows = SEVERITY_ORDER.map((s, i) => {
    const y = gap + i * (barH + gap)
    const w = Math.round((counts[s] / max) * (width - labelW - numberW))
    return `<g class="bar" data-severity="${s}" data-count="${counts[s]}">` +
      `<text x="${labelW - 8}" y="${y + barH / 2 + 5}" text-anchor="end">${s}</text>` +
      `<rect x="${labelW}" y="${y}" width="${w}" height="${barH}" fill="${COLORS[s]}" rx="2"><title>${s}: ${counts[s]}</title></rect>` +
      `<text x="${labelW + w + 6}" y="${y + barH / 2 + 5}">${counts[s]}</text></g>`
  }).join('')
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-labelledby="chart-title">` +
    `<title id="chart-title">Standing findings by severity</title>` +
    `<line x1="${labelW}" y1="0" x2="${labelW}" y2="${height}" stroke="#999" stroke-width="1"/>${rows}</svg>`
}

function when (iso: string | undefined | null): string {
  return iso === undefined || iso === null ? '<span class="muted">—</span>' : `<time datetime="${e(iso)}">${e(iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC'))}</time>`
}

function duration (from: string | undefined, to: string | undefined): string | null {
  if (from === undefined || to === undefined) return null
  const s = Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000))
  return s < 60 ? `${s} s` : s < 3600 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}

function sourcesSection (d: DataSources | null): string {
  if (d === null) {
    return '<p class="note">The scan did not record the data it was matched against (it ended before matching, or used a template without CVE matching).</p>'
  }
  const row = (name: string, what: string, current: string): string => `<tr><th scope="row">${e(name)}</th><td>${what}</td><td>${current}</td></tr>`
  // Every registered source, as its descriptor presents it; one the scan predates is left out.
  return '<table><thead><tr><th>Source</th><th>What it held</th><th>How current</th></tr></thead><tbody>' +
    sourceLines(d).filter((s) => s.reported).map((s) => s.line === null
      ? row(s.title, '<span class="muted">not imported</span>', '')
      : row(s.title, e(s.line.held), s.line.dates.map((x) => `${e(x.label)} ${when(x.at)}`).join('; '))).join('') +
    '</tbody></table>'
}

function hostRows (h: HostRecord, standingHere: number): string {
  const names = h.hostnames.length > 0 ? e(h.hostnames.join(', ')) : '<span class="muted">—</span>'
  const open = h.ports.filter((p) => p.state === 'open')
  const head = (span: number): string => `<td rowspan="${span}"><a href="#host-${e(h.address)}">${e(h.address)}</a></td><td rowspan="${span}">${names}</td>` +
    `<td rowspan="${span}">${h.up ? 'up' : 'down'}</td><td rowspan="${span}" class="num">${standingHere}</td>`
  if (open.length === 0) return `<tr>${head(1)}<td colspan="3" class="muted">no open ports</td></tr>`
  return open.map((p, i) => `<tr>${i === 0 ? head(open.length) : ''}<td class="num">${p.port}/${e(p.protocol)}</td><td>${e(p.service ?? '')}</td>` +
    `<td>${e([p.product, p.version].filter(Boolean).join(' '))}${p.extraInfo !== undefined ? ` <span class="muted">(${e(p.extraInfo)})</span>` : ''}</td></tr>`).join('')
}

function findingRow (f: FindingRecord): string {
  const link = nvdUrl(f.cveId)
  const cve = link === null ? e(f.cveId) : `<a href="${e(link)}">${e(f.cveId)}</a>`
  const status = f.status.replace(/_/g, ' ')
  const exploited = kevCatalogueNames(f)
  return `<tr class="finding" data-severity="${f.severity}"><td>${sev(f.severity)}</td><td>${cve}${exploited === '' ? '' : `<br><strong>Known exploited</strong> <span class="muted">(${e(exploited)})</span>`}` +
    `${f.euvdId != null ? `<br><span class="euvd">${e(f.euvdId)}</span>` : ''}</td>` +
    `<td class="num">${f.port === 0 ? 'host' : `${f.port}/${e(f.protocol ?? 'tcp')}`}</td><td>${e(f.product)}${f.version !== null ? ` ${e(f.version)}` : ''}</td>` +
    `<td class="num">${f.cvss === null ? '<span class="muted">none yet</span>' : `${f.cvss}${f.cvssVersion !== null ? ` <span class="muted">v${e(f.cvssVersion)}</span>` : ''}`}</td>` +
    `<td>${e(status)}<br><span class="muted">${e(f.confidence)} confidence${f.confidenceNote !== null ? `: ${e(f.confidenceNote)}` : ''}</span>` +
    `${f.comment !== null ? `<br><em>${e(f.comment)}</em>` : ''}</td>` +
    `<td><pre class="evidence">${e(f.evidence)}</pre><span class="muted">${e(f.source)}: ${e(f.reason)}</span></td><td>${e(remediation(f))}</td></tr>`
}

const FINDINGS_HEAD = '<thead><tr><th>Severity</th><th>CVE</th><th class="num">Port</th><th>Product</th><th class="num">CVSS</th>' +
  '<th>Status</th><th>Evidence</th><th>Remediation</th></tr></thead>'

export interface HtmlOptions {
  /** Most findings listed (HTML_FINDINGS_MAX by default); the counts always cover every finding. */
  maxFindings?: number
}

/** Finding rows written between two turns of the event loop. */
const ROWS_PER_TURN = 100

export async function * htmlReport (src: ReportSource, options: HtmlOptions = {}): AsyncGenerator<string> {
  const max = options.maxFindings ?? HTML_FINDINGS_MAX
  const { scan } = src
  const meta = reportMeta(src)
  // The summary comes first on the page but counts every finding: read them all, keeping only the most
  // severe `max` (they come highest CVSS first) for the listing.
  const counter = new FindingCounter()
  const byStatus = new Map<string, number>()
  const listed = new Map<string, FindingRecord[]>()
  // A host's count in the hosts table is this scan's standing findings on it, as the findings below list them (a
  // host's own findingsCount counts what every scan found there).
  const perHost = new Map<string, number>()
  let total = 0
  for await (const f of reportFindings(src)) {
    total++
    if (counter.add(f)) perHost.set(f.address, (perHost.get(f.address) ?? 0) + 1)
    byStatus.set(f.status, (byStatus.get(f.status) ?? 0) + 1)
    if (total <= max) {
      const list = listed.get(f.address)
      if (list === undefined) listed.set(f.address, [f])
      else list.push(f)
    }
  }
  const { bySeverity: counts, standing: standingTotal } = counter.result
  const summary = scan.summary
  const facts: Array<[string, string]> = [
    ['Status', `${e(scan.status)}${scan.reason !== undefined ? ` — ${e(scan.reason)}` : ''}`],
    ['Targets', scan.targets.map((t) => `<code>${e(t.value)}</code> <span class="muted">(${e(t.type)})</span>`).join(', ')],
    ['Template', `${e(scan.template)}${scan.ports !== undefined ? `, ports <code>${e(scan.ports)}</code>` : ''}`],
    ['Created', when(scan.createdAt)],
    ['Started', when(scan.startedAt)],
    ['Finished', `${when(scan.finishedAt)}${duration(scan.startedAt, scan.finishedAt) !== null ? ` <span class="muted">(${duration(scan.startedAt, scan.finishedAt) ?? ''})</span>` : ''}`],
    ...(summary !== undefined
      ? [['Hosts', `${summary.hostsUp} up, ${summary.hostsDown} down`], ['Open ports', String(summary.openPorts)]] as Array<[string, string]>
      : []),
    ...(scan.scheduleId !== undefined ? [['Schedule', `<code>${e(scan.scheduleId)}</code>`]] as Array<[string, string]> : []),
    ...(meta.filters.tag !== undefined ? [['Tag filter', `<code>${e(meta.filters.tag)}</code>`]] as Array<[string, string]> : []),
    ...(meta.filters.minSeverity !== undefined ? [['Severity filter', `${e(meta.filters.minSeverity)} and above`]] as Array<[string, string]> : []),
    ...(meta.filters.minConfidence !== undefined ? [['Confidence filter', `${meta.filters.minConfidence} and above`]] as Array<[string, string]> : [])
  ]
  yield '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">' +
    `<meta http-equiv="Content-Security-Policy" content="${e(HTML_CSP)}">` +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<meta name="generator" content="${e(meta.generator)}">` +
    `<title>Scan report ${e(scan.id)}</title><style>${CSS}</style></head><body>` +
    `<header><h1>Scan report <code>${e(scan.id)}</code></h1><p class="meta">Generated ${when(meta.generatedAt)} by ${e(meta.generator)}.</p></header>` +
    (meta.partial !== null ? `<p class="partial" id="partial">Partial report. ${e(meta.partial)}</p>` : '') +
    '<section id="summary"><h2>Summary</h2><div class="overview">' +
    `<dl class="facts">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl>` +
    `<figure class="chart" id="severity-chart">${severityChart(counts)}<figcaption class="muted">Standing (open or reopened) findings by severity</figcaption></figure>` +
    '<table class="counts" id="severity-counts"><thead><tr><th>Severity</th><th class="num">Standing findings</th></tr></thead><tbody>' +
    SEVERITY_ORDER.map((s) => `<tr data-severity="${s}"><td>${sev(s)}</td><td class="num">${counts[s]}</td></tr>`).join('') +
    `<tr><th>Total</th><th class="num" id="standing-total">${standingTotal}</th></tr></tbody></table></div>` +
    `<p>${total} finding${total === 1 ? '' : 's'} in this report` +
    `${byStatus.size > 0 ? ` (${[...byStatus].map(([s, n]) => `${n} ${e(s.replace(/_/g, ' '))}`).join(', ')})` : ''}.` +
    ' Only open and reopened findings count in the totals; accepted, false positive and fixed findings are listed with their status.</p>' +
    (summary !== undefined && summary.uncheckedProducts.length > 0
      ? `<p class="note">Products that could not be checked against the NVD during this scan: ${summary.uncheckedProducts.map((p) => `<code>${e(p)}</code>`).join(', ')}.</p>`
      : '') +
    (summary !== undefined && summary.excluded.length > 0
      ? `<p class="note">Addresses left out by the scope lists: ${summary.excluded.map((x) => `<code>${e(x.address)}</code> (${e(x.reason)})`).join(', ')}.</p>`
      : '') +
    '</section>'

  yield '<section id="hosts"><h2>Hosts and open ports</h2><table><thead><tr><th>Address</th><th>Hostnames</th><th>State</th>' +
    '<th class="num">Standing findings</th><th class="num">Port</th><th>Service</th><th>Product</th></tr></thead><tbody>'
  const order: string[] = []
  let chunk = ''
  for await (const h of reportHosts(src)) {
    order.push(h.address)
    chunk += hostRows(h, perHost.get(h.address) ?? 0)
    if (order.length % 100 === 0) { yield chunk; chunk = '' }
  }
  yield chunk + (order.length === 0 ? '<tr><td colspan="7" class="muted">No hosts in this report.</td></tr>' : '') + '</tbody></table></section>'

  let out = '<section id="findings"><h2>Findings by host</h2>'
  if (total > max) {
    out += `<p class="note" id="findings-capped">This report lists the ${max} most severe of ${total} findings. ` +
      'The JSON, CSV and SARIF reports of this scan list all of them.</p>'
  }
  if (total === 0) out += '<p class="muted">No findings.</p>'
  const seen = new Set(order)
  const addresses = [...order.filter((a) => listed.has(a)), ...[...listed.keys()].filter((a) => !seen.has(a))]
  for (const address of addresses) {
    const list = listed.get(address) ?? []
    out += `<article class="host" id="host-${e(address)}"><h3>${e(address)} <span class="muted">(${list.length} finding${list.length === 1 ? '' : 's'})</span></h3>` +
      `<table>${FINDINGS_HEAD}<tbody>`
    // A host with thousands of findings was one turn of the event loop of several hundred ms: rows in pieces.
    for (let i = 0; i < list.length; i += ROWS_PER_TURN) {
      out += list.slice(i, i + ROWS_PER_TURN).map(findingRow).join('')
      yield out
      out = ''
      await turn()
    }
    out += '</tbody></table></article>'
  }
  yield out + '</section><section id="sources"><h2>Data sources</h2><p>What the scan was matched against, as recorded when it finished.</p>' +
    sourcesSection(dataSourcesOf(scan)) + '</section></body></html>\n'
}
