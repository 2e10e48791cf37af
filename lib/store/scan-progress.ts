// Derived scan fields shared by both stores: progress sums over batches, and the percent shown.
import { CREDENTIALED_HOSTS_KEPT, type BatchSummary, type CredentialedSummary, type ScanRecord, type ScanSummary } from './types'

/** Percent of ports done: only goes up; exactly 100 only once the scan completed. */
export function percentOf (scan: Pick<ScanRecord, 'status' | 'progress'>): number {
  if (scan.status === 'completed') return 100
  const { portsDone, portsTotal } = scan.progress
  if (portsTotal <= 0) return 0
  return Math.min(99.9, Math.floor((portsDone / portsTotal) * 1000) / 10)
}

export function emptyFindingCounts (): ScanSummary['findings'] {
  return { critical: 0, high: 0, medium: 0, low: 0, none: 0, unknown: 0 }
}

/** Add the batches' summaries into the scan's. */
export function addSummaries (batches: BatchSummary[], excluded: ScanSummary['excluded']): ScanSummary {
  const out: ScanSummary = { hostsUp: 0, hostsDown: 0, openPorts: 0, findings: emptyFindingCounts(), uncheckedProducts: [], excluded }
  const unchecked = new Set<string>()
  for (const b of batches) {
    out.hostsUp += b.hostsUp
    out.hostsDown += b.hostsDown
    out.openPorts += b.openPorts
    if (b.openUdpPorts !== undefined) out.openUdpPorts = (out.openUdpPorts ?? 0) + b.openUdpPorts
    for (const k of Object.keys(out.findings) as (keyof ScanSummary['findings'])[]) out.findings[k] += b.findings[k] ?? 0
    for (const p of b.uncheckedProducts) unchecked.add(p)
    if (b.credentialed !== undefined) out.credentialed = addCredentialed(out.credentialed ?? emptyCredentialed(), b.credentialed)
  }
  out.uncheckedProducts = [...unchecked].sort()
  return out
}

export function emptyCredentialed (): CredentialedSummary {
  return { attempted: 0, succeeded: 0, failed: {}, hosts: [] }
}

/** Two credentialed summaries added up; the failed hosts in address text order, bounded. */
export function addCredentialed (a: CredentialedSummary, b: CredentialedSummary): CredentialedSummary {
  const failed = { ...a.failed }
  for (const [reason, n] of Object.entries(b.failed)) failed[reason] = (failed[reason] ?? 0) + n
  const hosts = [...a.hosts, ...b.hosts].sort((x, y) => x.address < y.address ? -1 : x.address > y.address ? 1 : 0).slice(0, CREDENTIALED_HOSTS_KEPT)
  return { attempted: a.attempted + b.attempted, succeeded: a.succeeded + b.succeeded, failed, hosts }
}
