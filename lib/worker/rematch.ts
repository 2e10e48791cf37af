// Products a scan could not check (the NVD was unreachable) are matched once the index can supply them: the hosts'
// stored services are matched again and their findings written, as of when they were seen. One re-match at a time
// per process; callers share the one in flight.
import type { NvdService } from '../nvd/service'
import type { NewFinding } from '../domain/findings'
import type { ResultsStore } from '../store/results-types'
import type { Store } from '../store/types'
import { hostRecordToResult } from '../store/host-result'
import { productsOf } from '../match/service'
import { portFindings } from './host-match'
import type { RunnerLogger, WorkerMatchDeps } from './types'

export interface RematchDeps {
  store: Pick<Store, 'pendingProducts' | 'clearPendingProduct'>
  results: Pick<ResultsStore, 'getHost' | 'recordHost'>
  nvd: NvdService
  matchDeps: WorkerMatchDeps
  log: RunnerLogger
}

async function rematchPending (deps: RematchDeps, signal: AbortSignal): Promise<void> {
  const { store, results, nvd, log } = deps
  const pending = await store.pendingProducts()
  if (pending.size === 0) return
  const refs = [...pending.keys()].map((k) => ({ vendor: k.slice(0, k.indexOf(':')), product: k.slice(k.indexOf(':') + 1) }))
  const ensured = await nvd.ensure(refs, signal)
  const failed = new Set(ensured.failed.map((p) => `${p.vendor}:${p.product}`))
  for (const [key, addresses] of pending) {
    if (failed.has(key)) continue
    for (const address of addresses) {
      const stored = await results.getHost(address)
      if (stored !== null) {
        const host = hostRecordToResult(stored)
        const ports = host.ports.filter((p) => p.state === 'open' && p.service !== undefined &&
          productsOf(p.service).some((x) => `${x.vendor}:${x.product}` === key))
        const findings: NewFinding[] = []
        for (const port of ports) findings.push(...await portFindings(deps.matchDeps, address, port))
        await results.recordHost({
          scanId: stored.lastScanId,
          at: stored.lastSeen,
          host,
          scannedPorts: [],
          findings,
          settledPorts: ports.filter((p) => p.protocol !== 'udp').map((p) => p.port),
          settledUdpPorts: ports.filter((p) => p.protocol === 'udp').map((p) => p.port)
        })
        log.info({ address, product: key, findings: findings.length }, 'matched a product the NVD could not supply before')
      }
      await store.clearPendingProduct(key, [address])
    }
  }
}

/** The re-match for this process: a call while one is in flight shares it. */
export function createRematcher (deps: RematchDeps): (signal: AbortSignal) => Promise<void> {
  let rematching: Promise<void> | null = null
  return async (signal) => {
    rematching ??= rematchPending(deps, signal)
      .catch((err) => deps.log.warn({ err: { message: (err as Error).message } }, 're-matching pending products failed'))
      .finally(() => { rematching = null })
    return await rematching
  }
}
