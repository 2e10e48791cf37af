// `vulnscan report <scan-id>`: a finished scan's report (HTML, SARIF, CSV, JSON, CycloneDX or OpenVEX), to a file or
// to stdout, streamed as the server writes it; or, with --link, a short-lived link a browser opens without a key.
import { REPORT_FORMATS, REPORT_SEVERITIES } from '../../lib/reports/gather'
import { answerError, integer, networkError, oneOf, print, printJson } from '../context'
import { download } from '../download'
import type { CommandModule } from '../command'

const report: CommandModule = (program, kit) => {
  const cmd = program.command('report')
    .summary('download a finished scan\'s report (html, sarif, csv, json, cyclonedx or openvex), or a link to it')
    .description('Writes the report of a completed, failed or cancelled scan: html (one self-contained page to read or print), sarif (SARIF 2.1.0 for code-scanning tools), csv (the findings), json (scan, hosts and findings), cyclonedx (CycloneDX 1.6) or openvex (OpenVEX 0.2). With --link, prints a link that opens the report in a browser without a key until it expires (it works only while this key may read the scan). A scan still queued or running has no report yet (exit 3).')
    .argument('<scan-id>')
    .option('--format <format>', `${REPORT_FORMATS.join(' | ')} (default: html)`)
    .option('--output <file>', 'write the report to this file (default: stdout when it is a pipe or file; on a terminal, vulnscan-report-<scan-id>.<format> in the current directory)')
    .option('--tag <tag>', 'only hosts carrying this tag, and their findings')
    .option('--min-severity <level>', `only findings at least this severe: ${[...REPORT_SEVERITIES].reverse().join(' | ')}`)
    .option('--link', 'print a short-lived link to the report instead of downloading it')
    .option('--expires <seconds>', 'how long the --link works: 60 to 3600 seconds (default: 600)')
  kit.hint(cmd, 'report needs one scan id.')
  cmd.action(async (id: string, opts: { format?: string, output?: string, tag?: string, minSeverity?: string, link?: boolean, expires?: string }) => kit.run(cmd, async (ctx) => {
    const format = oneOf('format', opts.format, REPORT_FORMATS) ?? 'html'
    const minSeverity = oneOf('min-severity', opts.minSeverity, REPORT_SEVERITIES)
    const query = { format, ...(opts.tag !== undefined ? { tag: opts.tag } : {}), ...(minSeverity !== undefined ? { minSeverity } : {}) }
    if (opts.link === true) {
      const expiresIn = integer('expires', opts.expires, 60, 3600)
      let made
      try {
        made = await ctx.client.POST('/app/scan/{id}/report/link', { params: { path: { id } }, body: { ...query, ...(expiresIn !== undefined ? { expiresIn } : {}) } })
      } catch (err) {
        throw networkError(err, ctx.baseUrl)
      }
      if (made.data === undefined) throw answerError(made.response, made.error)
      if (ctx.json) printJson(ctx.io, { ...made.data, url: `${ctx.baseUrl}${made.data.url}` })
      else print(ctx.io, `${ctx.baseUrl}${made.data.url}\n(works until ${made.data.expiresAt}, while this key may read the scan; anyone holding it can read the report)`)
      return 0
    }
    await download(ctx, async () => await ctx.client.GET('/app/scan/{id}/report', { params: { path: { id }, query }, parseAs: 'stream' }),
      opts.output, `vulnscan-report-${id.replace(/[^A-Za-z0-9._-]/g, '_')}.${format}`, `the ${format} report of scan ${id}`)
    return 0
  }))
}

export default report
