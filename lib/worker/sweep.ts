// Mending scans that outages left without a way forward: a queued scan with no job (its record was stored, the
// job's write was lost) gets its job; a scan whose planning or batch job failed for good while the failure could
// not be recorded ends as that failure says.
import { withoutAddresses } from '../outage'
import type { ScanEnding } from './finish'
import { batchJobId, type RunnerDeps, type ScanJobData } from './types'

/** Returns how many scans it mended. */
export async function sweepScans (deps: Pick<RunnerDeps, 'store' | 'queue' | 'config' | 'log'>, ending: Pick<ScanEnding, 'finalFailure'>): Promise<number> {
  const { store, queue, log } = deps
  const sweepGraceMs = (deps.config.SCAN_SWEEP_INTERVAL ?? 60) * 1000
  let mended = 0
  const old = (s: { createdAt: string, startedAt?: string }): boolean => Date.now() - Date.parse(s.startedAt ?? s.createdAt) >= sweepGraceMs
  for (const status of ['queued', 'running'] as const) {
    // Oldest first is what matters; a page of the newest and a page of the oldest cover a backlog over time.
    const total = (await store.listScans({ status, limit: 1, offset: 0 })).total
    const pages = total <= 400 ? [0, 200] : [0, total - 200]
    const seen = new Set<string>()
    for (const offset of pages) {
      for (const scan of (await store.listScans({ status, limit: 200, offset })).items) {
        if (seen.has(scan.id) || !old(scan)) continue
        seen.add(scan.id)
        const planning = await queue.job(scan.id)
        if (status === 'queued' && planning === null) {
          await queue.add<ScanJobData>(scan.id, { scanId: scan.id }, scan.priority)
          log.warn({ scanId: scan.id }, 'queued scan had no job (its queue write was lost): queued again')
          mended++
          continue
        }
        if (planning?.state === 'failed') {
          await ending.finalFailure({ scanId: scan.id }, withoutAddresses(planning.failedReason ?? 'its planning job failed'))
          mended++
          continue
        }
        if (status !== 'running' || scan.batches === undefined) continue
        for (let i = 0; i < scan.batches; i++) {
          const b = await queue.job(batchJobId(scan.id, i))
          if (b?.state === 'failed') {
            await ending.finalFailure({ scanId: scan.id, batch: i }, withoutAddresses(b.failedReason ?? 'the batch job failed'))
            mended++
          }
        }
      }
    }
  }
  return mended
}
