// The scan worker's job handler. A scan's first job plans it (expands the targets, splits the hosts
// into batches, queues one job per batch); each batch job scans its hosts, matches what it found
// against the NVD index and writes hosts and findings; the batch that finishes last completes the scan.
// Each of those is a room of its own: plan.ts, batch.ts (with host-match.ts, host-logins.ts and
// write-batcher.ts), finish.ts, rematch.ts and sweep.ts; this file composes them and decides what a failed
// job means (put off during an outage, retried, or final).
import { parseScope } from '../scanner/targets'
import { DeferJobError, type QueueJob } from '../queue/types'
import { DEPENDENCY_ROLE, outageOf, outageReason, withoutAddresses } from '../outage'
import { withReadCache } from '../sources/read-cache'
import { planScan } from './plan'
import { runBatch } from './batch'
import { scanEnding } from './finish'
import { createRematcher } from './rematch'
import { sweepScans } from './sweep'
import { PermanentScanError, type RunnerDeps, type RunnerLogger, type ScanJobData, type WorkerMatchDeps } from './types'

export { batchJobId, PermanentScanError, type RunnerConfig, type RunnerDeps, type RunnerLogger, type ScanJobData } from './types'

export interface ScanRunner {
  handle(job: QueueJob<ScanJobData>, signal: AbortSignal): Promise<void>
  /** A job failed for good outside the handler (e.g. its worker died too often): fail its scan. */
  onFinalFailure(logicalId: string, data: unknown, reason: string): Promise<void>
  /**
   * Mend scans that outages left without a way forward: a queued scan with no job (its record was stored, the job's
   * write was lost) gets its job; a scan whose planning or batch job failed for good while the failure could not be
   * recorded ends as that failure says. Returns how many scans it mended.
   */
  sweep(): Promise<number>
}

/** Starts `runner.sweep()` every SCAN_SWEEP_INTERVAL seconds; returns the stop function. */
export function startSweeper (runner: ScanRunner, config: { SCAN_SWEEP_INTERVAL: number }, log: RunnerLogger): () => void {
  let running = false
  const timer = setInterval(() => {
    if (running) return
    running = true
    runner.sweep()
      .catch((err) => log.debug?.({ err: { message: (err as Error).message } }, 'scan sweep put off'))
      .finally(() => { running = false })
  }, config.SCAN_SWEEP_INTERVAL * 1000)
  timer.unref()
  return () => clearInterval(timer)
}

export function createScanRunner (deps: RunnerDeps): ScanRunner {
  const { store, results, queue, nvd, config, log } = deps
  // Ports running the same product read the same source entries: kept until an import moves the store's revision.
  const matchDeps: WorkerMatchDeps = { nvd: nvd.index, sources: deps.sources === undefined || deps.sources === null ? null : withReadCache(deps.sources) }
  const scope = parseScope(config.SCAN_ALLOW, config.SCAN_DENY)
  const ending = scanEnding(deps)
  const batches = {
    deps,
    matchDeps,
    cancelPollMs: deps.cancelPollMs ?? 500,
    writeBatchHosts: Math.max(1, deps.writeBatchHosts ?? 64),
    writeBatchMs: deps.writeBatchMs ?? 250,
    finish: ending.finish,
    rematch: createRematcher({ store, results, nvd, matchDeps, log })
  }
  const limitMs = config.SCAN_TIMEOUT * 1000

  return {
    sweep: async () => await sweepScans(deps, ending),
    async handle (job, signal) {
      const data = job.data
      try {
        if (data.batch === undefined) await planScan(deps, scope, data.scanId)
        else await runBatch(batches, data.scanId, data.batch, data.hosts ?? [], signal)
      } catch (err) {
        // A dependency's outage puts the job off without using an attempt, for as long as the scan's own time
        // limit: an outage delays work, it does not fail it. The outage itself is logged once (lib/outage.ts).
        const dependency = err instanceof PermanentScanError ? null : outageOf(err)
        let reason = withoutAddresses((err as Error).message)
        if (dependency !== null) {
          const since = job.deferredSince ?? Date.now()
          const waited = Date.now() - since
          if (waited < limitMs) {
            const delayMs = Math.min(30_000, Math.max(1000, Math.floor(waited / 2)), Math.max(1000, limitMs - waited))
            log.debug?.({ scanId: data.scanId, batch: data.batch, dependency, waitedMs: waited, delayMs }, 'scan job put off: a dependency is unavailable')
            throw new DeferJobError(delayMs, since, err as Error)
          }
          reason = `${DEPENDENCY_ROLE[dependency]} was unavailable (${outageReason(err)}) for longer than the scan's time limit of ${config.SCAN_TIMEOUT} s`
        }
        const final = dependency !== null || err instanceof PermanentScanError || job.attemptsMade + 1 >= deps.attempts
        log.error({ scanId: data.scanId, batch: data.batch, attempt: job.attemptsMade + 1, err: { message: reason } }, final ? 'scan job failed for good' : 'scan job failed, will retry')
        if (!final) throw err
        await ending.finalFailure(data, reason)
      }
    },
    async onFinalFailure (_logicalId, data, reason) {
      const d = data as ScanJobData
      if (typeof d?.scanId === 'string') await ending.finalFailure(d, withoutAddresses(reason))
    }
  }
}
