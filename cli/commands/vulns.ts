// `vulnscan vulns`: findings across hosts, filtered, as a table, JSON or the server's CSV; --fail-on judges them all.
import { CLI_FINDING_SORT, FINDING_SORTS, FINDING_STATUSES, KEV_CATALOGUES } from '../../lib/vocabulary'
import { api, jsonPage, oneOf, paging, print, printJson, probability, usage } from '../context'
import { allFindings, lastScansOfHosts, uncheckedByScan, uncheckedLine, type FindingQuery } from '../findings'
import { gateOptions, readGate, uncheckedGate, verdict } from '../gate'
import { CONFIDENCES, findingsLine, findingsTable, SEVERITIES } from '../output'
import type { CommandModule } from '../command'
import { download } from '../download'
import { checkedTags } from './tags'

const vulns: CommandModule = (program, kit) => {
  const cmd = program.command('vulns')
    .summary('list findings (open, fixed, reopened, accepted and false positives)')
    .description('Lists findings on every host, filters combined; fixed_by_distribution and potential findings are listed only when asked with --status.')
    .option('--severity <level>', 'only this severity: critical | high | medium | low | none | unknown')
    .option('--kev [catalogue]', `only known exploited CVEs: any catalogue, or ${KEV_CATALOGUES.join(' | ')} (CISA's KEV, ENISA's EU KEV)`)
    .option('--min-epss <0-1>', 'only findings whose EPSS score is at least this')
    .option('--min-cvss <0-10>', 'only findings whose CVSS score is at least this')
    .option('--status <status>', `only this status: ${FINDING_STATUSES.join(' | ')} (fixed_by_distribution and potential are listed only when asked)`)
    .option('--confidence <level>', `only this confidence: ${CONFIDENCES.join(' | ')}`)
    .option('--cve <id>', 'only findings of this CVE')
    .option('--sort <key>', `${FINDING_SORTS.join(' | ')} (default: ${CLI_FINDING_SORT}: severity, then KEV, EPSS, CVSS); risk: KEV first`)
    .option('--order <dir>', 'asc | desc (default: desc)')
    .option('--host <address>', 'only findings on this host')
    .option('--tag <tag>', 'only findings on hosts carrying this tag')
    .option('--csv', 'the server\'s CSV export instead of a table (every row unless --limit)')
    .option('--document <format>', 'cyclonedx | openvex: the findings as a CycloneDX 1.6 BOM or an OpenVEX 0.2 document (every row unless --limit)')
    .option('--output <file>', 'with --document: write it to this file (default: stdout when it is a pipe or file, else vulnscan-findings.<format>.json)')
    .option('--ids', 'add the finding ids (for vulnscan decide) to the table')
    .option('--limit <n>', 'page size, 1 to 500 (default: 50)')
    .option('--offset <n>', 'items to skip (default: 0)')
  for (const o of gateOptions()) cmd.addOption(o)
  cmd.action(async (opts: Record<string, string | boolean | undefined>) => kit.run(cmd, async (ctx) => {
    const str = (k: string): string | undefined => opts[k] as string | undefined
    const severity = oneOf('severity', str('severity'), [...SEVERITIES, 'none', 'unknown'] as const)
    const status = oneOf('status', str('status'), FINDING_STATUSES)
    const sort = oneOf('sort', str('sort'), FINDING_SORTS) ?? CLI_FINDING_SORT
    const order = oneOf('order', str('order'), ['asc', 'desc'] as const)
    const confidence = oneOf('confidence', str('confidence'), CONFIDENCES)
    const kev = opts.kev === true ? true : oneOf('kev', str('kev'), KEV_CATALOGUES)
    const minEpss = probability('min-epss', str('minEpss'))
    const minCvss = str('minCvss') === undefined ? undefined : Number(str('minCvss'))
    if (minCvss !== undefined && (!/^\d+(\.\d+)?$/.test(str('minCvss') ?? '') || minCvss > 10)) throw usage(`--min-cvss must be a number from 0 to 10, not '${str('minCvss')}'`)
    const gate = readGate(opts as { failOn?: string, minConfidence?: string })
    const query: FindingQuery = {
      ...(severity ? { severity } : {}),
      ...(kev !== undefined ? { kev } : {}),
      ...(minEpss !== undefined ? { minEpss } : {}),
      ...(minCvss !== undefined ? { minCvss } : {}),
      ...(status ? { status } : {}),
      ...(confidence ? { confidence } : {}),
      ...(str('cve') !== undefined ? { cveId: str('cve') } : {}),
      sort,
      ...(order ? { order } : {}),
      ...(str('host') !== undefined ? { host: str('host') } : {}),
      ...(str('tag') !== undefined ? { tag: checkedTags([str('tag') as string])[0] } : {})
    }
    const page = paging(opts as { limit?: string, offset?: string })
    if (opts.csv === true && ctx.json) throw usage('--csv and --json exclude each other.')
    const document = oneOf('document', str('document'), ['cyclonedx', 'openvex'] as const)
    if (document !== undefined && (opts.csv === true || ctx.json)) throw usage('--document excludes --csv and --json.')
    if (document === undefined && str('output') !== undefined) throw usage('--output goes with --document.')
    // --fail-on judges every matching finding, not just the page shown.
    const judged = gate.failOn === undefined ? [] : (await allFindings(ctx, query)).items
    let result: number
    if (document !== undefined) {
      await download(ctx, async () => await ctx.client.GET('/vulnerability/report', { params: { query: { ...query, ...page, format: document } }, parseAs: 'stream' }),
        str('output'), `vulnscan-findings.${document === 'cyclonedx' ? 'cdx' : 'openvex'}.json`, `the ${document} document of the findings`)
      result = verdict(ctx.io, judged, gate, true)
    } else if (opts.csv === true) {
      // The server writes the CSV (every matching row unless --limit is given); it is passed on untouched.
      const { data } = await api(ctx.client.GET('/vulnerability', { params: { query: { ...query, ...page } }, headers: { accept: 'text/csv' }, parseAs: 'text' }), ctx.baseUrl)
      ctx.io.stdout.write(data)
      result = verdict(ctx.io, judged, gate, true)
    } else {
      const shown = jsonPage(await api(ctx.client.GET('/vulnerability', { params: { query: { ...query, ...page } } }), ctx.baseUrl))
      if (ctx.json) printJson(ctx.io, shown)
      else print(ctx.io, shown.items.length === 0 ? 'No findings.' : `${findingsTable(shown.items, { ids: opts.ids === true, width: ctx.width })}\n${findingsLine(shown.items, shown.total)}`)
      result = verdict(ctx.io, judged, gate, ctx.json)
    }
    // What the scans behind the list could not check is said with every list (on stderr, so a CSV stays a CSV), and a
    // --fail-on gate is no pass while there is any: like scan --fail-on.
    const unchecked = await uncheckedByScan(ctx, await lastScansOfHosts(ctx, str('host')))
    const line = uncheckedLine(unchecked)
    if (line !== null && !ctx.json) ctx.io.stderr.write(`${line}\n`)
    if (gate.failOn === undefined || result !== 0) return result
    return uncheckedGate(gate, result, str('host') !== undefined ? `the findings of ${str('host')}` : 'the findings', unchecked)
  }))
}

export default vulns
