// --fail-on: the CI gate. Which findings trip it, and when a pass cannot be given because products were not checked.
import { Option } from 'commander'
import pc from 'picocolors'
import { DEFAULT_GATE_SCORE, LABEL_FLOOR, parseMinConfidence } from '../lib/domain/confidence'
import { GATE_STATUSES } from '../lib/vocabulary'
import { CliError, EXIT, oneOf, type Io } from './context'
import { CONFIDENCES, SEVERITIES, severityRank, type Finding, type Severity } from './output'

export interface Gate {
  failOn?: Severity
  /** The confidenceScore a finding must reach to count (--min-confidence; DEFAULT_GATE_SCORE when not given). */
  minConfidence?: number
}

/** The two options of the gate, for the commands that judge findings. */
export function gateOptions (): Option[] {
  return [
    new Option('--fail-on <level>', `exit 1 when a finding (${GATE_STATUSES.join(' or ')}) is at or above ${SEVERITIES.join(' | ')}, by its severity: an exposure finding without a CVSS score counts in its own (a critical Redis without a password trips --fail-on critical); findings of unknown severity, backported fixes and potential findings never trigger it; products that could not be checked exit 3, never 0`),
    new Option('--min-confidence <score>', `with --fail-on: count only findings whose confidence score (0-100) reaches this, or a label for its floor: ${CONFIDENCES.join(' | ')} (high 80, medium 50, low 0) (default: ${DEFAULT_GATE_SCORE}; 0 counts every finding)`)
  ]
}

export function readGate (opts: { failOn?: string, minConfidence?: string }): Gate {
  const failOn = oneOf('fail-on', opts.failOn, SEVERITIES)
  const minConfidence = parseMinConfidence(opts.minConfidence)
  if (opts.minConfidence !== undefined && minConfidence === undefined) {
    throw new CliError(`--min-confidence must be a number from 0 to 100 or one of ${CONFIDENCES.join(', ')} (got '${opts.minConfidence}').\nRun 'vulnscan --help' for usage.`, EXIT.USAGE)
  }
  if (minConfidence !== undefined && failOn === undefined) throw new CliError('--min-confidence only applies with --fail-on.\nRun \'vulnscan --help\' for usage.', EXIT.USAGE)
  return { ...(failOn ? { failOn } : {}), ...(minConfidence !== undefined ? { minConfidence } : {}) }
}

/** A finding's score; a server from before the score sends only the label, which stands for its floor. */
function scoreOf (f: Finding): number {
  const score = (f as { confidenceScore?: number }).confidenceScore
  return typeof score === 'number' ? score : LABEL_FLOOR[f.confidence]
}

/** The findings that make --fail-on trip: standing (open or reopened), severe enough, and confident enough. */
export function failing (findings: Finding[], gate: Gate): Finding[] {
  if (gate.failOn === undefined) return []
  const floor = severityRank(gate.failOn)
  const sure = gate.minConfidence ?? DEFAULT_GATE_SCORE
  return findings.filter((f) => GATE_STATUSES.includes(f.status) && severityRank(f.severity) >= floor && scoreOf(f) >= sure)
}

export function verdict (io: Io, findings: Finding[], gate: Gate, json: boolean): number {
  const bad = failing(findings, gate)
  if (bad.length === 0) return EXIT.OK
  // The default threshold goes unsaid, as --help says it; one asked for is repeated.
  const confidence = gate.minConfidence !== undefined ? ` with confidence ${gate.minConfidence} or more` : ''
  if (!json) io.stderr.write(pc.red(`${bad.length} finding${bad.length === 1 ? '' : 's'} at or above ${gate.failOn}${confidence}: failing (exit 1).\n`))
  return EXIT.FINDINGS
}

/**
 * A gate must not pass what it could not check: with the NVD unreachable, "no findings" proves nothing.
 * `unchecked` maps scan ids to the products they could not check.
 */
export function uncheckedGate (gate: Gate, result: number, what: string, unchecked: Map<string, string[]>): number {
  if (result !== EXIT.OK || gate.failOn === undefined) return result
  const products = [...new Set([...unchecked.values()].flat())].sort()
  if (products.length === 0) return result
  throw new CliError(`--fail-on ${gate.failOn} cannot pass ${what}: ${products.length} product(s) could not be checked against the NVD (${products.join(', ')}). Check the NVD settings and re-run.`, EXIT.API)
}
