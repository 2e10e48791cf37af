// The CLI's tables fit the terminal (issue 23, item 7): at 80 columns the least useful columns are left out first
// and said so, the most needed never; --wide (width null) prints every column.
import { test } from 'tap'
import { findingsTable, hostsTable, fittedTable, keysTable } from '../../cli/output'
import type { Finding, Host, ApiKey } from '../../cli/output'
import { tableWidth } from '../../cli/context'

// eslint-disable-next-line no-control-regex
const plain = (s: string): string => s.replace(/\u001b\[[0-9;]*m/g, '')
const widest = (s: string): number => Math.max(...plain(s).split('\n').map((l) => [...l].length))

const finding = (i: number): Finding => ({
  id: `f${i}`, address: `127.0.${i}.10`, port: 6379, protocol: 'tcp', cveId: `CVE-2024-3144${i}`, severity: 'high', cvss: 8.8, cvssVersion: '3.1',
  kev: i === 1 ? { dateAdded: '2024-01-01', ransomware: true } : null, epss: { score: 0.12345, percentile: 0.9, date: '2026-11-01' },
  product: 'Redis', version: '7.0.14', source: 'distribution', confidence: 'medium', confidenceScore: 70, confidenceNote: null, status: 'open'
} as unknown as Finding)

const host = (i: number): Host => ({
  address: `127.0.${i}.10`, hostnames: [`a-rather-long-host-name-${i}.example.internal`], up: true, findingsCount: 3, maxSeverity: 'critical',
  lastSeen: '2026-11-28T12:00:00.000Z', tags: ['production', 'dmz'],
  ports: [22, 80, 443, 3306, 5432, 6379, 8080, 8443, 9200].map((port) => ({ port, protocol: 'tcp', state: 'open', service: 'svc' }))
} as unknown as Host)

test('findings, hosts and keys fit 80 columns; the key columns stay', async (t) => {
  const findings = findingsTable([1, 2, 3].map(finding), { width: 80 })
  t.ok(widest(findings) <= 80, `findings ${widest(findings)} wide`)
  for (const col of ['severity', 'CVE', 'host', 'port', 'status']) t.match(plain(findings), col, `findings keep ${col}`)
  t.match(plain(findings), /more (columns )?with --wide/)
  const wide = findingsTable([1, 2, 3].map(finding), { width: null })
  t.ok(widest(wide) > 80, `--wide: ${widest(wide)} columns, every column`)
  for (const col of ['EPSS', 'source', 'confidence', 'KEV']) t.match(plain(wide), col)

  const hosts = hostsTable([1, 2].map(host), 80)
  t.ok(widest(hosts) <= 80, `hosts ${widest(hosts)} wide`)
  for (const col of ['address', 'open ports', 'state']) t.match(plain(hosts), col)

  const keys = keysTable([{ id: 'k_0123456789abcdef', label: 'ci pipeline of the platform team', role: 'operator', scope: ['10.0.0.0/8'], prefix: 'vs_abcd',
    createdAt: '2026-11-28T12:00:00.000Z', expiresAt: null, lastUsedAt: '2026-11-28T12:30:00.000Z' } as unknown as ApiKey], 80)
  t.ok(widest(keys) <= 80, `keys ${widest(keys)} wide`)
})

test('a narrow terminal wraps what it cannot drop; a wide one drops nothing', async (t) => {
  const out = fittedTable(['a', 'b'], [['x'.repeat(100), 'y']], [10, 10], 60)
  t.ok(widest(out) <= 60, `wrapped to ${widest(out)}`)
  t.notMatch(out, 'with --wide')
  const roomy = findingsTable([finding(1)], { width: 400 })
  t.notMatch(plain(roomy), 'with --wide')
})

test('the width: the terminal, COLUMNS, none for a pipe or --wide', async (t) => {
  const io = (stdout: object, env: Record<string, string> = {}): Parameters<typeof tableWidth>[0] => ({ stdout, stderr: stdout, env } as unknown as Parameters<typeof tableWidth>[0])
  t.equal(tableWidth(io({ isTTY: true, columns: 120 }), false), 120)
  t.equal(tableWidth(io({ isTTY: true, columns: 120 }), true), null)
  t.equal(tableWidth(io({}, { COLUMNS: '90' }), false), 90)
  t.equal(tableWidth(io({}), false), null, 'a pipe takes every column')
  t.equal(tableWidth(io({ isTTY: true }), false), 80)
})
