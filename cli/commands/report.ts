// `vulnscan report <scan-id>`: a finished scan's report (HTML, SARIF, CSV or JSON), to a file or to stdout,
// streamed as the server writes it.
import { createWriteStream } from 'node:fs'
import { Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { REPORT_FORMATS, REPORT_SEVERITIES } from '../../lib/reports/gather'
import { answerError, CliError, EXIT, networkError, oneOf, print } from '../context'
import type { CommandModule } from '../command'

const report: CommandModule = (program, kit) => {
  const cmd = program.command('report')
    .summary('download a finished scan\'s report (html, sarif, csv or json)')
    .description('Writes the report of a completed, failed or cancelled scan: html (one self-contained page to read or print), sarif (SARIF 2.1.0 for code-scanning tools), csv (the findings) or json (scan, hosts and findings). A scan still queued or running has no report yet (exit 3).')
    .argument('<scan-id>')
    .option('--format <format>', `${REPORT_FORMATS.join(' | ')} (default: html)`)
    .option('--output <file>', 'write the report to this file (default: stdout when it is a pipe or file; on a terminal, vulnscan-report-<scan-id>.<format> in the current directory)')
    .option('--tag <tag>', 'only hosts carrying this tag, and their findings')
    .option('--min-severity <level>', `only findings at least this severe: ${[...REPORT_SEVERITIES].reverse().join(' | ')}`)
  kit.hint(cmd, 'report needs one scan id.')
  cmd.action(async (id: string, opts: { format?: string, output?: string, tag?: string, minSeverity?: string }) => kit.run(cmd, async (ctx) => {
    const format = oneOf('format', opts.format, REPORT_FORMATS) ?? 'html'
    const minSeverity = oneOf('min-severity', opts.minSeverity, REPORT_SEVERITIES)
    const query = { format, ...(opts.tag !== undefined ? { tag: opts.tag } : {}), ...(minSeverity !== undefined ? { minSeverity } : {}) }
    let result
    try {
      result = await ctx.client.GET('/app/scan/{id}/report', { params: { path: { id }, query }, parseAs: 'stream' })
    } catch (err) {
      throw networkError(err, ctx.baseUrl)
    }
    const { response } = result
    if (!response.ok) throw answerError(response, result.error)
    const body = result.data as ReadableStream<Uint8Array> | null | undefined
    if (body === null || body === undefined) throw new CliError(`vulnscan answered ${response.status} without a report`, EXIT.API)
    const source = Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>)
    // A terminal would show the HTML's markup (or a screenful of JSON): the report goes to a file it names instead.
    const output = opts.output ?? (ctx.io.stdout.isTTY === true ? `vulnscan-report-${id.replace(/[^A-Za-z0-9._-]/g, '_')}.${format}` : undefined)
    if (output === undefined) {
      // stdout stays open for whatever follows; only the report's bytes go to it.
      await pipeline(source, new Writable({ write: (chunk, _enc, done) => { ctx.io.stdout.write(chunk, done) } }))
      return 0
    }
    let bytes = 0
    source.on('data', (chunk: Buffer) => { bytes += chunk.length })
    await pipeline(source, createWriteStream(output))
    print(ctx.io, `Wrote the ${format} report of scan ${id} to ${output} (${bytes} bytes).`)
    return 0
  }))
}

export default report
