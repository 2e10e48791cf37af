// The host scheduler of the port scan: which port of which host goes next, how long its connect may
// take, what each outcome means, when a host is down and when the scan is over. It opens no socket:
// it hands attempts to a Dispatcher (the lanes, see portscan-lanes.ts) and is told their outcomes,
// so it is tested with outcomes made up by the test.

import { OUTCOME } from './portscan-thread.cjs'
import { RttEstimate, TimeoutModel, type TimeoutBounds } from './portscan-rtt'

export interface PortScanHost {
  address: string
  /** The host answered at least one connect (open or refused). */
  up: boolean
  /** Smoothed connect round-trip time in milliseconds, when measured. */
  rttMs?: number
  open: number[]
  filtered: number[]
  closedCount: number
  /** Why the scan of this host stopped early (unreachable), when it did. */
  downReason?: string
}

export interface PortScanProgress {
  portsDone: number
  portsTotal: number
  hostsDone: number
  hostsTotal: number
}

/** Where attempts go: the lanes that own the sockets. */
export interface Dispatcher {
  send (id: number, host: number, port: number, timeoutMs: number): void
  /** End of a burst of sends (worker lanes post their batch here). */
  flush (): void
  /** The in-flight attempts of a host may use a shorter timeout now. */
  retime (host: number, timeoutMs: number): void
  abortHost (host: number): void
}

export interface SchedulerOptions {
  /** Host addresses, canonical, in report order. */
  hosts: string[]
  ports: number[]
  maxConcurrency: number
  perHostConcurrency: number
  timeouts: TimeoutBounds
  retries: number
  onHost?: (h: PortScanHost) => void
  onProgress?: (p: PortScanProgress) => void
  /** Every host is finished. */
  onDone: (results: PortScanHost[]) => void
  /** The scan cannot go on (sockets cannot be opened for a long time). */
  onFail: (err: Error) => void
}

export interface SchedulerCounters {
  attempts: number
  timeouts: number
  selfConnects: number
  resourceBackoffs: number
}

/** Attempt ids carry the host index and the port: host * ID_BASE + port. */
export const ID_BASE = 65536
const PROGRESS_EVERY_MS = 100
const RESOURCE_GIVE_UP_MS = 15_000

interface HostState {
  index: number
  address: string
  next: number
  redo: number[]
  inflight: number
  remaining: number
  listed: boolean
  alive: boolean
  done: boolean
  downReason?: string
  rtt: RttEstimate
  retried: Set<number>
  /** The timeout the in-flight attempts of this host were last told about. */
  announcedTimeout: number
  open: number[]
  filtered: number[]
  closed: number
  /** Open port → the local port we connected from, when that was on the target's own address. */
  openFrom: Map<number, number> | null
}

export class HostScheduler {
  readonly counters: SchedulerCounters = { attempts: 0, timeouts: 0, selfConnects: 0, resourceBackoffs: 0 }
  readonly model: TimeoutModel
  /** Attempts handed out and not yet answered. */
  inflight = 0
  /** Current bound on attempts in flight (lowered when the process runs out of descriptors). */
  limit: number
  finished = false

  private readonly hosts: HostState[]
  private readonly ports: number[]
  private readonly results: PortScanHost[]
  private readonly active: HostState[] = []
  private dispatcher: Dispatcher | null = null
  private portsDone = 0
  private hostsDone = 0
  private nextHost = 0
  private rr = 0
  private pumping = false
  private paused = false
  private backoffMs = 10
  private successesSinceRaise = 0
  private resourceSince = 0
  private lastProgress = 0

  constructor (private readonly opts: SchedulerOptions) {
    this.ports = opts.ports
    this.limit = opts.maxConcurrency
    this.model = new TimeoutModel(opts.timeouts)
    this.results = new Array(opts.hosts.length)
    this.hosts = opts.hosts.map((address, index) => ({
      index, address, next: 0, redo: [], inflight: 0, remaining: opts.ports.length, listed: false,
      alive: false, done: false, rtt: new RttEstimate(), retried: new Set<number>(), announcedTimeout: Infinity,
      open: [], filtered: [], closed: 0, openFrom: null
    }))
  }

  get portsTotal (): number { return this.hosts.length * this.ports.length }

  /** Start handing out attempts. An empty scan finishes at once. */
  start (dispatcher: Dispatcher): void {
    this.dispatcher = dispatcher
    if (this.hosts.length === 0 || this.ports.length === 0) {
      for (const h of this.hosts) this.results[h.index] = this.hostResult(h)
      this.finished = true
      this.opts.onDone(this.results)
      return
    }
    this.progress(true)
    this.pump()
  }

  /** Stop: nothing more is sent and late outcomes are ignored. */
  stop (): void {
    this.finished = true
  }

  /** Run `fn` (a batch of outcomes) and only then send more: one pump per batch. */
  batch (fn: () => void): void {
    const was = this.pumping
    this.pumping = true
    try {
      fn()
    } finally {
      this.pumping = was
    }
    if (!was) this.pump()
  }

  private progress (force: boolean): void {
    if (this.opts.onProgress === undefined) return
    const now = performance.now()
    if (!force && now - this.lastProgress < PROGRESS_EVERY_MS) return
    this.lastProgress = now
    this.opts.onProgress({ portsDone: this.portsDone, portsTotal: this.portsTotal, hostsDone: this.hostsDone, hostsTotal: this.hosts.length })
  }

  private sample (h: HostState, rttUs: number): void {
    this.model.sample(h.rtt, rttUs)
    const t = this.model.timeoutFor(h.rtt)
    if (t < h.announcedTimeout * 0.5 && h.inflight > 0) {
      h.announcedTimeout = t
      this.dispatcher?.retime(h.index, t)
    }
  }

  private hostResult (h: HostState): PortScanHost {
    const r: PortScanHost = {
      address: h.address,
      up: h.alive,
      open: h.open.sort((a, b) => a - b),
      filtered: h.filtered.sort((a, b) => a - b),
      closedCount: h.closed
    }
    if (h.rtt.samples > 0) r.rttMs = Math.round(h.rtt.srtt * 1000) / 1000
    if (h.downReason !== undefined) r.downReason = h.downReason
    return r
  }

  // Two of our own sockets, X→Y and Y→X on one address, meet in a simultaneous open and both look
  // open although nobody listens: drop such pairs, as self-connects are dropped.
  private dropCrossConnects (h: HostState): void {
    const from = h.openFrom
    if (from === null) return
    const crossed = new Set<number>()
    for (const [port, local] of from) if (from.get(local) === port) crossed.add(port)
    if (crossed.size === 0) return
    h.open = h.open.filter((p) => !crossed.has(p))
    h.closed += crossed.size
    this.counters.selfConnects += crossed.size
  }

  private hostFinished (h: HostState): void {
    h.done = true
    this.dropCrossConnects(h)
    this.hostsDone++
    const r = this.hostResult(h)
    this.results[h.index] = r
    this.opts.onHost?.(r)
    this.progress(true)
    if (this.hostsDone === this.hosts.length && !this.finished) {
      this.finished = true
      this.opts.onDone(this.results)
    }
  }

  private settle (h: HostState): void {
    h.remaining--
    this.portsDone++
    if (h.remaining === 0) this.hostFinished(h)
    else this.progress(false)
  }

  private hostDown (h: HostState, reason: string): void {
    if (h.done) return
    h.downReason = reason
    this.portsDone += h.remaining
    h.remaining = 0
    h.redo.length = 0
    h.next = this.ports.length
    this.hostFinished(h)
    // After hostFinished, so the ABORTED reports this triggers find the host already done.
    if (!this.finished) this.dispatcher?.abortHost(h.index)
  }

  private requeue (h: HostState, port: number): void {
    h.redo.push(port)
    if (!h.listed) {
      h.listed = true
      this.active.push(h)
    }
  }

  private resourceTrouble (): void {
    this.counters.resourceBackoffs++
    this.successesSinceRaise = 0
    const now = performance.now()
    if (this.resourceSince === 0) this.resourceSince = now
    else if (now - this.resourceSince > RESOURCE_GIVE_UP_MS) {
      this.finished = true
      this.opts.onFail(new Error('cannot open sockets: the process keeps running out of file descriptors or local ports'))
      return
    }
    this.limit = Math.max(1, Math.floor(this.inflight * 0.8))
    if (this.inflight === 0 && !this.paused) {
      // Nothing in flight will free a descriptor for us: wait, then try again, a little longer each time.
      this.paused = true
      const delay = this.backoffMs
      this.backoffMs = Math.min(this.backoffMs * 2, 500)
      setTimeout(() => { this.paused = false; this.pump() }, delay)
    }
  }

  private recovered (): void {
    this.resourceSince = 0
    this.backoffMs = 10
    if (this.limit < this.opts.maxConcurrency && ++this.successesSinceRaise >= this.limit) {
      this.successesSinceRaise = 0
      this.limit++
    }
  }

  /** The outcome of one attempt (an OUTCOME code), then more attempts unless inside a batch. */
  onResult (id: number, outcome: number, rttUs: number, localPort: number): void {
    this.inflight--
    if (this.finished) return
    const h = this.hosts[Math.floor(id / ID_BASE)]
    const port = id % ID_BASE
    h.inflight--
    if (!h.done) {
      switch (outcome) {
        case OUTCOME.OPEN:
          h.alive = true
          this.sample(h, rttUs)
          h.open.push(port)
          if (localPort > 0) (h.openFrom ??= new Map()).set(port, localPort)
          this.recovered()
          this.settle(h)
          break
        case OUTCOME.SELF:
          // Simultaneous open with our own socket: nobody listens there, so the port is closed.
          this.counters.selfConnects++
          h.alive = true
          h.closed++
          this.recovered()
          this.settle(h)
          break
        case OUTCOME.CLOSED:
          h.alive = true
          this.sample(h, rttUs)
          h.closed++
          this.recovered()
          this.settle(h)
          break
        case OUTCOME.TIMEOUT:
          this.counters.timeouts++
          if (h.retried.has(port) || this.opts.retries === 0) {
            h.filtered.push(port)
            this.settle(h)
          } else {
            h.retried.add(port)
            this.requeue(h, port)
          }
          break
        case OUTCOME.UNREACH:
          // Once a host has answered, an unreachable for one port is a filter (ICMP prohibited).
          if (h.alive) {
            h.filtered.push(port)
            this.settle(h)
          } else {
            this.hostDown(h, 'host unreachable')
          }
          break
        case OUTCOME.RESOURCE:
          this.requeue(h, port)
          this.resourceTrouble()
          break
        case OUTCOME.ABORTED:
          break
        default:
          h.filtered.push(port)
          this.settle(h)
      }
    }
    if (!this.pumping) this.pump()
  }

  /** An attempt that was never made (its lane died): back to the queue, untried. */
  giveBack (id: number): void {
    this.inflight--
    const h = this.hosts[Math.floor(id / ID_BASE)]
    h.inflight--
    if (!h.done) this.requeue(h, id % ID_BASE)
  }

  private hasWork (h: HostState): boolean {
    return !h.done && (h.redo.length > 0 || h.next < this.ports.length)
  }

  // Round-robin over admitted hosts that have work and room under the per-host bound; hosts out
  // of unsent work leave the list (a retry puts them back).
  private pickHost (): HostState | null {
    const active = this.active
    for (let k = 0; k < active.length;) {
      if (this.rr >= active.length) this.rr = 0
      const h = active[this.rr]
      if (!this.hasWork(h)) {
        h.listed = false
        active[this.rr] = active[active.length - 1]
        active.pop()
        continue
      }
      if (h.inflight < this.opts.perHostConcurrency) return h
      this.rr++
      k++
    }
    return null
  }

  /** Hand out attempts up to the concurrency bounds. */
  pump (): void {
    const d = this.dispatcher
    if (this.finished || this.paused || this.pumping || d === null) return
    this.pumping = true
    try {
      while (this.inflight < this.limit && !this.finished && !this.paused) {
        const h = this.pickHost()
        if (h === null) {
          if (this.nextHost >= this.hosts.length) break
          const n = this.hosts[this.nextHost++]
          if (!n.done && !n.listed) {
            n.listed = true
            this.active.push(n)
          }
          continue
        }
        const port = h.redo.length > 0 ? h.redo.pop() as number : this.ports[h.next++]
        h.inflight++
        this.inflight++
        this.counters.attempts++
        const timeout = this.model.timeoutFor(h.rtt)
        if (timeout < h.announcedTimeout) h.announcedTimeout = timeout
        d.send(h.index * ID_BASE + port, h.index, port, timeout)
      }
    } finally {
      this.pumping = false
      d.flush()
    }
  }
}
