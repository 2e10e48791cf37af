// The SARIF 2.1.0 report: one run, one result per finding, one rule per CVE (or check id), streamed. Results come
// first in the run object and the rules after them, so that the rules are gathered while the findings stream by
// and no finding is held; JSON readers do not care about the order of properties.
//
// Locations. A finding is on a network service, not in a file: each result names it twice, as a
// physicalLocation whose artifact URI is `tcp://<address>:<port>` (what GitHub code scanning and most viewers
// require and show, with the region at line 1, since a service has no lines) and as a logicalLocations entry
// `<address>:<port>` of kind `module` (what SARIF viewers that group by logical location show).
import type { FindingRecord } from '../store/results-types'
import { VERSION } from '../version'
import { dataSourcesOf, reportFindings, reportMeta, serviceUri, nvdUrl, remediation, standing, type FindingSeverity, type ReportSource } from './gather'

export const SARIF_SCHEMA_URI = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json'

type Level = 'error' | 'warning' | 'note' | 'none'

/** GitHub code scanning's mapping read backwards: critical and high are errors, medium warnings, the rest notes. */
export function levelOf (severity: FindingSeverity): Level {
  switch (severity) {
    case 'critical': case 'high': return 'error'
    case 'medium': case 'unknown': return 'warning'
    default: return 'note'
  }
}

interface Rule {
  id: string
  shortDescription: { text: string }
  fullDescription: { text: string }
  help: { text: string, markdown: string }
  helpUri?: string
  defaultConfiguration: { level: Level }
  properties: Record<string, unknown>
}

const SHORT_MAX = 200

function shortText (f: FindingRecord): string {
  const first = f.description.split(/(?<=\.)\s/)[0] ?? ''
  const text = first === '' ? `${f.cveId} in ${f.product}` : `${f.cveId}: ${first}`
  return text.length > SHORT_MAX ? text.slice(0, SHORT_MAX - 1) + '…' : text
}

function ruleOf (f: FindingRecord): Rule {
  const uri = nvdUrl(f.cveId)
  const description = f.description === '' ? `${f.cveId} affects ${f.product}.` : f.description
  const score = f.cvss === null ? 'no CVSS score yet' : `CVSS ${f.cvssVersion ?? ''} ${f.cvss}`.replace('  ', ' ')
  return {
    id: f.cveId,
    shortDescription: { text: shortText(f) },
    fullDescription: { text: description },
    help: {
      text: `${description}\n\nSeverity: ${f.severity} (${score}).${f.kev !== null ? ` Listed in CISA's Known Exploited Vulnerabilities catalog since ${f.kev.dateAdded}.` : ''}` +
        `${uri !== null ? `\nDetails: ${uri}` : ''}`,
      markdown: `${description}\n\n**Severity:** ${f.severity} (${score})${f.kev !== null ? `\n\n**Known exploited** (CISA KEV, added ${f.kev.dateAdded})` : ''}` +
        `${uri !== null ? `\n\n[${f.cveId} at the NVD](${uri})` : ''}`
    },
    ...(uri !== null ? { helpUri: uri } : {}),
    defaultConfiguration: { level: levelOf(f.severity) },
    properties: {
      // GitHub code scanning reads this (a number as a string) to rank alerts as critical, high, medium or low.
      ...(f.cvss !== null ? { 'security-severity': f.cvss.toFixed(1) } : {}),
      tags: ['security', 'vulnerability', ...(f.kev !== null ? ['known-exploited'] : [])],
      severity: f.severity,
      cvss: f.cvss,
      cvssVersion: f.cvssVersion,
      cvssVector: f.cvssVector
    }
  }
}

function resultOf (f: FindingRecord, ruleIndex: number): Record<string, unknown> {
  const uri = serviceUri(f.address, f.port)
  const where = uri.slice('tcp://'.length)
  const fix = remediation(f)
  const seen = `${f.product}${f.version !== null ? ` ${f.version}` : ''}`
  // A finding no longer standing (fixed) is a rule that passed. A user's decision (accepted, false positive) is
  // in the properties, not a SARIF suppression: 2.1.0's committee schema names the suppression's status `state`
  // and the final standard `status`, so either form fails one of the two schemas viewers validate against.
  const fails = f.status !== 'fixed'
  return {
    ruleId: f.cveId,
    ruleIndex,
    kind: fails ? 'fail' : 'pass',
    level: fails ? levelOf(f.severity) : 'none',
    message: { text: `${f.cveId} (${f.severity}${f.cvss !== null ? `, CVSS ${f.cvss}` : ''}) on ${where}: ${seen}. ${f.reason}. ${fix}` },
    locations: [{
      physicalLocation: { artifactLocation: { uri }, region: { startLine: 1 } },
      logicalLocations: [{ name: where, fullyQualifiedName: uri, kind: 'module' }]
    }],
    // The finding id is stable across scans (address, port and CVE): viewers match results between runs on it.
    fingerprints: { 'vulnscan/finding/v1': f.id },
    partialFingerprints: { primaryLocationLineHash: f.id },
    properties: {
      findingId: f.id,
      status: f.status,
      standing: standing(f.status),
      comment: f.comment,
      confidence: f.confidence,
      confidenceNote: f.confidenceNote,
      source: f.source,
      rule: f.rule,
      criterion: f.criterion,
      product: f.product,
      version: f.version,
      matchedCpe: f.matchedCpe,
      evidence: f.evidence,
      remediation: fix,
      kev: f.kev,
      epss: f.epss,
      distribution: f.distribution,
      firstSeen: f.firstSeen,
      lastSeen: f.lastSeen
    }
  }
}

const CHUNK = 200

export async function * sarifReport (src: ReportSource): AsyncGenerator<string> {
  const { scan } = src
  const meta = reportMeta(src)
  yield `{"$schema":${JSON.stringify(SARIF_SCHEMA_URI)},"version":"2.1.0","runs":[{"results":[`
  const ruleIndex = new Map<string, number>()
  const rules: Rule[] = []
  let n = 0
  let chunk = ''
  for await (const f of reportFindings(src)) {
    let index = ruleIndex.get(f.cveId)
    if (index === undefined) {
      index = rules.length
      ruleIndex.set(f.cveId, index)
      rules.push(ruleOf(f))
    }
    chunk += (n++ === 0 ? '' : ',') + JSON.stringify(resultOf(f, index))
    if (n % CHUNK === 0) { yield chunk; chunk = '' }
  }
  const invocation = {
    executionSuccessful: scan.status === 'completed',
    ...(scan.startedAt !== undefined ? { startTimeUtc: scan.startedAt } : {}),
    ...(scan.finishedAt !== undefined ? { endTimeUtc: scan.finishedAt } : {}),
    ...(meta.partial !== null ? { toolExecutionNotifications: [{ level: 'warning', message: { text: meta.partial } }] } : {})
  }
  const rest = {
    tool: { driver: { name: 'vulnscan', version: VERSION, semanticVersion: VERSION, rules } },
    // GitHub code scanning keeps the latest analysis of each category: the runs of one schedule share theirs, so
    // a later run closes the alerts an earlier one raised; a scan of its own is a category of its own.
    automationDetails: { id: `vulnscan/${scan.scheduleId ?? scan.id}/` },
    invocations: [invocation],
    columnKind: 'unicodeCodePoints',
    properties: {
      scan: {
        id: scan.id,
        status: scan.status,
        targets: scan.targets,
        template: scan.template,
        ...(scan.ports !== undefined ? { ports: scan.ports } : {}),
        createdAt: scan.createdAt,
        ...(scan.reason !== undefined ? { reason: scan.reason } : {}),
        ...(scan.summary !== undefined ? { summary: { hostsUp: scan.summary.hostsUp, hostsDown: scan.summary.hostsDown, openPorts: scan.summary.openPorts, findings: scan.summary.findings, uncheckedProducts: scan.summary.uncheckedProducts } } : {})
      },
      dataSources: dataSourcesOf(scan),
      report: meta
    }
  }
  yield chunk + `],${JSON.stringify(rest).slice(1)}]}`
}
