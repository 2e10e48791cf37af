// Tables and colours for the vulnscan CLI. Colour follows picocolors' detection (off when piped, NO_COLOR, FORCE_COLOR).
import Table from 'cli-table3'
import pc from 'picocolors'
import { countFindings, countsText } from '../lib/finding-counts'
import type { Schemas } from '../sdk'

export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const
export type Severity = typeof SEVERITIES[number]

/** Confidence tiers, surest first (a finding's `confidence`, and --min-confidence). */
export const CONFIDENCES = ['high', 'medium', 'low'] as const
export type Confidence = typeof CONFIDENCES[number]

/** Rank for comparisons: critical 4 … low 1; none, unknown and missing rank 0 (see --fail-on in the usage text). */
export function severityRank (severity: string | null | undefined): number {
  const i = SEVERITIES.indexOf((severity ?? '') as Severity)
  return i === -1 ? 0 : SEVERITIES.length - i
}

export function colourSeverity (severity: string | null | undefined): string {
  const s = severity ?? 'unknown'
  switch (s) {
    case 'critical': return pc.bold(pc.magenta(s.toUpperCase()))
    case 'high': return pc.bold(pc.red(s.toUpperCase()))
    case 'medium': return pc.yellow(s.toUpperCase())
    case 'low': return pc.cyan(s.toUpperCase())
    default: return pc.dim(s.toUpperCase())
  }
}

function newTable (head: string[]): Table.Table {
  return new Table({ head: head.map((h) => pc.bold(h)), style: { head: [], border: [] }, wordWrap: true })
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g

function visibleWidth (cell: string): number {
  return Math.max(0, ...cell.replace(ANSI, '').split('\n').map((l) => [...l].length))
}

/**
 * A table that fits `width` columns: columns of priority below 7 are left out first, lowest first; then the widest
 * columns are wrapped, down to their header's width. `width` null prints every column as it is. `priority` gives
 * each column's rank, 10 the most needed.
 */
export function fittedTable (head: string[], rows: string[][], priority: number[], width: number | null): string {
  let keep = head.map((_, i) => i)
  const natural = head.map((h, i) => Math.max(visibleWidth(h), ...rows.map((r) => visibleWidth(r[i] ?? ''))))
  // Each column takes its content, a space either side and one border; the table one more border.
  const total = (widths: number[]): number => 1 + widths.reduce((n, w) => n + w + 3, 0)
  if (width !== null) {
    for (const i of [...keep].sort((a, b) => priority[a] - priority[b] || b - a)) {
      if (total(keep.map((k) => natural[k])) <= width || priority[i] >= 7) break
      keep = keep.filter((k) => k !== i)
    }
  }
  const content = keep.map((i) => natural[i])
  if (width !== null) {
    // Still too wide: the widest column gives up a character at a time, none narrower than its header (or 6).
    const floor = keep.map((i) => Math.max(6, visibleWidth(head[i])))
    while (total(content) > width) {
      let widest = -1
      for (let j = 0; j < content.length; j++) if (content[j] > floor[j] && (widest === -1 || content[j] > content[widest])) widest = j
      if (widest === -1) break
      content[widest]--
    }
  }
  const t = new Table({
    head: keep.map((i) => pc.bold(head[i])),
    style: { head: [], border: [] },
    wordWrap: true,
    ...(width !== null ? { colWidths: content.map((w) => w + 2) } : {})
  })
  for (const r of rows) t.push(keep.map((i) => r[i] ?? ''))
  const left = head.filter((_, i) => !keep.includes(i))
  if (left.length === 0) return t.toString()
  let note = `(${left.length} more with --wide: ${left.join(', ')})`
  if (width !== null && note.length > width) note = `(${left.length} more columns with --wide)`
  return t.toString() + '\n' + pc.dim(note)
}

export type Host = Schemas['Host']
export type Finding = Schemas['Finding']
export type ApiKey = Schemas['ApiKey']
export type Scan = Schemas['Scan']

// A host with many open ports would make one row wider than any terminal; `vulnscan host` lists them all.
const PORTS_SHOWN = 8

function openPorts (h: Host): string {
  // 22/ssh as before; a UDP port says so (53/udp/dns), as TCP 53 and UDP 53 are two ports.
  const open = h.ports.filter((p) => p.state === 'open').map((p) => `${p.port}${p.protocol === 'udp' ? '/udp' : ''}${p.service ? '/' + p.service : ''}`)
  return open.length <= PORTS_SHOWN ? open.join(', ') : `${open.slice(0, PORTS_SHOWN).join(', ')} … +${open.length - PORTS_SHOWN}`
}

export function hostsTable (hosts: Host[], width: number | null = null): string {
  // A tags column only when a host on the page has tags: untagged inventories keep the narrower table.
  const tagged = hosts.some((h) => h.tags.length > 0)
  const rows = hosts.map((h) => [h.address, h.hostnames.join('\n'), h.up ? pc.green('up') : pc.red('down'), openPorts(h),
    String(h.findingsCount), h.findingsCount > 0 ? colourSeverity(h.maxSeverity) : '', h.lastSeen, ...(tagged ? [h.tags.join('\n')] : [])])
  return fittedTable(['address', 'hostnames', 'state', 'open ports', 'findings', 'worst', 'last seen', ...(tagged ? ['tags'] : [])], rows,
    [10, 4, 8, 9, 7, 7, 3, ...(tagged ? [5] : [])], width)
}

export function portsTable (host: Host, width: number | null = null): string {
  const rows = host.ports.map((p) => [`${p.port}/${p.protocol}`, p.state === 'open' ? pc.green(p.state) : pc.yellow(p.state), p.service ?? '',
    p.product ?? '', [p.version, p.distro].filter(Boolean).join(' '), (p.cpe ?? []).join('\n')])
  return fittedTable(['port', 'state', 'service', 'product', 'version', 'CPE'], rows, [10, 9, 8, 7, 6, 2], width)
}

/** `22/tcp`, `53/udp`: a port with its transport (a finding stored before UDP scanning is TCP); `host` for port 0, the host itself. */
export function portText (p: { port: number, protocol?: string }): string {
  if (p.port === 0) return 'host'
  return `${p.port}/${p.protocol ?? 'tcp'}`
}

/** A CVSS score always with its version: a v2 10.0 and a v3.1 9.8 are on different scales. */
export function cvssText (f: Pick<Finding, 'cvss' | 'cvssVersion'>): string {
  if (f.cvss === null || f.cvss === undefined) return pc.dim('n/a')
  return `${f.cvss.toFixed(1)} ${pc.dim(f.cvssVersion !== null && f.cvssVersion !== undefined ? `v${f.cvssVersion}` : 'v?')}`
}

function epssText (f: Finding): string {
  return f.epss === null || f.epss === undefined ? '' : `${(f.epss.score * 100).toFixed(1)}%`
}

/** CISA's KEV as `KEV` (`KEV+ransomware`), ENISA's EU KEV as `EU`: `KEV EU` when both list the CVE. */
function kevText (f: Finding): string {
  // A server from before the EU catalogue sends no kevCatalogues.
  const eu = (f as { kevCatalogues?: string[] }).kevCatalogues?.includes('eu') === true
  const cisa = f.kev ? (f.kev.ransomware === true ? 'KEV+ransomware' : 'KEV') : ''
  const text = [cisa, eu ? 'EU' : ''].filter(Boolean).join(' ')
  return text === '' ? '' : pc.bold(pc.red(text))
}

/** The EUVD id under the CVE id, when the finding has one. */
function cveText (f: Finding): string {
  const euvd = (f as { euvdId?: string | null }).euvdId
  return euvd === null || euvd === undefined ? f.cveId : `${f.cveId}\n${pc.dim(euvd)}`
}

/**
 * Findings as a table. A confidence that comes with a note (a possible backport, a platform the scan cannot
 * see) is marked [n] and the note printed once under the table, so a long sentence does not widen every row.
 */
export function findingsTable (findings: Finding[], { ids = false, width = null }: { ids?: boolean, width?: number | null } = {}): string {
  const rows: string[][] = []
  const notes: string[] = []
  for (const f of findings) {
    // The score beside the label (a server from before the score sends the label alone).
    const score = (f as { confidenceScore?: number }).confidenceScore
    let confidence: string = typeof score === 'number' ? `${f.confidence} ${score}` : f.confidence
    if (f.confidenceNote !== null && f.confidenceNote !== undefined && f.confidenceNote !== '') {
      let n = notes.indexOf(f.confidenceNote)
      if (n === -1) n = notes.push(f.confidenceNote) - 1
      confidence = `${confidence} ${pc.dim(`[${n + 1}]`)}`
    }
    rows.push([
      ...(ids ? [f.id] : []),
      colourSeverity(f.severity),
      cvssText(f),
      cveText(f),
      kevText(f),
      epssText(f),
      f.address,
      portText(f),
      [f.product, f.version].filter(Boolean).join(' '),
      f.source,
      confidence,
      f.status
    ])
  }
  const table = fittedTable([...(ids ? ['id'] : []), 'severity', 'CVSS', 'CVE', 'KEV', 'EPSS', 'host', 'port', 'product', 'source', 'confidence', 'status'], rows,
    [...(ids ? [10] : []), 10, 6, 10, 4, 1, 9, 8, 5, 2, 3, 7], width)
  return [table, ...notes.map((note, i) => pc.dim(`[${i + 1}] ${note}`))].join('\n')
}

export function keysTable (keys: ApiKey[], width: number | null = null): string {
  const rows = keys.map((k) => [k.id, k.label, k.role, k.scope.join('\n'), k.prefix, k.createdAt, k.expiresAt ?? 'never', k.lastUsedAt ?? 'never'])
  return fittedTable(['id', 'label', 'role', 'scope', 'prefix', 'created', 'expires', 'last used'], rows, [10, 8, 9, 6, 5, 3, 4, 2], width)
}

export type Schedule = Schemas['Schedule']
export type Webhook = Schemas['Webhook']
export type WebhookDelivery = Schemas['WebhookDelivery']

/** What a scheduled scan scans, in the words `vulnscan scan` takes: targets, then template, ports and priority. */
export function scheduledScanText (scan: Schedule['scan']): string {
  const opts = [
    scan.options?.template !== undefined ? `template ${scan.options.template}` : '',
    scan.options?.ports !== undefined ? `ports ${scan.options.ports}` : '',
    // udpPorts implies UDP unless udp is false.
    scan.options?.udp === false ? '' : scan.options?.udpPorts !== undefined ? `UDP ${scan.options.udpPorts}` : scan.options?.udp === true ? 'UDP' : '',
    scan.options?.discovery === false ? 'no discovery' : '',
    scan.priority !== undefined ? `p${scan.priority}` : ''
  ].filter(Boolean)
  const what = [...(scan.targets ?? []).map((t) => t.value), ...(scan.targetTags ?? []).map((tag) => `tag:${tag}`)]
  if (scan.tags !== undefined && scan.tags.length > 0) opts.push(`tags ${scan.tags.join(' ')}`)
  return `${what.join(' ')}${opts.length > 0 ? ` (${opts.join(', ')})` : ''}`
}

export function schedulesTable (schedules: Schedule[]): string {
  // The last run's due time above the scan it started, and the zone under the expression: a row no wider than it must be.
  const t = newTable(['id', 'name', 'cron', 'enabled', 'scan', 'next run', 'last run / its scan', 'runs'])
  for (const s of schedules) {
    t.push([s.id, s.name, `${s.cron}\n${pc.dim(s.timezone)}`, s.enabled ? pc.green('yes') : pc.yellow('no'), scheduledScanText(s.scan),
      s.nextRunAt ?? pc.dim('none'), s.lastRun === null ? pc.dim('never') : `${s.lastRun.dueAt}\n${s.lastRun.scanId}`,
      `${s.runs}${s.skippedTotal > 0 ? `\n${s.skippedTotal} skipped` : ''}`])
  }
  return t.toString()
}

/** A webhook's filter in words, e.g. `high or worse, KEV only`; empty when it lets every new finding through. */
export function webhookFilterText (f: Webhook['filter']): string {
  return [
    f.minSeverity !== undefined ? `${f.minSeverity} or worse` : '',
    f.kevOnly === true ? 'KEV only' : '',
    typeof f.minConfidence === 'number' ? `confidence ${f.minConfidence} or more` : f.minConfidence !== undefined ? `${f.minConfidence} confidence or more` : ''
  ].filter(Boolean).join(', ')
}

export function webhooksTable (webhooks: Webhook[]): string {
  const t = newTable(['id', 'url', 'events', 'filter', 'format', 'enabled', 'description', 'created'])
  for (const w of webhooks) {
    t.push([w.id, w.url, w.events.join('\n'), webhookFilterText(w.filter), w.format, w.enabled ? pc.green('yes') : pc.yellow('no'), w.description, w.createdAt])
  }
  return t.toString()
}

export function deliveriesTable (deliveries: WebhookDelivery[]): string {
  const t = newTable(['at', 'event', 'attempt', 'status', 'result', 'ms', 'retry'])
  for (const d of deliveries) {
    t.push([d.at, d.event, String(d.attempt), d.statusCode === null ? pc.dim('none') : String(d.statusCode),
      d.ok ? pc.green('ok') : pc.red(d.error ?? 'failed'), String(d.durationMs), d.willRetry ? 'yes' : ''])
  }
  return t.toString()
}

export type AuditEntry = Schemas['AuditEntry']

export function auditTable (entries: AuditEntry[]): string {
  const t = newTable(['when', 'who', 'method', 'route', 'target', 'from', 'status'])
  for (const e of entries) {
    t.push([e.at, e.keyId === null ? pc.dim('no valid key') : `${e.keyId}${e.keyLabel ? ` (${e.keyLabel})` : ''}`, e.method, e.route, e.targetId ?? '', e.ip,
      e.status < 400 ? String(e.status) : pc.red(String(e.status))])
  }
  return t.toString()
}

export function refusedTable (counts: Schemas['RefusedCount'][]): string {
  const t = newTable(['from', 'window start', 'window end', 'refused'])
  for (const c of counts) t.push([c.ip, c.windowStart, c.windowEnd, String(c.count)])
  return t.toString()
}

/**
 * The count line under a findings table, counted as the scan summary and the reports count (lib/finding-counts.ts):
 * `4 findings: 2 critical, 1 medium, 1 unknown`, then which page of the list this is when it is not all of it.
 */
export function findingsLine (findings: Finding[], total = findings.length): string {
  const line = countsText(countFindings(findings))
  return total > findings.length ? `${line}; this page lists ${findings.length} of ${total} (--limit, --offset)` : line
}

export type DataSources = Schemas['DataSources']

/** What findings are matched against, a line per source the server reported, for `vulnscan health`. */
export function dataSourcesText (d: DataSources): string {
  // Loaded here, not at start: the registry brings every source module, which no other command needs.
  const { sourceLines } = require('../lib/sources/registry') as typeof import('../lib/sources/registry')
  return sourceLines(d).filter((s) => s.reported).map((s) => s.line === null
    ? `  ${s.title}: not imported`
    : `  ${s.title}: ${s.line.held}${s.line.dates.map((x) => `, ${x.label} ${x.at ?? 'never'}`).join('')}`).join('\n')
}
