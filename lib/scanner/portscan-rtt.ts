// The connect timer of the port scan: RFC 6298 round-trip smoothing (the estimator nmap uses too),
// kept per host and for the whole scan, turned into a timeout bounded by the scan's limits.

export interface TimeoutBounds {
  /** Before any round trip was measured. */
  initialMs: number
  minMs: number
  maxMs: number
}

/** Smoothed round-trip time and its variation, in milliseconds. */
export class RttEstimate {
  samples = 0
  srtt = 0
  rttvar = 0

  add (ms: number): void {
    if (this.samples === 0) {
      this.srtt = ms
      this.rttvar = ms / 2
    } else {
      this.rttvar = 0.75 * this.rttvar + 0.25 * Math.abs(this.srtt - ms)
      this.srtt = 0.875 * this.srtt + 0.125 * ms
    }
    this.samples++
  }

  /** srtt + 4·rttvar, or undefined before the first sample. */
  get rto (): number | undefined {
    return this.samples > 0 ? this.srtt + 4 * this.rttvar : undefined
  }
}

export class TimeoutModel {
  /** What the scan learned across all hosts: the timer of a host not yet measured. */
  readonly global = new RttEstimate()

  constructor (readonly bounds: TimeoutBounds) {
    if (bounds.maxMs < bounds.minMs) this.bounds = { ...bounds, maxMs: bounds.minMs }
  }

  /** The connect timeout for a host: its own estimate, else the scan's, else the initial one. */
  timeoutFor (host: RttEstimate): number {
    const t = host.rto ?? this.global.rto
    if (t === undefined) return this.bounds.initialMs
    return Math.min(this.bounds.maxMs, Math.max(this.bounds.minMs, t))
  }

  /** Record one measured connect (open or refused) of a host, in microseconds. */
  sample (host: RttEstimate, rttUs: number): void {
    const ms = rttUs / 1000
    host.add(ms)
    this.global.add(ms)
  }
}
