// A batch job's host writes, in batches, in the order the hosts were scanned. A batch goes when it holds `hosts`
// hosts or its first host has waited `waitMs` (one transaction each on PostgreSQL). One batch is in flight while
// the next is matched and filled, so that the database's transaction and this process's matching overlap; a batch
// goes only once the one before it has committed, so batches commit in scan order. The job ends only once every
// batch has committed (drain), so a host is never acknowledged before its findings are stored; a failed batch fails
// the job, and the retry writes the same hosts again (the writes are idempotent).
import type { HostScanWrite } from '../store/results-types'
import type { NewFinding } from '../domain/findings'

export interface PendingWrite { write: HostScanWrite, findings: NewFinding[] }

export interface WriteBatcherOptions {
  /** Most hosts in one batch. */
  hosts: number
  /** Longest the first host of a batch waits for it to fill. */
  waitMs: number
  /** Writes one batch (and whatever goes with it: the webhook outbox, the summary's counts). */
  commit: (batch: PendingWrite[]) => Promise<void>
}

export class HostWriteBatcher {
  private readonly pending: PendingWrite[] = []
  private writing: PendingWrite[] = []
  private inFlight: Promise<void> = Promise.resolve()
  private flushTimer: NodeJS.Timeout | null = null
  private chain: Promise<void> = Promise.resolve()

  constructor (private readonly opts: WriteBatcherOptions) {}

  /** Runs `fn` after everything queued before it. A failure is kept for settled(); until then it is not an unhandled rejection. */
  then (fn: () => Promise<void>): void {
    this.chain = this.chain.then(fn)
    this.chain.catch(() => {})
  }

  /** Whether a write for this address waits or is being written. */
  holds (address: string): boolean {
    return [...this.pending, ...this.writing].some((p) => p.write.host.address === address)
  }

  async add (p: PendingWrite): Promise<void> {
    this.pending.push(p)
    if (this.pending.length >= this.opts.hosts) await this.flush()
    else this.flushTimer ??= setTimeout(() => this.then(async () => await this.flush()), this.opts.waitMs)
  }

  private async flush (): Promise<void> {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer)
    this.flushTimer = null
    if (this.pending.length === 0) return
    // The batch before this one fails this flush if it failed, and so the job.
    await this.inFlight
    const batch = this.pending.splice(0)
    this.writing = batch
    this.inFlight = this.opts.commit(batch)
    this.inFlight.catch(() => {})
  }

  /** Every queued step done and every host written and committed; rejects with the first failure. */
  async settle (): Promise<void> {
    this.then(async () => { await this.flush(); await this.inFlight })
    await this.chain
  }

  /** After a failure or a cancellation: what was scanned is still written where it can be, and nothing is left in flight. */
  async abandon (): Promise<void> {
    this.then(async () => { await this.flush(); await this.inFlight })
    await this.chain.catch(() => {})
    await this.inFlight.catch(() => {})
  }

  stop (): void {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer)
    this.flushTimer = null
  }
}
