import { Type } from '@sinclair/typebox'
import { ref, StringEnum } from './common'
import { DataSourcesSchema } from './health'
import { FindingSchema } from './finding'
import { HostSchema } from './host'
import { ScanSchema } from './scan'
import { REPORT_FORMATS, REPORT_SEVERITIES } from '../lib/reports/gather'
import { FINDING_SOURCES } from '../lib/vocabulary'

const Counts = Type.Object({
  critical: Type.Integer({ minimum: 0 }),
  high: Type.Integer({ minimum: 0 }),
  medium: Type.Integer({ minimum: 0 }),
  low: Type.Integer({ minimum: 0 }),
  none: Type.Integer({ minimum: 0 }),
  unknown: Type.Integer({ minimum: 0 })
})

export const ScanReportSchema = Type.Object({
  report: Type.Object({
    format: Type.Literal('vulnscan-scan-report'),
    version: Type.Literal(1),
    generator: Type.String({ description: 'vulnscan and its version' }),
    generatedAt: Type.String({ format: 'date-time' }),
    partial: Type.Union([Type.String(), Type.Null()], { description: 'Set when the scan failed or was cancelled: the report covers only what it wrote before it ended' }),
    filters: Type.Object({
      tag: Type.Optional(Type.String()),
      minSeverity: Type.Optional(StringEnum([...REPORT_SEVERITIES])),
      source: Type.Optional(StringEnum([...FINDING_SOURCES])),
      minConfidence: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 }))
    }, { description: 'The filters the report was asked with' })
  }),
  scan: ref(ScanSchema),
  dataSources: Type.Union([ref(DataSourcesSchema), Type.Null()], { description: 'What the scan was matched against (its summary\'s dataSources); null when it recorded none' }),
  hosts: Type.Array(ref(HostSchema), { description: 'Every host the scan saw, up or down, in address order, with its ports and services' }),
  findings: Type.Array(ref(FindingSchema), { description: 'The findings the scan observed (as GET /vulnerability?scanId= lists them), highest CVSS first; each names its source and rule' }),
  totals: Type.Object({
    hosts: Type.Integer({ minimum: 0 }),
    findings: Type.Integer({ minimum: 0 }),
    standingBySeverity: Counts,
    byStatus: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'Findings in the report per status' })
  }, { description: 'Counts over the hosts and findings above; standingBySeverity counts open and reopened findings, as the API\'s totals do' })
}, {
  $id: 'ScanReport',
  description: 'A scan\'s report: the scan, its hosts and its findings, and the data it was matched against'
})

export const ReportQuerySchema = Type.Object({
  format: Type.Optional(StringEnum([...REPORT_FORMATS], { description: 'json, csv, sarif (SARIF 2.1.0) or html; wins over the Accept header. Without it, the Accept header chooses (JSON when it allows anything)' })),
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Only hosts carrying this tag, and the findings on them' })),
  minSeverity: Type.Optional(StringEnum([...REPORT_SEVERITIES], { description: 'Only findings at least this severe (findings without a CVSS score are left out by any threshold); hosts are all listed' })),
  source: Type.Optional(StringEnum([...FINDING_SOURCES], { description: 'Only findings decided by this source; `distribution`: the package findings of credentialed scans (port 0) and the banner findings a tracker decided' })),
  minConfidence: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'Only findings whose confidenceScore is at least this; hosts are all listed' }))
}, { additionalProperties: false })

export const ReportLinkRequestSchema = Type.Object({
  format: Type.Optional(StringEnum([...REPORT_FORMATS], { description: 'The report\'s format (default html: a page a browser opens)' })),
  expiresIn: Type.Optional(Type.Integer({ minimum: 60, maximum: 3600, description: 'Seconds the link works (default 600, at most 3600)' })),
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'As the report\'s `tag`' })),
  minSeverity: Type.Optional(StringEnum([...REPORT_SEVERITIES], { description: 'As the report\'s `minSeverity`' })),
  source: Type.Optional(StringEnum([...FINDING_SOURCES], { description: 'As the report\'s `source`' })),
  minConfidence: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, description: 'As the report\'s `minConfidence`' }))
}, { $id: 'ReportLinkRequest', additionalProperties: false, description: 'What the link shows' })

export const ReportLinkSchema = Type.Object({
  url: Type.String({ description: 'The path of the report with its token, to open in a browser (prefix the service\'s address)' }),
  expiresAt: Type.String({ format: 'date-time' })
}, { $id: 'ReportLink', description: 'A link to a scan\'s report that works without a key until it expires, and only while the key that asked for it may still read the scan' })

export const ReportLinkQuerySchema = Type.Object({
  token: Type.String({ minLength: 10, maxLength: 2048, description: 'The token of a link from POST /app/scan/{id}/report/link' })
}, { additionalProperties: false })
