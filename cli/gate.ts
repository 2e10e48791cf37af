// --fail-on: the CI gate. Which findings trip it, and when a pass cannot be given because products were not checked.
import { Option } from 'commander'
import pc from 'picocolors'
import { GATE_STATUSES } from '../lib/vocabulary'
import { CliError, EXIT, oneOf, type Io } from './context'
import { CONFIDENCES, SEVERITIES, severityRank, type Confidence, type Finding, type Severity } from './output'

export interface Gate {
  failOn?: Severity
  minConfidence?: Confidence
}

/** The two options of the gate, for the commands that judge findings. */
export function gateOptions (): Option[] {
  return [
    new Option('--fail-on <level>', `exit 1 when a finding (${GATE_STATUSES.join(' or ')}) is at or above ${SEVERITIES.join(' | ')}, by its severity: an exposure finding without a CVSS score counts in its own (a critical Redis without a password trips --fail-on critical); findings of unknown severity, backported fixes and potential findings never trigger it; products that could not be checked exit 3, never 0`),
    new Option('--min-confidence <level>', `with --fail-on: count only findings of at least this confidence: ${CONFIDENCES.join(' | ')} (default: low, every finding)`)
  ]
}

export function readGate (opts: { failOn?: string, minConfidence?: string }): Gate {
  const failOn = oneOf('fail-on', opts.failOn, SEVERITIES)
  const minConfidence = oneOf('min-confidence', opts.minConfidence, CONFIDENCES)
  if (minConfidence !== undefined && failOn === undefined) throw new CliError('--min-confidence only applies with --fail-on.\nRun \'vulnscan --help\' for usage.', EXIT.USAGE)
  return { ...(failOn ? { failOn } : {}), ...(minConfidence ? { minConfidence } : {}) }
}

const confidenceRank = (c: string): number => CONFIDENCES.length - CONFIDENCES.indexOf(c as Confidence)

/** The findings that make --fail-on trip: standing (open or reopened), severe enough, and confident enough. */
export function failing (findings: Finding[], gate: Gate): Finding[] {
  if (gate.failOn === undefined) return []
  const floor = severityRank(gate.failOn)
  const sure = confidenceRank(gate.minConfidence ?? 'low')
  return findings.filter((f) => GATE_STATUSES.includes(f.status) && severityRank(f.severity) >= floor && confidenceRank(f.confidence) >= sure)
}

export function verdict (io: Io, findings: Finding[], gate: Gate, json: boolean): number {
  const bad = failing(findings, gate)
  if (bad.length === 0) return EXIT.OK
  const confidence = gate.minConfidence !== undefined && gate.minConfidence !== 'low' ? ` with ${gate.minConfidence} confidence or better` : ''
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
