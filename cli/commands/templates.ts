// `vulnscan templates`: the network templates the service runs (the project's and TEMPLATES_DIR's), with the
// services they are bound to, which are intrusive, and those refused with the reason.
import { api, print, printJson } from '../context'
import { colourSeverity, fittedTable } from '../output'
import type { CommandModule } from '../command'
import pc from 'picocolors'

const templates: CommandModule = (program, kit) => {
  const cmd = program.command('templates')
    .summary('the network templates the service runs, and those it refused')
    .description('Lists the Nuclei-format network templates loaded (the project\'s own and those in TEMPLATES_DIR): id, severity, the services they run on, whether they are intrusive (run only when a scan sets options.intrusive) and signed; then the templates refused, with the reason.')
  cmd.action(async () => kit.run(cmd, async (ctx) => {
    const { data } = await api(ctx.client.GET('/templates'), ctx.baseUrl)
    if (ctx.json) {
      printJson(ctx.io, data)
      return 0
    }
    const rows = data.items.map((tpl) => [tpl.id, colourSeverity(tpl.severity === 'info' ? 'none' : tpl.severity), tpl.services.join(', '),
      tpl.intrusive ? pc.yellow('intrusive') : '', tpl.source, tpl.signed, tpl.cveIds.join(', ')])
    print(ctx.io, data.items.length === 0 ? 'No templates loaded.' : fittedTable(['id', 'severity', 'services', 'intrusive', 'source', 'signed', 'CVEs'], rows, [10, 9, 8, 8, 4, 3, 5], ctx.width))
    for (const r of data.refused) print(ctx.io, pc.yellow(`refused ${r.file}${r.id !== undefined ? ` (${r.id})` : ''}: ${r.reason}`))
    print(ctx.io, `${data.total} template${data.total === 1 ? '' : 's'} loaded, ${data.refused.length} refused`)
    return 0
  }))
}

export default templates
