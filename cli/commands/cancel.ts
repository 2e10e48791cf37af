// `vulnscan cancel <scan-id>`: stop a queued or running scan; what it found so far stays.
import { api, print, printJson } from '../context'
import type { CommandModule } from '../command'

const cancel: CommandModule = (program, kit) => {
  const cmd = program.command('cancel')
    .summary('cancel a queued or running scan')
    .description('Cancels a queued or running scan: workers stop its sockets within 2 seconds; results written so far stay. A scan that already ended cannot be cancelled (exit 3).')
    .argument('<scan-id>')
  kit.hint(cmd, 'cancel needs one scan id.')
  cmd.action(async (id: string) => kit.run(cmd, async (ctx) => {
    const { data: scan } = await api(ctx.client.DELETE('/app/scan/{id}', { params: { path: { id } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, scan)
    else print(ctx.io, `Scan ${scan.id} cancelled at ${scan.progress.percent}% (hosts ${scan.progress.hostsDone}/${scan.progress.hostsTotal}).`)
    return 0
  }))
}

export default cancel
