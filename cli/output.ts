// Tables and colours for the vulnscan CLI. Colour follows picocolors' detection (off when piped, NO_COLOR, FORCE_COLOR).
import Table from 'cli-table3'
import pc from 'picocolors'
import type { Schemas } from '../sdk'

export const SEVERITIES = ['critical', 'high', 'medium', 'low'] as const
export type Severity = typeof SEVERITIES[number]

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

export type Host = Schemas['Host']
export type Finding = Schemas['Finding']
export type ApiKey = Schemas['ApiKey']
export type Scan = Schemas['Scan']

// A host with many open ports would make one row wider than any terminal; `vulnscan host` lists them all.
const PORTS_SHOWN = 8

function openPorts (h: Host): string {
  const open = h.ports.filter((p) => p.state === 'open').map((p) => `${p.port}${p.service ? '/' + p.service : ''}`)
  return open.length <= PORTS_SHOWN ? open.join(', ') : `${open.slice(0, PORTS_SHOWN).join(', ')} … +${open.length - PORTS_SHOWN}`
}

export function hostsTable (hosts: Host[]): string {
  const t = newTable(['address', 'hostnames', 'state', 'open ports', 'findings', 'worst', 'last seen'])
  for (const h of hosts) {
    t.push([h.address, h.hostnames.join('\n'), h.up ? pc.green('up') : pc.red('down'), openPorts(h),
      String(h.findingsCount), h.findingsCount > 0 ? colourSeverity(h.maxSeverity) : '', h.lastSeen])
  }
  return t.toString()
}

export function portsTable (host: Host): string {
  const t = newTable(['port', 'state', 'service', 'product', 'version', 'CPE'])
  for (const p of host.ports) {
    t.push([`${p.port}/${p.protocol}`, p.state === 'open' ? pc.green(p.state) : pc.yellow(p.state), p.service ?? '',
      p.product ?? '', [p.version, p.distro].filter(Boolean).join(' '), (p.cpe ?? []).join('\n')])
  }
  return t.toString()
}

export function findingsTable (findings: Finding[]): string {
  const t = newTable(['severity', 'CVSS', 'CVE', 'KEV', 'host', 'port', 'product', 'confidence', 'status'])
  for (const f of findings) {
    t.push([
      colourSeverity(f.severity),
      f.cvss === null || f.cvss === undefined ? pc.dim('n/a') : f.cvss.toFixed(1),
      f.cveId,
      f.kev ? pc.bold(pc.red('KEV')) : '',
      f.address,
      String(f.port),
      [f.product, f.version].filter(Boolean).join(' '),
      f.confidence,
      f.status
    ])
  }
  return t.toString()
}

export function keysTable (keys: ApiKey[]): string {
  const t = newTable(['id', 'label', 'prefix', 'created', 'expires', 'last used'])
  for (const k of keys) t.push([k.id, k.label, k.prefix, k.createdAt, k.expiresAt ?? 'never', k.lastUsedAt ?? 'never'])
  return t.toString()
}

/** One line per severity with a count, worst first, e.g. `2 critical, 1 high`. */
export function severityCounts (findings: Finding[]): string {
  const counts = new Map<string, number>()
  for (const f of findings) counts.set(f.severity ?? 'unknown', (counts.get(f.severity ?? 'unknown') ?? 0) + 1)
  const order = [...SEVERITIES, 'none', 'unknown']
  return [...counts.entries()].sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0])).map(([s, n]) => `${n} ${s}`).join(', ')
}
