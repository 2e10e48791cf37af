import { Readable } from 'node:stream'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import accepts from '@fastify/accepts'
import { errors, ref, reply } from '../../../../schemas/common'
import { ScanIdParamsSchema, ScanSchema } from '../../../../schemas/scan'
import { FindingSchema } from '../../../../schemas/finding'
import { HostSchema } from '../../../../schemas/host'
import { ReportLinkQuerySchema, ReportLinkRequestSchema, ReportLinkSchema, ReportQuerySchema, ScanReportSchema } from '../../../../schemas/report'
import { ConflictError, NotAcceptableError, ReportLinkRefusedError } from '../../../../lib/errors'
import { linkPrincipal, ReportLinkCodec, reportLinkKey, ReportLinkError, REPORT_LINK_TTL_DEFAULT } from '../../../../lib/report-links'
import { scanView } from '../../../../lib/ownership'
import { reportable, type ReportFormat, type ReportSource } from '../../../../lib/reports/gather'
import { jsonReport, type JsonSerializers } from '../../../../lib/reports/json'
import { csvReport } from '../../../../lib/reports/csv'
import { sarifReport } from '../../../../lib/reports/sarif'
import { HTML_CSP, HTML_FINDINGS_MAX, htmlReport } from '../../../../lib/reports/html'
import { CSV_COLUMNS } from '../../../../lib/findings-csv'
import { cyclonedxReport, hasFindings, openvexReport } from '../../../../lib/reports/vex'

/** Each format's media type (what Accept chooses among, in this order of preference), Content-Type and file extension. */
const FORMATS: Record<ReportFormat, { media: string, contentType: string, ext: string }> = {
  json: { media: 'application/json', contentType: 'application/json; charset=utf-8', ext: 'json' },
  sarif: { media: 'application/sarif+json', contentType: 'application/sarif+json; charset=utf-8', ext: 'sarif' },
  csv: { media: 'text/csv', contentType: 'text/csv; charset=utf-8; header=present', ext: 'csv' },
  html: { media: 'text/html', contentType: 'text/html; charset=utf-8', ext: 'html' },
  cyclonedx: { media: 'application/vnd.cyclonedx+json', contentType: 'application/vnd.cyclonedx+json; version=1.6; charset=utf-8', ext: 'cdx.json' },
  openvex: { media: 'application/openvex+json', contentType: 'application/openvex+json; charset=utf-8', ext: 'openvex.json' }
}
const BY_MEDIA = new Map(Object.entries(FORMATS).map(([format, f]) => [f.media, format as ReportFormat]))

const CSV_EXAMPLE = `${CSV_COLUMNS.join(',')}\r\n` +
  '5f0c1e9a7b3d2c4e6a8b0d1f,192.0.2.10,22,CVE-2024-6387,high,8.1,3.1,,,0.5,0.98,open,medium,"The banner shows a Debian package: the distribution may have backported the fix",nvd,"nvd: cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:* >= 8.5, < 9.8",OpenSSH,9.2p1,' +
  'cpe:2.3:a:openbsd:openssh:9.2:p1:*:*:*:*:*:*,"cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:* >= 8.5, < 9.8",9.2p1 < 9.8 (versionEndExcluding),2026-03-01T00:00:00.000Z,2026-03-01T00:00:00.000Z,,,"A signal handler race condition was found in sshd…"\r\n'

const SARIF_EXAMPLE = {
  $schema: 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json',
  version: '2.1.0',
  runs: [{
    results: [{
      ruleId: 'CVE-2024-6387',
      ruleIndex: 0,
      kind: 'fail',
      level: 'error',
      message: { text: 'CVE-2024-6387 (high, CVSS 8.1) on 192.0.2.10:22: OpenSSH 9.2p1. 9.2p1 < 9.8 (versionEndExcluding). Upgrade OpenSSH to 9.8 or later (the first fixed version).' },
      locations: [{
        physicalLocation: { artifactLocation: { uri: 'tcp://192.0.2.10:22' }, region: { startLine: 1 } },
        logicalLocations: [{ name: '192.0.2.10:22', fullyQualifiedName: 'tcp://192.0.2.10:22', kind: 'module' }]
      }],
      fingerprints: { 'vulnscan/finding/v1': '5f0c1e9a7b3d2c4e6a8b0d1f' },
      properties: { status: 'open', confidence: 'medium', source: 'nvd' }
    }],
    tool: {
      driver: {
        name: 'vulnscan',
        version: '0.1.0',
        rules: [{
          id: 'CVE-2024-6387',
          shortDescription: { text: 'CVE-2024-6387: A signal handler race condition was found in sshd…' },
          helpUri: 'https://nvd.nist.gov/vuln/detail/CVE-2024-6387',
          defaultConfiguration: { level: 'error' },
          properties: { 'security-severity': '8.1', tags: ['security', 'vulnerability'] }
        }]
      }
    },
    automationDetails: { id: 'vulnscan/scan-1/' }
  }]
}

const HTML_EXAMPLE = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Scan report scan-1</title><style>…</style></head>' +
  '<body><h1>Scan report <code>scan-1</code></h1><section id="summary">…<svg role="img">…</svg>…</section>' +
  '<section id="hosts">…</section><section id="findings">…</section><section id="sources">…</section></body></html>'

/**
 * A report as a stream that asks its generator for one piece at a time: with Node's default of sixteen pieces
 * buffered, each of ten reports made sixteen pieces in a row before the socket took any, and /health waited.
 */
function stream (pieces: AsyncIterable<string>): Readable {
  return Readable.from(pieces, { highWaterMark: 1 })
}

const reports: FastifyPluginAsyncTypebox = async (fastify) => {
  await fastify.register(accepts)
  // Compiled from the API's own response schemas on the first JSON report: the allow-lists of what leaves the server.
  let serializers: JsonSerializers | undefined
  const links = new ReportLinkCodec(reportLinkKey(fastify.config))

  /** The report of scan `id` as `request.principal` may see it; `inline` for a browser following a link. */
  async function serve (request: FastifyRequest, reply: FastifyReply, id: string, format: ReportFormat,
    { tag, minSeverity, source, minConfidence }: { tag?: string, minSeverity?: string, source?: string, minConfidence?: number }, inline: boolean): Promise<FastifyReply> {
  const scan = scanView(fastify.owned.actor(request), await fastify.owned.read(request, 'scan', id))
  if (!reportable(scan)) throw new ConflictError(`Scan '${id}' is ${scan.status}: its report is ready once it ends`)
  const src: ReportSource = {
    scan,
    results: fastify.results,
    filters: { ...(tag !== undefined ? { tag } : {}), ...(minSeverity !== undefined ? { minSeverity } : {}), ...(source !== undefined ? { source } : {}), ...(minConfidence !== undefined ? { minConfidence } : {}) } as ReportSource['filters'],
    scope: fastify.owned.scope(request),
    generatedAt: new Date().toISOString()
  }
  const f = FORMATS[format]
  reply
    .type(f.contentType)
    .header('content-disposition', `${inline ? 'inline' : 'attachment'}; filename="vulnscan-report-${id.replace(/[^A-Za-z0-9._-]/g, '_')}.${f.ext}"`)
    .header('cache-control', 'no-store')
  switch (format) {
    case 'json':
      serializers ??= {
        scan: reply.compileSerializationSchema(ScanSchema) as unknown as JsonSerializers['scan'],
        host: reply.compileSerializationSchema(HostSchema) as unknown as JsonSerializers['host'],
        finding: reply.compileSerializationSchema(FindingSchema) as unknown as JsonSerializers['finding']
      }
      return reply.send(stream(jsonReport(src, serializers)))
    case 'csv':
      return reply.send(stream(csvReport(src)))
    case 'sarif':
      return reply.send(stream(sarifReport(src)))
    case 'html':
      return reply.header('content-security-policy', HTML_CSP).send(stream(htmlReport(src)))
    case 'cyclonedx':
      return reply.send(stream(cyclonedxReport(src)))
    case 'openvex':
      if (!await hasFindings(src)) throw new ConflictError(`Scan '${id}' has no findings${Object.keys(src.filters).length > 0 ? ' these filters keep' : ''}: an OpenVEX document needs at least one statement`)
      return reply.send(stream(openvexReport(src)))
  }
  }

  fastify.get('/:id/report', {
    schema: {
      operationId: 'getScanReport',
      tags: ['scans'],
      summary: 'Get a scan\'s report',
      description: 'A finished scan\'s report: the scan (targets, template, times, status, summary), the hosts it saw with their ' +
        'open ports and services, the findings it observed (each with its source and rule) and the data it was matched ' +
        'against. `format` chooses json, csv (the columns of the findings CSV export), sarif (SARIF 2.1.0: one result per ' +
        'finding, one rule per CVE with its NVD page and CVSS as `security-severity`, the location `tcp://<address>:<port>` ' +
        `as artifact URI and as logical location), html (one self-contained page with a severity chart, for people and printers; it lists the ${HTML_FINDINGS_MAX} ` +
        'most severe findings and says so when there are more), cyclonedx (CycloneDX 1.6 JSON: hosts, services with their CPE and ' +
        'installed packages with their purl as components, each finding a vulnerability whose analysis state follows its status and decision) ' +
        'or openvex (OpenVEX 0.2: one statement per finding, affected, not_affected, fixed or under_investigation; a scan without findings ' +
        'has no statements to make, 409); without `format` the Accept header chooses, JSON by default. ' +
        'JSON, CSV and SARIF are streamed however many findings there are. Each comes as an attachment named ' +
        '`vulnscan-report-<id>.<json|csv|sarif|html>`. A queued or running scan has no report yet (409); a failed or ' +
        'cancelled scan\'s report covers what it wrote before it ended and says it is partial.',
      params: ScanIdParamsSchema,
      querystring: ReportQuerySchema,
      response: {
        200: {
          description: 'The report, as an attachment',
          content: {
            [FORMATS.json.media]: { schema: ref(ScanReportSchema) },
            [FORMATS.csv.media]: { schema: { type: 'string', description: 'Header row, then one row per finding (RFC 4180; cells a spreadsheet would run as a formula prefixed with `\'`)', examples: [CSV_EXAMPLE] } },
            [FORMATS.sarif.media]: { schema: { type: 'object', description: 'A SARIF 2.1.0 log (OASIS) with one run', examples: [SARIF_EXAMPLE] } },
            [FORMATS.html.media]: { schema: { type: 'string', description: 'One self-contained HTML document: inline CSS and SVG, no script, no external resource', examples: [HTML_EXAMPLE] } },
            [FORMATS.cyclonedx.media]: { schema: { type: 'object', description: 'A CycloneDX 1.6 JSON BOM (bomFormat, specVersion, components, vulnerabilities)' } },
            [FORMATS.openvex.media]: { schema: { type: 'object', description: 'An OpenVEX 0.2 document (@context, author, timestamp, statements)' } }
          }
        },
        ...errors(400, 401, 404, 406, 409, 429, 503)
      }
    }
  }, async (request, reply) => {
    const { id } = request.params
    const { format: asked, tag, minSeverity, source, minConfidence } = request.query
    let format: ReportFormat | undefined = asked
    if (format === undefined) {
      const type = request.accepts().type([...BY_MEDIA.keys()])
      if (type === false) {
        throw new NotAcceptableError(`A report is available as ${[...BY_MEDIA.keys()].join(', ')} (or ask with ?format=); the Accept header allows none of them`)
      }
      format = BY_MEDIA.get(type as string) as ReportFormat
    }
    return await serve(request, reply, id, format, { tag, minSeverity, source, minConfidence }, false)
  })

  fastify.post('/:id/report/link', {
    config: { role: 'reader' },
    schema: {
      operationId: 'createScanReportLink',
      tags: ['scans'],
      summary: 'Get a short-lived link to a scan\'s report',
      description: 'A link a browser opens without a key (the HTML report, shown inline), for `expiresIn` seconds (default ' +
        `${REPORT_LINK_TTL_DEFAULT}, at most 3600). It shows what this key may see of the scan, with the filters given, and works only while ` +
        'this key exists and may read: revoking the key ends its links. Anyone holding the link can read the report until then.',
      params: ScanIdParamsSchema,
      body: ref(ReportLinkRequestSchema),
      response: { 200: reply(ReportLinkSchema, 'The link'), ...errors(400, 401, 404, 409, 413, 415, 429, 503) }
    }
  }, async (request) => {
    const { id } = request.params
    const { format = 'html', expiresIn = REPORT_LINK_TTL_DEFAULT, ...filters } = request.body ?? {}
    const scan = await fastify.owned.read(request, 'scan', id)
    if (!reportable(scan)) throw new ConflictError(`Scan '${id}' is ${scan.status}: its report is ready once it ends`)
    const expiresAt = Date.now() + expiresIn * 1000
    const token = links.make({ scanId: id, format, filters: filters as Record<string, string | number>, keyId: request.principal?.id ?? 'unknown', expiresAt })
    return { url: `/app/scan/${encodeURIComponent(id)}/report/shared?token=${token}`, expiresAt: new Date(expiresAt).toISOString() }
  })

  fastify.get('/:id/report/shared', {
    config: { public: true },
    schema: {
      operationId: 'getSharedScanReport',
      tags: ['scans'],
      // No key: the link's token is the credential.
      security: [],
      summary: 'Open a scan\'s report through a link',
      description: 'The report a link from `POST /app/scan/{id}/report/link` names, without a key: the HTML report inline in the ' +
        'browser, other formats as attachments. A link that was changed, has expired, is for another scan, or whose key was ' +
        'revoked or may no longer read the scan is refused (403 `VULNSCAN_REPORT_LINK_REFUSED`, or 404 when the scan is out of its reach).',
      params: ScanIdParamsSchema,
      querystring: ReportLinkQuerySchema,
      response: {
        200: { description: 'The report', content: { [FORMATS.html.media]: { schema: { type: 'string' } }, [FORMATS.json.media]: { schema: ref(ScanReportSchema) }, [FORMATS.csv.media]: { schema: { type: 'string' } }, [FORMATS.sarif.media]: { schema: { type: 'object' } } } },
        ...errors(400, 403, 404, 409, 429, 503)
      }
    }
  }, async (request, reply) => {
    const { id } = request.params
    let link
    try {
      link = links.read(request.query.token, id)
      request.principal = await linkPrincipal(fastify.store, link.keyId)
    } catch (err) {
      if (err instanceof ReportLinkError) throw new ReportLinkRefusedError(err.message)
      throw err
    }
    const format = (link.format in FORMATS ? link.format : 'html') as ReportFormat
    return await serve(request, reply, id, format, link.filters as { tag?: string, minSeverity?: string, source?: string, minConfidence?: number }, format === 'html')
  })
}

export default reports

// The folder keeps the report route beside the scan routes (autoload ignores other files next to an index.ts);
// the URL is /app/scan/{id}/report, so the folder's name is not a prefix.
export const prefixOverride = '/app/scan'
