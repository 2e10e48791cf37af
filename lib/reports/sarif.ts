// The SARIF 2.1.0 report: one run, one result per finding, one rule per CVE (or check id), streamed. Results come
// first in the run object and the rules after them, so that the rules are gathered while the findings stream by
// and no finding is held; JSON readers do not care about the order of properties.
//
// Locations. A finding is on a network service, not in a file: each result names it twice, as a
// physicalLocation whose artifact URI is `tcp://<address>:<port>` (`udp://…` for a UDP service; what GitHub code
// scanning and most viewers require and show, with the region at line 1, since a service has no lines) and as a
// logicalLocations entry `<address>:<port>` (`…/udp` for UDP) of kind `module` (what SARIF viewers that group by
// logical location show).
import { FindingCounter } from '../finding-counts'
import type { FindingRecord } from '../domain/findings'
import { kevCataloguesOfFinding } from '../store/results-merge'
import { VERSION } from '../version'
import { dataSourcesOf, reportFindings, reportMeta, serviceUri, nvdUrl, remediation, standing, type ReportSource } from './gather'
import type { FindingSeverity } from '../domain/severity'

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

/** GitHub's bands: critical above 9.0, high 7.0–8.9, medium 4.0–6.9, low 0.1–3.9. */
const SEVERITY_SCORE: Record<string, string> = { critical: '9.5', high: '8.0', medium: '5.5', low: '2.0' }

function securitySeverity (f: FindingRecord): string | null {
  if (f.cvss !== null) return f.cvss.toFixed(1)
  return SEVERITY_SCORE[f.severity] ?? null
}

/** A sentence with exactly one closing period, whatever the text already ends with. */
function sentence (text: string): string {
  const t = text.trim()
  return t === '' ? '' : /[.!?]$/.test(t) ? t : `${t}.`
}

function ruleOf (record: FindingRecord): Rule {
  const f = { ...record, kevCatalogues: kevCataloguesOfFinding(record), euvdId: record.euvdId ?? null }
  const uri = nvdUrl(f.cveId)
  const description = f.description === '' ? `${f.cveId} affects ${f.product}.` : f.description
  const score = f.cvss === null ? 'no CVSS score yet' : `CVSS ${f.cvssVersion ?? ''} ${f.cvss}`.replace('  ', ' ')
  return {
    id: f.cveId,
    shortDescription: { text: shortText(f) },
    fullDescription: { text: description },
    help: {
      text: `${description}\n\nSeverity: ${f.severity} (${score}).${f.kev !== null ? ` Listed in CISA's Known Exploited Vulnerabilities catalog since ${f.kev.dateAdded}.` : ''}` +
        `${f.kevCatalogues.includes('eu') ? ' Listed in ENISA\'s EU Known Exploited Vulnerabilities catalogue.' : ''}${f.euvdId !== null ? ` EUVD: ${f.euvdId}.` : ''}` +
        `${uri !== null ? `\nDetails: ${uri}` : ''}`,
      markdown: `${description}\n\n**Severity:** ${f.severity} (${score})${f.kev !== null ? `\n\n**Known exploited** (CISA KEV, added ${f.kev.dateAdded})` : ''}` +
        `${f.kevCatalogues.includes('eu') ? '\n\n**Known exploited** (EU KEV)' : ''}${f.euvdId !== null ? `\n\n**EUVD:** ${f.euvdId}` : ''}` +
        `${uri !== null ? `\n\n[${f.cveId} at the NVD](${uri})` : ''}`
    },
    ...(uri !== null ? { helpUri: uri } : {}),
    defaultConfiguration: { level: levelOf(f.severity) },
    properties: {
      // GitHub code scanning reads this (a number as a string) to rank alerts as critical, high, medium or low.
      // A finding without CVSS (an exposure check) gets the middle of its severity's band, so it ranks in its severity.
      ...(securitySeverity(f) !== null ? { 'security-severity': securitySeverity(f) } : {}),
      tags: ['security', 'vulnerability', ...(f.kevCatalogues.length > 0 ? ['known-exploited'] : [])],
      severity: f.severity,
      cvss: f.cvss,
      cvssVersion: f.cvssVersion,
      cvssVector: f.cvssVector
    }
  }
}

function resultOf (record: FindingRecord, ruleIndex: number): Record<string, unknown> {
  const f = { ...record, kevCatalogues: kevCataloguesOfFinding(record), euvdId: record.euvdId ?? null }
  const protocol = f.protocol === 'udp' ? 'udp' : 'tcp'
  const uri = serviceUri(f.address, f.port, protocol)
  // `192.0.2.1:22`, and `192.0.2.1:53/udp` so that a UDP service reads apart from a TCP one on the same number.
  const where = uri.slice(`${protocol}://`.length) + (protocol === 'udp' ? '/udp' : '')
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
    // SARIF's rank (0–100, "the priority or importance"): how sure the finding is, so a viewer can sort the
    // sure ones first and hide the rest.
    rank: f.confidenceScore,
    message: { text: [`${f.cveId} (${f.severity}${f.cvss !== null ? `, CVSS ${f.cvss}` : ''}) on ${where}: ${sentence(seen)}`, sentence(f.reason), sentence(fix)].filter((x) => x !== '').join(' ') },
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
      confidenceScore: f.confidenceScore,
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
      kevCatalogues: f.kevCatalogues,
      euvdId: f.euvdId,
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
  const counter = new FindingCounter()
  for await (const f of reportFindings(src)) {
    counter.add(f)
    let index = ruleIndex.get(f.cveId)
    if (index === undefined) {
      index = rules.length
      ruleIndex.set(f.cveId, index)
      rules.push(ruleOf(f))
    }
    chunk += (n++ === 0 ? '' : ',') + JSON.stringify(resultOf(f, index))
    if (n % CHUNK === 0) { yield chunk; chunk = '' }
  }
  const unchecked = scan.summary?.uncheckedProducts ?? []
  // What the scan could not check is said where viewers show a run's problems, not only in a property bag.
  const notifications = [
    ...(meta.partial !== null ? [{ level: 'warning', message: { text: meta.partial } }] : []),
    ...(unchecked.length > 0
      ? [{
          level: 'warning',
          descriptor: { id: 'vulnscan/unchecked-products' },
          message: { text: `${unchecked.length} product${unchecked.length === 1 ? '' : 's'} could not be checked against the vulnerability data (the NVD was unreachable or the index has no record of them): ${unchecked.join(', ')}. No finding about them means nothing.` }
        }]
      : [])
  ]
  const invocation = {
    executionSuccessful: scan.status === 'completed',
    ...(scan.startedAt !== undefined ? { startTimeUtc: scan.startedAt } : {}),
    ...(scan.finishedAt !== undefined ? { endTimeUtc: scan.finishedAt } : {}),
    ...(notifications.length > 0 ? { toolExecutionNotifications: notifications } : {})
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
      // The one count every view shows (lib/finding-counts.ts): standing findings by severity.
      counts: counter.result,
      report: meta
    }
  }
  yield chunk + `],${JSON.stringify(rest).slice(1)}]}`
}
