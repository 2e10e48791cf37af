// `vulnscan scans`: the scans, newest first.
import { SCAN_STATUSES } from '../../lib/vocabulary'
import { api, oneOf, paging, print, printJson } from '../context'
import type { CommandModule } from '../command'

const scans: CommandModule = (program, kit) => {
  const cmd = program.command('scans')
    .summary('list scans, newest first')
    .description('Lists scans, newest first.')
    .option('--status <state>', `only scans in this state: ${SCAN_STATUSES.join(' | ')}`)
    .option('--limit <n>', 'page size, 1 to 500 (default: 50)')
    .option('--offset <n>', 'items to skip (default: 0)')
  cmd.action(async (opts: { status?: string, limit?: string, offset?: string }) => kit.run(cmd, async (ctx) => {
    const status = oneOf('status', opts.status, SCAN_STATUSES)
    const { data } = await api(ctx.client.GET('/app/scan', { params: { query: { status, ...paging(opts) } } }), ctx.baseUrl)
    if (ctx.json) printJson(ctx.io, data)
    else {
      for (const s of data.items) print(ctx.io, `${s.id}  ${s.status.padEnd(9)}  ${String(s.progress.percent).padStart(3)}%  ${s.template.padEnd(9)}  p${s.priority}  ${s.createdAt}  ${[...s.targets.map((t) => t.value), ...(s.targetTags ?? []).map((tag) => `tag:${tag}`)].join(' ')}`)
      print(ctx.io, `${data.items.length} of ${data.total} scans`)
    }
    return 0
  }))
}

export default scans
