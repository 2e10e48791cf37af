// The JSON report: the scan, its hosts and its findings in one document (schemas/report.ts), written piece by
// piece so that only one host or finding is held at a time.
import type { FindingRecord } from '../domain/findings'
import type { HostRecord } from '../domain/hosts'
import type { ScanRecord } from '../store/types'
import { FindingCounter } from '../finding-counts'
import { dataSourcesOf, reportFindings, reportHosts, reportMeta, type ReportSource } from './gather'

/**
 * How each record is written. The route passes the serializers compiled from the API's response schemas, so that
 * the report carries exactly the fields the API shows (no request hash or creator key of the scan).
 */
export interface JsonSerializers {
  scan: (scan: ScanRecord) => string
  host: (host: HostRecord) => string
  finding: (finding: FindingRecord) => string
}

const CHUNK = 200

export async function * jsonReport (src: ReportSource, serialize: JsonSerializers): AsyncGenerator<string> {
  const meta = reportMeta(src)
  yield `{"report":${JSON.stringify({ format: 'vulnscan-scan-report', version: 1, ...meta })}` +
    `,"scan":${serialize.scan(src.scan)},"dataSources":${JSON.stringify(dataSourcesOf(src.scan))},"hosts":[`
  let hosts = 0
  let chunk = ''
  for await (const h of reportHosts(src)) {
    chunk += (hosts++ === 0 ? '' : ',') + serialize.host(h)
    if (hosts % CHUNK === 0) { yield chunk; chunk = '' }
  }
  yield chunk + '],"findings":['
  chunk = ''
  let findings = 0
  const counter = new FindingCounter()
  const byStatus: Record<string, number> = {}
  for await (const f of reportFindings(src)) {
    chunk += (findings++ === 0 ? '' : ',') + serialize.finding(f)
    counter.add(f)
    byStatus[f.status] = (byStatus[f.status] ?? 0) + 1
    if (findings % CHUNK === 0) { yield chunk; chunk = '' }
  }
  // The totals are known only once every finding went by, hence last.
  yield chunk + `],"totals":${JSON.stringify({ hosts, findings, standingBySeverity: counter.result.bySeverity, byStatus })}}`
}
