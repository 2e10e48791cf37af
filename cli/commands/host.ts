// `vulnscan host <address>`: one host with its ports and findings; `vulnscan host report <address>` its CycloneDX or
// OpenVEX document; `vulnscan host delete <address>` forgets it.
import pc from 'picocolors'
import { CLI_FINDING_SORT } from '../../lib/vocabulary'
import { api, oneOf, print, printJson, usage } from '../context'
import { download } from '../download'
import { uncheckedByScan, uncheckedLine } from '../findings'
import { gateOptions, readGate, uncheckedGate, verdict } from '../gate'
import { findingsLine, findingsTable, portsTable } from '../output'
import type { CommandModule } from '../command'

const VEX_FORMATS = ['cyclonedx', 'openvex'] as const

const host: CommandModule = (program, kit) => {
  const group = program.command('host')
    .summary('one host: its ports and its findings; host delete <address> forgets it')
    .description('One host: its ports, versions, CPE names and findings (vulnscan host <address>), or deletes it (vulnscan host delete <address>).')

  const show = group.command('show', { isDefault: true })
    .summary('one host: its ports and its findings')
    .description('Shows one host: its ports, versions and CPE names, and its findings ("show" may be left out: vulnscan host 127.0.0.1).')
    .argument('<address>', 'an IPv4 or IPv6 address')
    .option('--ids', 'add the finding ids (for vulnscan decide) to the table')
  for (const o of gateOptions()) show.addOption(o)
  kit.hint(show, 'host needs one address, e.g. vulnscan host 127.0.0.1')
  show.action(async (address: string, opts: { failOn?: string, minConfidence?: string, ids?: boolean }) => kit.run(show, async (ctx) => {
    const gate = readGate(opts)
    const { data: h } = await api(ctx.client.GET('/host/{address}', { params: { path: { address } } }), ctx.baseUrl)
    const { data: page } = await api(ctx.client.GET('/host/{address}/vulnerability', { params: { path: { address }, query: { limit: 500, sort: CLI_FINDING_SORT } } }), ctx.baseUrl)
    if (ctx.json) {
      printJson(ctx.io, { host: h, findings: page.items })
    } else {
      print(ctx.io, `${pc.bold(h.address)}${h.hostnames.length > 0 ? ` (${h.hostnames.join(', ')})` : ''}: ${h.up ? pc.green('up') : pc.red('down')}, last seen ${h.lastSeen} by scan ${h.lastScanId}`)
      if (h.tags.length > 0) print(ctx.io, `tags: ${h.tags.join(' ')}`)
      print(ctx.io, portsTable(h, ctx.width))
      print(ctx.io, page.items.length === 0 ? 'No findings.' : `${findingsTable(page.items, { ids: opts.ids === true, width: ctx.width })}\n${findingsLine(page.items, page.total)}`)
    }
    const result = verdict(ctx.io, page.items, gate, ctx.json)
    const unchecked = await uncheckedByScan(ctx, [h.lastScanId])
    const line = uncheckedLine(unchecked)
    if (line !== null && !ctx.json) print(ctx.io, line)
    return gate.failOn === undefined ? result : uncheckedGate(gate, result, `host ${h.address}`, unchecked)
  }))

  const report = group.command('report')
    .summary('the host\'s findings as a CycloneDX 1.6 BOM or an OpenVEX 0.2 document')
    .description('Writes the host\'s findings now, across every scan, as a CycloneDX 1.6 BOM (the host, its services and packages as components) or an OpenVEX 0.2 document (one statement per finding; exit 3 when the host has none).')
    .argument('<address>', 'an IPv4 or IPv6 address')
    .option('--format <format>', `${VEX_FORMATS.join(' | ')} (default: cyclonedx)`)
    .option('--output <file>', 'write it to this file (default: stdout when it is a pipe or file; on a terminal, vulnscan-host-<address>.<format>.json in the current directory)')
  kit.hint(report, 'host report needs one address, e.g. vulnscan host report 127.0.0.1 --format openvex')
  report.action(async (address: string, opts: { format?: string, output?: string }) => kit.run(report, async (ctx) => {
    const format = oneOf('format', opts.format, VEX_FORMATS) ?? 'cyclonedx'
    await download(ctx, async () => await ctx.client.GET('/host/{address}/report', { params: { path: { address }, query: { format } }, parseAs: 'stream' }),
      opts.output, `vulnscan-host-${address.replace(/[^A-Za-z0-9._-]/g, '_')}.${format === 'cyclonedx' ? 'cdx' : 'openvex'}.json`, `the ${format} document of host ${address}`)
    return 0
  }))

  const del = group.command('delete')
    .summary('delete a host with its findings and the decisions on them')
    .description('Deletes a host with all its findings, decisions included. A later scan that sees it again starts afresh.')
    .argument('<address>', 'an IPv4 or IPv6 address')
    .option('-y, --yes', 'confirm: the findings and decisions cannot be restored')
  kit.hint(del, 'host delete needs one address, e.g. vulnscan host delete 192.0.2.10 --yes')
  del.action(async (address: string, opts: { yes?: boolean }) => kit.run(del, async (ctx) => {
    if (opts.yes !== true) throw usage(`host delete removes ${address} with its findings and the decisions on them; add --yes to confirm.`)
    await api(ctx.client.DELETE('/host/{address}', { params: { path: { address } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, { deleted: address })
    else print(ctx.io, `Deleted host ${address} and its findings.`)
    return 0
  }))
}

export default host
