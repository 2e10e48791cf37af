// The one count of findings that every view shows: the CLI's lines, a scan's summary, the JSON, SARIF and HTML
// reports. A finding counts when it stands (open or reopened: design's rule, the CI gate's too); the others are
// listed with their status but never counted. Before this, each view counted its own way (all listed findings,
// findings observed open whatever a user decided, a host's standing findings from every scan) and they disagreed.
import type { SeverityTally } from './domain/severity'
import { GATE_STATUSES, type FindingStatus } from './vocabulary'

export const COUNTED_SEVERITIES = ['critical', 'high', 'medium', 'low', 'none', 'unknown'] as const
export type CountedSeverity = typeof COUNTED_SEVERITIES[number]

export interface FindingCounts {
  /** Findings given, whatever their status. */
  listed: number
  /** Standing findings (open or reopened). */
  standing: number
  /** Standing findings by severity. */
  bySeverity: SeverityTally
}

export function emptyTally (): SeverityTally {
  return { critical: 0, high: 0, medium: 0, low: 0, none: 0, unknown: 0 }
}

/** Whether a finding in this status counts. */
export function counts (status: string): boolean {
  return GATE_STATUSES.includes(status as FindingStatus)
}

/** A running count: add findings one at a time (a report streams them), read `result` at the end. */
export class FindingCounter {
  private readonly tally: FindingCounts = { listed: 0, standing: 0, bySeverity: emptyTally() }

  add (f: { severity?: string | null, status: string }): boolean {
    this.tally.listed++
    if (!counts(f.status)) return false
    this.tally.standing++
    const s = (f.severity ?? 'unknown') as CountedSeverity
    this.tally.bySeverity[s in this.tally.bySeverity ? s : 'unknown']++
    return true
  }

  get result (): FindingCounts {
    return { listed: this.tally.listed, standing: this.tally.standing, bySeverity: { ...this.tally.bySeverity } }
  }
}

export function countFindings (findings: Iterable<{ severity?: string | null, status: string }>): FindingCounts {
  const counter = new FindingCounter()
  for (const f of findings) counter.add(f)
  return counter.result
}

/** `16 findings: 3 critical, 4 high, 6 medium, 3 low` (standing ones), with those listed but not counted named. */
export function countsText (c: FindingCounts): string {
  const parts = COUNTED_SEVERITIES.filter((s) => c.bySeverity[s] > 0).map((s) => `${c.bySeverity[s]} ${s}`)
  const head = `${c.standing} finding${c.standing === 1 ? '' : 's'}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`
  const other = c.listed - c.standing
  return other > 0 ? `${head} (${other} more listed, not counted: accepted, false positive or fixed)` : head
}
