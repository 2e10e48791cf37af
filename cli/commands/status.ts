// `vulnscan status <scan-id>`: a scan's state, or with --wait its end and findings.
import { api, integer, print, printJson, usage } from '../context'
import { finishScan } from '../findings'
import { followScan } from '../follow'
import { gateOptions, readGate } from '../gate'
import type { CommandModule } from '../command'

const status: CommandModule = (program, kit) => {
  const cmd = program.command('status')
    .summary('show a scan (add --wait to follow it to the end)')
    .description('Shows a scan\'s state and progress; with --wait follows it to the end through its event stream, then prints its findings.')
    .argument('<scan-id>')
    .option('-w, --wait', 'follow the scan to its end, then print its findings')
    .option('--timeout <seconds>', 'with --wait: give up after this long (exit 3; the scan goes on)')
    .option('--ids', 'with --wait: add the finding ids (for vulnscan decide) to the table')
  for (const o of gateOptions()) cmd.addOption(o)
  kit.hint(cmd, 'status needs one scan id.')
  cmd.action(async (id: string, opts: Record<string, string | boolean | undefined>) => kit.run(cmd, async (ctx) => {
    const timeout = integer('timeout', opts.timeout as string | undefined, 1, 7 * 24 * 3600)
    const gate = readGate(opts as { failOn?: string, minConfidence?: string })
    if (opts.wait === true) {
      const scan = await followScan(ctx, id, { timeoutSeconds: timeout, quiet: ctx.json })
      return await finishScan(ctx, scan, gate, opts.ids === true)
    }
    if (timeout !== undefined) throw usage('--timeout only applies with --wait.')
    const { data: scan } = await api(ctx.client.GET('/app/scan/{id}', { params: { path: { id } } }), ctx.baseUrl)
    const p = scan.progress
    if (ctx.json) printJson(ctx.io, scan)
    else print(ctx.io, `Scan ${scan.id}: ${scan.status}, ${p.percent}% (hosts ${p.hostsDone}/${p.hostsTotal}, ports ${p.portsDone}/${p.portsTotal})${scan.reason ? `; ${scan.reason}` : ''}`)
    return 0
  }))
}

export default status
