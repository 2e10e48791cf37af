// Finished scans for report tests, written through the stores as a worker writes them: the scan record, its
// hosts and findings (from real NVD fixture records) under its scan id, then the summary it ends with.
import type { FastifyInstance } from 'fastify'
import { newScanRecord } from '../../lib/scans'
import type { NewFinding } from '../../lib/domain/findings'
import type { ScanRecord, ScanSummary } from '../../lib/store/types'
import type { DataSources } from '../../lib/sources/registry'
import { finding, write, type Service } from './results'

export interface SeedHost {
  address: string
  hostnames?: string[]
  up?: boolean
  services: Service[]
  findings: NewFinding[]
}

export const DATA_SOURCES: DataSources = {
  nvd: { cves: 38, products: 21, lastSync: '2026-02-28T23:00:00.000Z', authoritativeAsOf: null },
  cve5: { records: 12, newestUpdated: '2026-02-27T10:00:00.000Z', importedAt: '2026-02-28T22:00:00.000Z' },
  distributions: { debian: { importedAt: '2026-02-28T21:00:00.000Z', packages: 1200, cves: 5400 }, ubuntu: null },
  kev: { catalogVersion: '2026.02.27', dateReleased: '2026-02-27T15:00:00.000Z', count: 1250 },
  epss: null
}

/** Write a scan that ran from `at` and ended in `status` with these hosts; returns the stored record. */
export async function seedScan (app: FastifyInstance, opts: { id: string, at: number, hosts: SeedHost[], status?: 'completed' | 'failed' | 'cancelled' | 'running', reason?: string }): Promise<ScanRecord> {
  const status = opts.status ?? 'completed'
  const record = newScanRecord({ id: opts.id, targets: opts.hosts.map((h) => ({ value: h.address, type: 'single_ip' as const })), options: { template: 'standard' } }, 'service', new Date(opts.at))
  await app.store.createScan(record)
  await app.store.updateScan(opts.id, { status: 'running', startedAt: new Date(opts.at + 1000).toISOString(), hostsTotal: opts.hosts.length })
  const standing: Array<Record<string, number>> = []
  for (const h of opts.hosts) {
    standing.push((await app.results.recordHost(write({ address: h.address, at: opts.at + 2000, scanId: opts.id, hostnames: h.hostnames, up: h.up, services: h.services, findings: h.findings }))).standing)
  }
  const summary: ScanSummary = {
    hostsUp: opts.hosts.filter((h) => h.up !== false).length,
    hostsDown: opts.hosts.filter((h) => h.up === false).length,
    openPorts: opts.hosts.reduce((n, h) => n + h.services.filter((s) => s.state !== 'filtered').length, 0),
    findings: { critical: 0, high: 0, medium: 0, low: 0, none: 0, unknown: 0 },
    uncheckedProducts: [],
    excluded: [],
    dataSources: DATA_SOURCES
  }
  // As the worker counts: the standing findings each write leaves (lib/finding-counts.ts).
  for (const c of standing) for (const [s, n] of Object.entries(c)) summary.findings[s as keyof ScanSummary['findings']] += n
  if (status !== 'running') {
    await app.store.updateScan(opts.id, { status, finishedAt: new Date(opts.at + 65_000).toISOString(), summary, ...(opts.reason !== undefined ? { reason: opts.reason } : {}) })
  }
  const scan = await app.store.getScan(opts.id)
  if (scan === null) throw new Error(`scan ${opts.id} was not stored`)
  return scan
}

/** A banner with markup in it, as a hostile or odd service may send: a report must show it, never run it. */
export const HOSTILE_BANNER = 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u2 <script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'">'

/** Three hosts: one with SSH (a hostile banner) and HTTP findings, one with Redis, one with no finding. */
export function threeHosts (prefix = '192.0.2'): SeedHost[] {
  const a = `${prefix}.31`
  const b = `${prefix}.32`
  const c = `${prefix}.33`
  const ssh = finding(a, 22, 'CVE-2024-6387', 'OpenSSH', '9.2p1', 'medium')
  ssh.evidence = HOSTILE_BANNER
  return [
    {
      address: a,
      hostnames: ['web-1.example.test'],
      services: [
        { port: 22, service: 'ssh', product: 'OpenSSH', version: '9.2p1', banner: HOSTILE_BANNER },
        { port: 80, service: 'http', product: 'Apache httpd', version: '2.4.49' }
      ],
      findings: [ssh, finding(a, 80, 'CVE-2021-41773', 'Apache httpd', '2.4.49'), finding(a, 80, 'CVE-2024-38474', 'Apache httpd', '2.4.49')]
    },
    {
      address: b,
      services: [{ port: 6379, service: 'redis', product: 'Redis', version: '6.0.5' }],
      findings: [finding(b, 6379, 'CVE-2022-0543', 'Redis', '6.0.5')]
    },
    { address: c, services: [{ port: 443, service: 'https' }], findings: [] }
  ]
}
