// Ending a scan: the batch that finishes last completes it (or fails it, naming the batches that failed) with the
// summary of every batch and the data it was matched against; a planning job that fails for good fails the scan.
import { type BatchSummary, type ScanSummary } from '../store/types'
import { addSummaries, emptyFindingCounts } from '../store/scan-progress'
import { dataSources } from '../sources/registry'
import type { RunnerDeps, ScanJobData } from './types'

export interface ScanEnding {
  /** A batch is done: its summary kept, and the scan ended when every batch is in. */
  finish(scanId: string, batch: number, summary: BatchSummary): Promise<void>
  /** A job failed for good: the scan fails (planning), or the batch counts as failed and the scan ends once every batch is in. */
  finalFailure(data: ScanJobData, reason: string): Promise<void>
}

export function scanEnding (deps: Pick<RunnerDeps, 'store' | 'nvd' | 'sources' | 'notifier' | 'log'>): ScanEnding {
  const { store, nvd, log } = deps

  async function fail (scanId: string, reason: string): Promise<void> {
    const r = await store.updateScan(scanId, { status: 'failed', reason, finishedAt: new Date().toISOString() })
    if (r?.applied === true) {
      log.warn({ scanId, reason }, 'scan failed')
      await deps.notifier?.scanEnded(r.scan)
    }
  }

  async function finish (scanId: string, batch: number, summary: BatchSummary): Promise<void> {
    const all = await store.finishBatch(scanId, batch, summary)
    const scan = await store.getScan(scanId)
    if (scan === null || scan.batches === undefined || all.length < scan.batches) return
    // What the scan was matched against; a store that cannot say leaves it out rather than failing the scan.
    const against = await dataSources(nvd.index, deps.sources ?? null).catch(() => undefined)
    const total: ScanSummary = { ...addSummaries(all, scan.summary?.excluded ?? []), ...(against !== undefined ? { dataSources: against } : {}) }
    const errors = all.filter((b) => b.error !== undefined).map((b) => b.error)
    const r = await store.updateScan(scanId, errors.length > 0
      ? { status: 'failed', reason: errors.join('; '), summary: total, finishedAt: new Date().toISOString() }
      : { status: 'completed', summary: total, finishedAt: new Date().toISOString() })
    if (r?.applied === true) {
      log.info({ scanId, status: r.scan.status, summary: total }, 'scan finished')
      await deps.notifier?.scanEnded(r.scan)
    }
  }

  async function finalFailure (data: ScanJobData, reason: string): Promise<void> {
    if (data.batch === undefined) return await fail(data.scanId, reason)
    // One batch lost: the others' results stand, and the scan ends failed once every batch is in.
    await finish(data.scanId, data.batch, { hostsUp: 0, hostsDown: 0, openPorts: 0, findings: emptyFindingCounts(), uncheckedProducts: [], error: `batch ${data.batch}: ${reason}` })
  }

  return { finish, finalFailure }
}
